"""Summary statistics of a report: mean, std, bootstrap confidence intervals, scoring-method counts.

Pure Python (no numpy), seeded so the same report always shows the same intervals.

The bootstrap resamples the scores `n_resamples` times and takes percentiles of the resampled
means. That costs n * n_resamples random draws, which pure Python does at ~20-50 M/s; beyond
`exact_limit` draws (about 2,000 scores at 1,000 resamples) the intervals use the normal
approximation of that same bootstrap distribution (mean ± z * plug-in sd / sqrt(n)). For a mean
of more than 2,000 values in [0, 1] the two agree to well below the 3 decimals we display, and the
approximation keeps a 10,000-row report instant.
"""
from __future__ import annotations

import itertools
import math
import random
import statistics
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from ..model import METHOD_FALLBACK, EvalReport

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
# Above this many random draws (n * n_resamples) the normal approximation is used; see module doc.
EXACT_LIMIT = 2_000_000

Interval = Tuple[float, float]


def mean_std(values: Iterable[float]) -> Tuple[Optional[float], Optional[float]]:
    """(mean, sample standard deviation); None where undefined (no values; std of one value)."""
    data = [float(v) for v in values]
    if not data:
        return None, None
    mean = statistics.fmean(data)
    return mean, (statistics.stdev(data, mean) if len(data) >= 2 else None)


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in [0, 1]) of already sorted values."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _resampled_means(data: List[float], n_resamples: int, seed: int) -> List[float]:
    rng = random.Random(seed)
    n = len(data)
    choices = rng.choices
    return sorted(sum(choices(data, k=n)) / n for _ in range(n_resamples))


def _normal_interval(data: List[float], level: float) -> Interval:
    n = len(data)
    mean = math.fsum(data) / n
    plug_in_sd = math.sqrt(math.fsum((v - mean) ** 2 for v in data) / n)
    half = statistics.NormalDist().inv_cdf(0.5 + level / 2) * plug_in_sd / math.sqrt(n)
    return mean - half, mean + half


