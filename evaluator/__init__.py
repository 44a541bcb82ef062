"""ragmeter's library: score RAG answers on five metrics (or those you choose or define) with visible reasoning.

    from evaluator import RAGEvaluator, OfflineJudge, load_dataset
    report = RAGEvaluator(OfflineJudge()).evaluate_dataset(load_dataset("sample_data/sample.jsonl"))
    report.print_report()

The package reads like a table of contents, one layer per line, low to high. A module imports only
its own layer and the layers listed before it (tests/test_structure.py holds the same table):

    core         model.py (EvalSample in; MetricScore, EvalResult, EvalReport, Verdict out), errors.py (every
                 error ragmeter raises, drawn as a tree), text.py, conversation.py, safetext.py, bounded.py,
                 plugins.py (the one entry-point loader), retrying.py (the one retry loop), environment.py
                 (the one reader of the process environment, and the one check that a judge's key is set here)
    io/          files in: datasets, rows of any format, dialects, conversations; records, frames, redaction
    judges/      who gives the scores: the judge registry (built-ins, plugins), the Judge protocol, the
                 resilient wrapper (retries, rate limit, cache, usage), health, offline, OpenAI-compatible
    metrics/     what is scored: the metric registry (built-ins, rubrics, plugins), prompts, parsing,
                 heuristics, reviewers' few-shot examples
    store/       the run history on SQLite or PostgreSQL: runs, results, reviews
    analysis/    reading the scores: statistics, bands, advice, agreement, judge trust, run comparison
    scoring/     RAGEvaluator, one scoring pass, RunConfig, the verdict, cost estimates, the Batch API
    engines/     scoring past one process (Ray)     report/   CSV, JSON and the HTML report
    targets/     the user's pipeline, called per question     config.py   the server's configuration file
    team/        a shared server's trust: who a request is, who may make each write, what it needs to start
    review/      people reviewing the judge          generate/ test sets from documents
    runs/        the one run path (Run: new, resume, rescore, stop) for the CLI and the dashboard
    cli/         the `ragmeter` command: parses and prints over service/ (and __main__.py)   demo/   a demo pipeline
    service/     the application layer under both doors: its use cases, for the CLI and for pages/ and app.py
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
    "corrected_mean": "analysis.inference",  # a judge's mean corrected by a random sample of human labels
    "TargetConfig": "targets",
    "RowCounts": "scoring.verdict",
    "Verdict": "scoring.verdict",
    "verdict": "scoring.verdict",  # evaluator.verdict(report): how a run ended, the Verdict the CLI exits with
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
    "corrected_mean",
    "load_dataset",
    "load_rubrics",
    "register",
    "register_judge",
    "score_frame",
    "summarize",
    "verdict",
]
