"""The named heuristic sets a run can choose (`--heuristics`), and scoring one metric with one of them.

- "ragmeter" (default): the lexical scorers of heuristics.py;
- "jaccard": the seed's token-overlap scorers, kept to reproduce the seed's numbers;
- "embedding": sentence-embedding similarity blended with the lexical scorers (embeddings.py). Its
  module, and the onnxruntime model behind it, load on first use, so ragmeter runs without the extra.

This module sits above both heuristics.py and embeddings.py, so neither imports the other's caller.
"""
from __future__ import annotations

from typing import Dict, List

from ..model import EvalSample
from .heuristics import JACCARD, RAGMETER, Heuristic, HeuristicScore
from .heuristics import context_relevances as lexical_relevances

DEFAULT_HEURISTICS = "ragmeter"


def _embedding(metric: str) -> Heuristic:
    def score(s: EvalSample, lang: str) -> HeuristicScore:
        from .embeddings import score as embedding_score

        return embedding_score(metric, s, lang)
    return score


HEURISTIC_SETS: Dict[str, Dict[str, Heuristic]] = {
    "jaccard": JACCARD,
    "ragmeter": RAGMETER,
    "embedding": {m: _embedding(m) for m in RAGMETER},
}


def heuristic_score(metric: str, sample: EvalSample, lang: str = "en", kind: str = DEFAULT_HEURISTICS) -> HeuristicScore:
    """Score one metric of one sample with the named heuristic set."""
    try:
        table = HEURISTIC_SETS[kind]
    except KeyError:
        raise ValueError(f"unknown heuristic set {kind!r}; choose one of {sorted(HEURISTIC_SETS)}") from None
    return table[metric](sample, lang)


def context_relevances(s: EvalSample, lang: str = "en", kind: str = DEFAULT_HEURISTICS) -> List[float]:
    """Relevance in [0, 1] of each retrieved context to the question, as the named set sees it."""
    if kind == "embedding":
        from .embeddings import context_relevances as embedding_relevances

        return embedding_relevances(s, lang)
    return lexical_relevances(s, lang, kind)
