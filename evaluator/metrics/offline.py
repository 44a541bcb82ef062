"""A metric's offline score in the heuristic set a run chose (`--heuristics`): one door for every set.

- "ragmeter" (LEXICAL, the default): the metric's lexical scorer;
- "jaccard" (SEED): the seed's token-overlap scorer, kept to reproduce the seed's numbers;
- "embedding" (EMBEDDING): sentence-embedding similarity blended with the lexical scorer where it paid
  for itself (embeddings.py). Its module, and the onnxruntime model behind it, load on first use, so
  ragmeter runs without the extra.

A metric names its scorer per set in `Metric.heuristics` (faithfulness.py, answer_relevancy.py, ...);
a set it has no scorer in uses its lexical one. `SetHeuristic` is what such a metric's `heuristic`
becomes: units spelled one way and garbage capped (sanity.py), the seed's set as it was.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Tuple

from ..model import EvalSample
from .heuristics import EMBEDDING, LEXICAL, SEED, Heuristic, HeuristicScore
from .sanity import checked
from .units import with_units_spelled

SETS = (SEED, LEXICAL, EMBEDDING)


def set_score(heuristics: Mapping[str, Heuristic], sample: EvalSample, lang: str, kind: str) -> HeuristicScore:
    """The raw score of the metric whose scorers are `heuristics` in the set named `kind`."""
    if kind not in SETS:
        raise ValueError(f"unknown heuristic set {kind!r}; choose one of {sorted(SETS)}")
    if kind == EMBEDDING:
        from .embeddings import score as embedding_score

        return embedding_score(heuristics, sample, lang)
    return heuristics.get(kind, heuristics[LEXICAL])(sample, lang)


@dataclass(frozen=True)
class SetHeuristic:
    """A metric's `heuristic` made from its scorer per set: (sample, lang, set name) -> HeuristicScore,
    units spelled one way and garbage capped in the texts it reads as prose (the seed's set as is)."""

    heuristics: Mapping[str, Heuristic]
    prose: Tuple[str, ...] = ()

    def __call__(self, sample: EvalSample, lang: str, kind: str) -> HeuristicScore:
        if kind == SEED:
            return set_score(self.heuristics, sample, lang, kind)
        return checked(self.prose, sample, set_score(self.heuristics, with_units_spelled(sample), lang, kind))
