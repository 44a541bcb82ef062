"""The order in which a run's samples are put before reviewers.

Each order is a function (indexed results, metric, reviewed counts, options) -> sample indices:
- worst: lowest score on the metric first (where the judge's low scores should be checked);
- random: a seeded random sample of N, the only order whose reviewed mean estimates the whole
  run's mean without bias (the others pick samples on purpose);
- gap: largest |LLM part − heuristic part| first (the judge and the lexical check disagree);
- noise: largest spread of the judge over repeats first (the judge disagrees with itself);
- unreviewed: samples with no review on the metric yet, in run order;
- informative: a seeded priority sample weighted by the judge's uncertainty (its spread over
  repeats, else its LLM/heuristic gap or how close a judged score is to 0.5; heuristic-only scores
  carry no such signal and weigh alike), so labels go where they shrink the corrected
  interval fastest; the weights are recomputed from the stored scores and seed, which keeps the
  corrected mean unbiased (evaluator.analysis.inference, active inference).
Samples the metric skipped are never queued: there is no score to review.
"""
from __future__ import annotations

import random
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..analysis.inference import PrioritySample, priorities, priority_sample, sampling_weights, uncertainty
from ..model import METHOD_BLEND, METHOD_FLAGGED, METHOD_LLM, EvalResult, MetricScore

Indexed = Sequence[Tuple[int, EvalResult]]
ORDERS = {
    "worst": "worst first",
    "random": "random sample of N (unbiased estimate)",
    "gap": "largest gap between LLM and heuristic",
    "noise": "largest judge noise over repeats",
    "unreviewed": "not yet reviewed",
    "informative": "most informative first (unbiased, weighted)",
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


JUDGED = (METHOD_BLEND, METHOD_LLM, METHOD_FLAGGED)  # scores a model gave: their distance from 0.5 means something


def row_uncertainty(ms: MetricScore) -> float:
    """The judge's uncertainty on one row: its spread over repeats; else the gap between its LLM and
    heuristic parts, or how near a judged score is to 0.5. A lexical heuristic's score is not a
    probability, so heuristic-only rows get one flat weight: bench/inference.py measured that weighting
    by its distance from 0.5 costs 1.1-1.3x the labels of a random draw."""
    if ms.llm_std:
        return ms.llm_std
    if ms.method not in JUDGED:
        return 0.5
    gap = abs(ms.llm_score - ms.heuristic_score) if ms.llm_score is not None and ms.heuristic_score is not None else 0
    return max(uncertainty(ms.score), gap)


def informative_weights(scored: Sequence[Tuple[int, MetricScore]]) -> List[float]:
    """Each scored row's sampling weight for the informative order (same scores, same weights)."""
    return sampling_weights([row_uncertainty(ms) for _, ms in scored])


def _informative(scored: List[Tuple[int, MetricScore]], seed: int = DEFAULT_SEED, **_: object) -> List[int]:
    prios = priorities(informative_weights(scored), seed)
    return [scored[j][0] for j in sorted(range(len(scored)), key=lambda j: (-prios[j], j))]


def informative_sample(results: Indexed, metric: str, reviewed: Sequence[int],
                       seed: int = DEFAULT_SEED) -> Tuple[List[int], PrioritySample]:
    """(the scored rows' indices, the priority sample the reviewed rows make): the sample's
    probabilities are keyed by position in that list, ready for weighted_corrected_mean."""
    scored = _scored(results, metric)
    weights = informative_weights(scored)
    position = {index: j for j, (index, _) in enumerate(scored)}
    drawn = [position[i] for i in reviewed if i in position]
    return [i for i, _ in scored], priority_sample(weights, priorities(weights, seed), drawn)


_ORDER_FUNCTIONS: Dict[str, Callable[..., List[int]]] = {
    "worst": _worst, "random": _random, "gap": _gap, "noise": _noise, "unreviewed": _unreviewed,
    "informative": _informative,
}
INFORMATIVE = "informative"


def queue_label(order: str, seed: int) -> str:
    """What a review records as its queue: the order, and for the informative order its seed (the
    weights are rebuilt from it)."""
    return f"{INFORMATIVE}:{seed}" if order == INFORMATIVE else order


def informative_seed(queue: str) -> Optional[int]:
    """The seed of an informative queue label, None for any other queue."""
    name, _, seed = queue.partition(":")
    return int(seed) if name == INFORMATIVE and seed.isdigit() else None


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
