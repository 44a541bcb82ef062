"""Comparing two runs: per-metric mean deltas with a paired bootstrap CI, and the samples that moved most.

Samples are paired by sample_id (by position for samples without one), so two runs of the same
dataset under different judges, prompts or retrievers can be set side by side.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from ..history import RunInfo, RunStore
from ..model import EvalReport, EvalResult
from .stats import paired_bootstrap_ci

TOP_MOVERS = 10


@dataclass
class MetricDelta:
    """How one metric changed from run A to run B, over the samples scored in both."""

    metric: str
    mean_a: Optional[float]
    mean_b: Optional[float]
    delta: Optional[float]
    ci_low: Optional[float]
    ci_high: Optional[float]
    n_pairs: int

    @property
    def significant(self) -> bool:
        """True when the 95% interval of the delta excludes 0."""
        return self.ci_low is not None and self.ci_high is not None and (self.ci_low > 0 or self.ci_high < 0)


@dataclass
class Mover:
    """One sample's score of one metric in both runs."""

    sample_id: str
    metric: str
    a: float
    b: float
    delta: float
    question: str = ""


@dataclass
class RunComparison:
    """Run B against run A: per-metric deltas and the samples that moved most."""

    run_a: RunInfo
    run_b: RunInfo
    metrics: List[MetricDelta]
    movers: List[Mover]
    n_paired: int
    only_a: int
    only_b: int


def compare_runs(store: RunStore, run_a: str, run_b: str) -> RunComparison:
    """Run B against run A, pairing samples by sample_id (by index for samples without one)."""
    info_a, info_b = store.get_run(run_a), store.get_run(run_b)
    keyed_a = _keyed(store.indexed_results(run_a))
    keyed_b = _keyed(store.indexed_results(run_b))
    pairs = [(key, keyed_a[key], keyed_b[key]) for key in keyed_a if key in keyed_b]
    names = EvalReport([r for _, r, _ in pairs] + [r for _, _, r in pairs]).metric_names()
    return RunComparison(
        run_a=info_a, run_b=info_b,
        metrics=[_metric_delta(name, pairs) for name in names],
        movers=_movers(pairs, names),
        n_paired=len(pairs), only_a=len(keyed_a) - len(pairs), only_b=len(keyed_b) - len(pairs),
    )


def _keyed(indexed: List[Tuple[int, EvalResult]]) -> Dict[str, EvalResult]:
    """Results by pairing key: the sample_id (numbered on repeats), or '#<index>' without one."""
    keyed: Dict[str, EvalResult] = {}
    for index, result in indexed:
        key = str(result.sample_id) if result.sample_id not in (None, "") else f"#{index}"
        base, n = key, 1
        while key in keyed:
            n += 1
            key = f"{base} ({n})"
        keyed[key] = result
    return keyed


def _pair_scores(name: str, pairs) -> List[Tuple[str, float, float, EvalResult]]:
    out = []
    for key, ra, rb in pairs:
        ma, mb = ra.metric_scores().get(name), rb.metric_scores().get(name)
        if ma is not None and mb is not None and not ma.skipped and not mb.skipped:
            out.append((key, ma.score, mb.score, rb))
    return out


def _metric_delta(name: str, pairs) -> MetricDelta:
    scored = _pair_scores(name, pairs)
    if not scored:
        return MetricDelta(name, None, None, None, None, None, 0)
    n = len(scored)
    mean_a = sum(a for _, a, _, _ in scored) / n
    mean_b = sum(b for _, _, b, _ in scored) / n
    ci = paired_bootstrap_ci([b - a for _, a, b, _ in scored])
    low, high = (None, None) if ci is None else (round(ci[0], 4), round(ci[1], 4))
    return MetricDelta(name, round(mean_a, 4), round(mean_b, 4), round(mean_b - mean_a, 4), low, high, n)


def _movers(pairs, names: List[str]) -> List[Mover]:
    moved = []
    for name in names:
        for key, a, b, rb in _pair_scores(name, pairs):
            if b != a:
                question = rb.sample.question if rb.sample else ""
                moved.append(Mover(key, name, a, b, round(b - a, 4), question))
    moved.sort(key=lambda m: (-abs(m.delta), m.sample_id, names.index(m.metric)))
    return moved[:TOP_MOVERS]
