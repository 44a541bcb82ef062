"""The order in which a run's samples are put before reviewers.

Each order is a function (indexed results, metric, reviewed counts, options) -> sample indices:
- worst: lowest score on the metric first (where the judge's low scores should be checked);
- random: a seeded random sample of N, the only order whose reviewed mean estimates the whole
  run's mean without bias (the others pick samples on purpose);
- gap: largest |LLM part − heuristic part| first (the judge and the lexical check disagree);
- noise: largest spread of the judge over repeats first (the judge disagrees with itself);
- unreviewed: samples with no review on the metric yet, in run order.
Samples the metric skipped are never queued: there is no score to review.
"""
from __future__ import annotations

import random
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..model import EvalResult, MetricScore

Indexed = Sequence[Tuple[int, EvalResult]]
ORDERS = {
    "worst": "worst first",
    "random": "random sample of N (unbiased estimate)",
    "gap": "largest gap between LLM and heuristic",
    "noise": "largest judge noise over repeats",
    "unreviewed": "not yet reviewed",
}
DEFAULT_SEED = 0


def _scored(results: Indexed, metric: str) -> List[Tuple[int, MetricScore]]:
    out = []
    for index, result in results:
        ms = result.scores.get(metric)
        if ms is not None and not ms.skipped:
            out.append((index, ms))
    return out


def _worst(scored: List[Tuple[int, MetricScore]], **_: object) -> List[int]:
    return [i for i, ms in sorted(scored, key=lambda p: (p[1].score, p[0]))]


def _gap(scored: List[Tuple[int, MetricScore]], **_: object) -> List[int]:
    both = [(abs(ms.llm_score - ms.heuristic_score), i) for i, ms in scored
            if ms.llm_score is not None and ms.heuristic_score is not None]
    return [i for _, i in sorted(both, key=lambda p: (-p[0], p[1]))]


def _noise(scored: List[Tuple[int, MetricScore]], **_: object) -> List[int]:
    noisy = [(ms.llm_std, i) for i, ms in scored if ms.llm_std is not None]
    return [i for _, i in sorted(noisy, key=lambda p: (-p[0], p[1]))]


def _random(scored: List[Tuple[int, MetricScore]], n: Optional[int] = None, seed: int = DEFAULT_SEED,
            **_: object) -> List[int]:
    indices = [i for i, _ in scored]
    picked = random.Random(seed).sample(indices, min(len(indices), n if n is not None else len(indices)))
    return picked


def _unreviewed(scored: List[Tuple[int, MetricScore]], reviewed: Mapping[int, int] = {}, **_: object) -> List[int]:
    return [i for i, _ in scored if not reviewed.get(i)]


_ORDER_FUNCTIONS: Dict[str, Callable[..., List[int]]] = {
    "worst": _worst, "random": _random, "gap": _gap, "noise": _noise, "unreviewed": _unreviewed,
}


def review_queue(results: Indexed, metric: str, order: str = "worst", *, n: Optional[int] = None,
                 seed: int = DEFAULT_SEED, reviewed: Optional[Mapping[int, int]] = None) -> List[int]:
    """The sample indices to review on `metric`, in `order` (see the module docstring).

    `n` caps the queue (for "random", it is the sample size); `reviewed` maps index -> number of
    reviews already given (for "unreviewed"). ValueError for an unknown order.
    """
    if order not in _ORDER_FUNCTIONS:
        raise ValueError(f"unknown review order {order!r}; choose one of {', '.join(ORDERS)}")
    queue = _ORDER_FUNCTIONS[order](_scored(results, metric), n=n, seed=seed, reviewed=reviewed or {})
    return queue if n is None else queue[:n]
