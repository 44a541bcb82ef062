"""ragmeter's library: score RAG answers on five metrics with visible reasoning.

    from evaluator import RAGEvaluator, OfflineJudge, load_dataset
    report = RAGEvaluator(OfflineJudge()).evaluate_dataset(load_dataset("sample_data/sample.jsonl"))
    report.print_report()
"""
from .datasets import load_dataset
from .errors import DatasetError
from .evaluation import OfflineJudge, RAGEvaluator
from .model import EvalReport, EvalResult, EvalSample, MetricScore
from .openai_judge import OpenAIJudge

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
]
