"""ragmeter's library: score RAG answers on five metrics (or those you choose or define) with visible reasoning.

    from evaluator import RAGEvaluator, OfflineJudge, load_dataset
    report = RAGEvaluator(OfflineJudge()).evaluate_dataset(load_dataset("sample_data/sample.jsonl"))
    report.print_report()

The package reads like a table of contents (each folder's __init__ says what it holds):
    model.py       the data: EvalSample in; MetricScore, EvalResult, EvalReport out
    errors.py      every error ragmeter raises on purpose, drawn as a tree
    plugins.py     the one entry-point loader every plugin kind uses (judges, metrics, ...)
    retrying.py    the one retry loop every outside call uses (the judge wrapper, targets)
    judges/        who gives the scores: the judge registry (built-ins, plugins), the Judge protocol, the
                   resilient wrapper (retries, rate limit, cache, usage), offline, OpenAI-compatible
    metrics/       what is scored: the metric registry (built-ins, rubrics, plugins), prompts, parsing, heuristics
    evaluation.py  RAGEvaluator: score one sample or a dataset, concurrently, in order
    runs.py        the one run path (RunConfig, Run) used by the CLI and the dashboard
    batching.py    scoring through the OpenAI Batch API (a run with RunConfig(batch=True))
    history.py     every run saved in SQLite, resumable
    io/            files in and out: datasets, records, exports, redaction
    analysis/      reading the scores: statistics, bands, advice, agreement, run comparison
    verdict.py     how a run ended (ok, thresholds missed, judge/target failed, nothing scored): one decision
    scoring_pass.py  the start and end every scoring pass shares (progress, usage, judge health)
    cli.py         the `ragmeter` command
"""
import typing

from .errors import (
    DatasetError,
    HistoryError,
    JudgeConfigError,
    JudgeError,
    JudgeFailed,
    MetricError,
    MissingExtra,
    RagmeterError,
    TargetConfigError,
    TargetError,
)
from .scoring.evaluation import RAGEvaluator
from .judges.base import Judge
from .judges.offline import OfflineJudge
from .metrics.registry import Metric, register
from .metrics.rubric import RubricMetric, load_rubrics
from .model import EvalReport, EvalResult, EvalSample, MetricScore

# Imported on first use: OpenAIJudge pulls in the `openai` client (slow to import and not needed
# offline); the others pull in SQLite, file readers and exporters a scoring-only user never needs.
_LAZY = {
    "OpenAIJudge": "judges.openai",
    "load_dataset": "io.datasets",
    "Run": "runs",
    "RunConfig": "runs",
    "RunStore": "store.history",
    "score_frame": "engines.partition",
    "summarize": "analysis.stats",
    "TargetConfig": "targets",
    "RowCounts": "scoring.verdict",
    "Verdict": "scoring.verdict",  # Verdict.of(report); the module name `verdict` would shadow a function export
    "JudgeEntry": "judges.registry",  # a judge kind: register_judge(JudgeEntry(...)) or a ragmeter.judges plugin
    "register_judge": "judges.registry",
}


def __getattr__(name: str) -> typing.Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'evaluator' has no attribute {name!r}")


__all__ = [
    "DatasetError",
    "EvalReport",
    "EvalResult",
    "EvalSample",
    "HistoryError",
    "Judge",
    "JudgeConfigError",
    "JudgeEntry",
    "JudgeError",
    "JudgeFailed",
    "Metric",
    "MetricError",
    "MetricScore",
    "MissingExtra",
    "OfflineJudge",
    "OpenAIJudge",
    "RAGEvaluator",
    "RagmeterError",
    "RowCounts",
    "RubricMetric",
    "Run",
    "RunConfig",
    "RunStore",
    "TargetConfig",
    "TargetConfigError",
    "TargetError",
    "Verdict",
    "load_dataset",
    "load_rubrics",
    "register",
    "register_judge",
    "score_frame",
    "summarize",
]