def bootstrap_ci(values: Iterable[float], *, n_resamples: int = DEFAULT_RESAMPLES, level: float = 0.95,
                 seed: int = DEFAULT_SEED, exact_limit: int = EXACT_LIMIT) -> Optional[Interval]:
    """Percentile bootstrap interval of the mean at `level`; None when there are no values.

    Deterministic for a given seed. See the module docstring for when the normal approximation
    of the bootstrap distribution is used instead of resampling.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1 (e.g. 0.95), not {level!r}")
    data = [float(v) for v in values]
    if not data:
        return None
    if len(data) == 1 or min(data) == max(data):
        return data[0], data[0]  # every resample has the same mean
    if len(data) * n_resamples > exact_limit:
        return _normal_interval(data, level)
    means = _resampled_means(data, n_resamples, seed)
    tail = (1 - level) / 2
    return _percentile(means, tail), _percentile(means, 1 - tail)


def paired_bootstrap_ci(deltas: Iterable[float], *, n_resamples: int = DEFAULT_RESAMPLES, level: float = 0.95,
                        seed: int = DEFAULT_SEED, exact_limit: int = EXACT_LIMIT) -> Optional[Interval]:
    """Bootstrap interval of the mean paired difference (b - a per sample).

    Resampling the per-sample differences resamples whole pairs, so the interval accounts for
    samples that are hard in both runs; it excludes 0 when one run is consistently better.
    """
    return bootstrap_ci(deltas, n_resamples=n_resamples, level=level, seed=seed, exact_limit=exact_limit)


EXACT_PAIRS = 12  # up to 2**12 sign patterns: the permutation test enumerates them all
PERMUTATION_LIMIT = 200_000  # sampled sign flips (n * n_resamples) before the normal approximation


def paired_permutation_p(deltas: Iterable[float], *, n_resamples: int = 5_000, seed: int = DEFAULT_SEED,
                         exact_limit: int = PERMUTATION_LIMIT) -> Optional[float]:
    """Two-sided p-value of a paired permutation (sign-flip) test: is the mean difference b - a zero?

    Under "no difference" each pair's sign is as likely flipped, so p is the share of sign patterns whose
    sum is at least as far from 0 as the observed one. Exact for up to EXACT_PAIRS pairs; else
    `n_resamples` random patterns (with the +1 correction, so p is never 0), or, beyond `exact_limit`
    flips (40 pairs at 5,000 resamples), the normal approximation of the same distribution (mean 0,
    sd sqrt(sum d^2)), which the central limit theorem makes close at that size (the sampled and the
    approximate p differ by about 0.01 at 40 pairs). None without pairs; 1.0 when every difference is
    0. Deterministic for a given seed.
    """
    data = [float(d) for d in deltas]
    n = len(data)
    if not n:
        return None
    total = math.fsum(data)
    observed = abs(total) - 1e-9 * max(1.0, abs(total))  # a float's last bits must not decide "as extreme"
    if observed <= 0:
        return 1.0
    if n <= EXACT_PAIRS:
        hits = sum(1 for mask in range(2 ** n) if abs(_flipped(data, total, mask)) >= observed)
        return hits / 2 ** n
    if n * n_resamples > exact_limit:
        z = abs(total) / math.sqrt(math.fsum(d * d for d in data))
        return 2 * (1 - statistics.NormalDist().cdf(z))
    rng = random.Random(seed)
    hits = sum(1 for _ in range(n_resamples) if abs(_flipped(data, total, rng.getrandbits(n))) >= observed)
    return (hits + 1) / (n_resamples + 1)


def _flipped(data: List[float], total: float, mask: int) -> float:
    """The sum of `data` with the signs of the items whose bit is set in `mask` flipped."""
    bits = format(mask, f"0{len(data)}b")
    return total - 2 * sum(itertools.compress(data, map(int, bits)))


@dataclass
class MetricSummary:
    """Everything the report shows for one metric.

    n_total counts every sample in the report; n_skipped counts those the metric could not score
    (including samples without the fields a rule metric needs); n_fallback those scored by the
    heuristic after a judge failure. `methods` maps method -> count.
    """

    name: str
    mean: Optional[float]
    std: Optional[float]
    ci_low: Optional[float]
    ci_high: Optional[float]
    n_scored: int
    n_total: int
    n_fallback: int
    n_skipped: int
    methods: Dict[str, int] = field(default_factory=dict)


def _round(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(value, 4)


def metric_summary(name: str, values: List[float], methods: Dict[str, int], n_total: int,
                   **ci_options) -> MetricSummary:
    """One metric's summary from its non-skipped scores and its method -> count table."""
    mean, std = mean_std(values)
    ci = bootstrap_ci(values, **ci_options)
    return MetricSummary(
        name=name, mean=_round(mean), std=_round(std),
        ci_low=_round(ci[0]) if ci else None, ci_high=_round(ci[1]) if ci else None,
        n_scored=len(values), n_total=n_total,
        n_fallback=methods.get(METHOD_FALLBACK, 0), n_skipped=n_total - len(values),
        methods=methods,
    )


def summarize(report: EvalReport, **ci_options) -> List[MetricSummary]:
    """One MetricSummary per name in `report.metric_names()`, in that order.

    `ci_options` (n_resamples, level, seed, exact_limit) are passed to `bootstrap_ci`.
    """
    names = report.metric_names()
    values: Dict[str, List[float]] = {n: [] for n in names}
    methods: Dict[str, Dict[str, int]] = {n: {} for n in names}
    for result in report.results:  # one pass over the results, whatever the number of metrics
        for name, ms in result.metric_scores().items():
            if name not in values:
                continue
            methods[name][ms.method] = methods[name].get(ms.method, 0) + 1
            if not ms.skipped:
                values[name].append(ms.score)
    total = len(report.results)
    return [metric_summary(n, values[n], methods[n], total, **ci_options) for n in names]
