"""ragmeter's library: score RAG answers on five metrics with visible reasoning.

    from evaluator import RAGEvaluator, OfflineJudge, load_dataset
    report = RAGEvaluator(OfflineJudge()).evaluate_dataset(load_dataset("sample_data/sample.jsonl"))
    report.print_report()
"""
from typing import Any

from .errors import DatasetError
from .evaluation import RAGEvaluator
from .judges.offline import OfflineJudge
from .model import EvalReport, EvalResult, EvalSample, MetricScore

# Imported on first use: OpenAIJudge pulls in the `openai` client (slow to import and not
# needed offline); load_dataset pulls in the CSV/JSON readers; score_frame pandas.
_LAZY = {"OpenAIJudge": "judges.openai", "load_dataset": "io.datasets", "score_frame": "engines.partition"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'evaluator' has no attribute {name!r}")


__all__ = [
    "DatasetError",
    "EvalReport",
    "EvalResult",
    "EvalSample",
    "MetricScore",
    "OfflineJudge",
    "OpenAIJudge",
    "RAGEvaluator",
    "load_dataset",
    "score_frame",
]
