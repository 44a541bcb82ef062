"""The named heuristic sets a run can choose (`--heuristics`), and scoring one registered metric with one.

- "ragmeter" (default): each metric's lexical scorer;
- "jaccard": the seed's token-overlap scorers, kept to reproduce the seed's numbers;
- "embedding": sentence-embedding similarity blended with the lexical scorers (embeddings.py). Its
  module, and the onnxruntime model behind it, load on first use, so ragmeter runs without the extra.

Each metric names its own scorer per set (`Metric.heuristics`, in its module; offline.py runs them):
`HEURISTIC_SETS[set]` is a view of the registered metrics that have one, never a table of its own.
The raw scores here are what bench/validity.py measures; a run's scores also have units spelled
one way and garbage capped (`Metric.heuristic`).
"""
from __future__ import annotations

from typing import Dict, Iterator, Mapping

from ..model import EvalSample
from .context_precision import context_relevances  # noqa: F401  (each context's relevance, per set: public here)
from .heuristics import LEXICAL, Heuristic, HeuristicScore
from .offline import SETS, set_score
from .registry import METRIC_REGISTRY

DEFAULT_HEURISTICS = LEXICAL


class HeuristicSet(Mapping[str, Heuristic]):
    """One heuristic set as metric name -> raw scorer (sample, lang): a view of the registered metrics
    that have heuristics, so a metric (or plugin) registered later is in it too."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __getitem__(self, name: str) -> Heuristic:
        metric = METRIC_REGISTRY.get(name)
        if metric is None or not metric.heuristics:
            raise KeyError(name)
        scorers = metric.heuristics

        def score(sample: EvalSample, lang: str) -> HeuristicScore:
            return set_score(scorers, sample, lang, self.kind)
        return score

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, m in METRIC_REGISTRY.items() if m.heuristics])

    def __len__(self) -> int:
        return sum(1 for _ in self)


HEURISTIC_SETS: Dict[str, HeuristicSet] = {kind: HeuristicSet(kind) for kind in SETS}


def heuristic_score(metric: str, sample: EvalSample, lang: str = "en", kind: str = DEFAULT_HEURISTICS) -> HeuristicScore:
    """Score one metric of one sample with the named heuristic set."""
    try:
        table = HEURISTIC_SETS[kind]
    except KeyError:
        raise ValueError(f"unknown heuristic set {kind!r}; choose one of {sorted(HEURISTIC_SETS)}") from None
    return table[metric](sample, lang)
