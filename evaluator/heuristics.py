"""Lexical heuristics: the offline judge, and the 30% stabiliser blended with every LLM score.

Each heuristic is a pure function (sample, lang) -> HeuristicScore. They live in named sets so
that a set can be measured alone (bench/validity.py) and the seed's Jaccard set can still be
selected to reproduce the seed's numbers.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Iterable

from .model import EvalSample
from .text import words


@dataclass(frozen=True)
class HeuristicScore:
    score: float
    reasoning: str


Heuristic = Callable[[EvalSample, str], HeuristicScore]


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 0.0


def _jaccard_score(left: str, right: str, what: str) -> HeuristicScore:
    value = round(jaccard(words(left), words(right)), 4)
    return HeuristicScore(value, f"Jaccard token overlap of {what}: {value:.3f}.")


def _seed_faithfulness(s: EvalSample, lang: str) -> HeuristicScore:
    return _jaccard_score(s.answer, " ".join(s.contexts), "answer and contexts")


def _seed_relevancy(s: EvalSample, lang: str) -> HeuristicScore:
    return _jaccard_score(s.question, s.answer, "question and answer")


def _seed_precision(s: EvalSample, lang: str) -> HeuristicScore:
    if not s.contexts:
        return HeuristicScore(0.0, "No contexts retrieved.")
    values = [jaccard(words(s.question), words(c)) for c in s.contexts]
    value = round(sum(values) / len(values), 4)
    return HeuristicScore(value, f"Mean Jaccard overlap of question and each context: {value:.3f}.")


def _seed_recall(s: EvalSample, lang: str) -> HeuristicScore:
    return _jaccard_score(s.ground_truth or "", " ".join(s.contexts), "reference and contexts")


def _seed_correctness(s: EvalSample, lang: str) -> HeuristicScore:
    return _jaccard_score(s.answer, s.ground_truth or "", "answer and reference")


JACCARD: Dict[str, Heuristic] = {
    "faithfulness": _seed_faithfulness,
    "answer_relevancy": _seed_relevancy,
    "context_precision": _seed_precision,
    "context_recall": _seed_recall,
    "answer_correctness": _seed_correctness,
}

HEURISTIC_SETS: Dict[str, Dict[str, Heuristic]] = {
    "jaccard": JACCARD,
    "ragmeter": JACCARD,  # replaced by the reworked scorers (issue: metric validity)
}
DEFAULT_HEURISTICS = "ragmeter"


def heuristic_score(metric: str, sample: EvalSample, lang: str = "en", kind: str = DEFAULT_HEURISTICS) -> HeuristicScore:
    """Score one metric of one sample with the named heuristic set."""
    try:
        table = HEURISTIC_SETS[kind]
    except KeyError:
        raise ValueError(f"unknown heuristic set {kind!r}; choose one of {sorted(HEURISTIC_SETS)}") from None
    return table[metric](sample, lang)
