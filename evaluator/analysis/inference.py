"""Every inferential statistic ragmeter reports beyond plain means, in one module, pure Python.

1. `corrected_mean`: the judge's mean corrected by a random sample of human labels, with a valid
   interval. Prediction-powered inference (PPI, Angelopoulos, Bates, Fannjiang, Jordan, Zrnic,
   "Prediction-powered inference", Science 2023) and its power-tuned form PPI++ (Angelopoulos,
   Duchi, Zrnic, "PPI++: Efficient prediction-powered inference", 2023):
       mean = lam * mean(judge over all N rows) + mean(label - lam * judge over the n labelled rows)
   The target is the mean over the run's own rows, whose judge scores are all known, so the judge
   part has no sampling error and the label part carries the finite-population correction:
       var = (1 - n/N) * Var(label - lam * judge) / n
   (the difference/regression estimator of survey sampling, Särndal, Swensson, Wretman, "Model
   Assisted Survey Sampling", 1992, §6.3-6.4, which PPI++ is for a finite population).
   Assumptions: the labelled rows are a uniform random sample of the rows (the random review
   queue); rows are exchangeable; n large enough for the CLT (a Student-t quantile with n - 1
   degrees of freedom widens small-n intervals). lam = 1 is plain PPI; the tuned lam =
   Cov(label, judge) / Var(judge) over the labelled rows, clipped to [0, 1], minimises the
   variance, so a useless judge (lam -> 0) gives the labels-only interval, never a worse one; the
   fitted slope costs one degree of freedom (n - 2), and under 3 labels plain PPI is used. With a
   fixed lam the estimate is exactly unbiased; with lam fitted to the same labels, up to O(1/n).
2. `weighted_corrected_mean`: the same correction when rows were drawn with unequal, known
   probabilities (active inference: Zrnic and Candès, "Active statistical inference", ICML 2024).
   The estimator is the survey-sampling GREG/difference estimator (Särndal, Swensson, Wretman,
   "Model Assisted Survey Sampling", 1992): unbiased for any fixed fit, and up to O(1/n) with the
   intercept and slope fitted by 1/pi-weighted least squares; variance sum e^2 (1 - pi) / pi^2 / N^2
   (the Poisson-design formula), t quantile with n - 2 degrees of freedom. Probabilities come from priority sampling (Duffield, Lund, Thorup, "Priority
   sampling for estimation of arbitrary subset sums", JACM 2007): row i gets priority
   w_i / U_i (U_i uniform, seeded); reviewing the k highest priorities is a sample in which row i
   is included with probability min(1, w_i / tau), tau the (k+1)-th priority, and the
   Horvitz-Thompson sums over it are unbiased. Assumption: the reviewed rows are a prefix of the
   priority order (`priority_sample` keeps the longest fully reviewed prefix).
3. `ConfidenceSequence`: an anytime-valid confidence sequence for the mean of paired differences in
   [-1, 1]: the predictable plug-in empirical-Bernstein sequence of Waudby-Smith and Ramdas,
   "Estimating means of bounded random variables by betting", JRSS-B 2024 (Theorem 2), with the
   running intersection. Valid at every sample size at once, so a test may stop the moment it
   excludes 0. Its bets may be tuned for a horizon (the dataset's size: tightest there, still valid
   everywhere). Assumption: the pairs are drawn independently (random order) with a common mean.
   `decide` reads an interval as A, B, tie (inside ±tie) or undecided; `fixed_sample_size` is the
   fixed-size paired z-test it is compared with (bench/inference.py).
"""
from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

Interval = Tuple[float, float]


def _z(confidence: float) -> float:
    return statistics.NormalDist().inv_cdf(0.5 + confidence / 2)


def t_quantile(confidence: float, df: int) -> float:
    """Two-sided Student-t quantile: exact for 1 and 2 degrees of freedom, else the Cornish-Fisher
    expansion (Abramowitz & Stegun 26.7.5; under 0.8% off for df >= 3, 0.1% for df >= 5); the normal one for large df."""
    z = _z(confidence)
    p = 0.5 + confidence / 2
    if df <= 1:  # Cauchy: exact
        return math.tan(math.pi * (p - 0.5))
    if df == 2:  # exact
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    if df >= 1000:
        return z
    d = df
    z3, z5, z7 = z ** 3, z ** 5, z ** 7
    return (z + (z3 + z) / (4 * d) + (5 * z5 + 16 * z3 + 3 * z) / (96 * d ** 2)
            + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * d ** 3))


def _var(values: Sequence[float]) -> float:
    return statistics.variance(values) if len(values) >= 2 else 0.0


def _cov(xs: Sequence[float], ys: Sequence[float]) -> float:
    if len(xs) < 2:
        return 0.0
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (len(xs) - 1)


@dataclass(frozen=True)
class CorrectedMean:
    """A judge's mean corrected by human labels, with its interval (see the module docstring)."""

    mean: float
    low: float
    high: float
    n_labels: int
    n_rows: int
    judged_mean: float  # the judge's plain mean over every row
    confidence: float = 0.95
    lam: float = 1.0  # how much the judge is trusted: 1 is plain PPI, 0 is labels only
    label_var: float = 0.0  # per-label variance of label - lam * judge (the weighted one's, per label)
    quantile: float = 1.96
    method: str = "ppi++"

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def labels_needed(self, half_width: float) -> int:
        """How many labels in all would bring the half-width down to `half_width` if the spread stays as
        measured (never fewer than given; at most every row: a census has no sampling error)."""
        if half_width <= 0:
            raise ValueError(f"half_width must be positive, not {half_width!r}")
        if self.label_var <= 0 or self.half_width <= half_width:
            return self.n_labels
        # (1/n - 1/N) * var = (h/q)^2  ->  n = 1 / ((h/q)^2 / var + 1/N)
        needed = math.ceil(1 / ((half_width / self.quantile) ** 2 / self.label_var + 1 / self.n_rows) - 1e-9)
        return min(self.n_rows, max(needed, self.n_labels))

    def to_dict(self) -> Dict[str, object]:
        return {"mean": self.mean, "low": self.low, "high": self.high, "n_labels": self.n_labels,
                "n_rows": self.n_rows, "judged_mean": self.judged_mean, "confidence": self.confidence,
                "lam": self.lam, "method": self.method}


def _check(judge_scores: Sequence[float], labels: Mapping[int, float]) -> List[float]:
    scores = [float(s) for s in judge_scores]
    if any(not math.isfinite(s) for s in scores):
        raise ValueError("judge_scores must all be finite numbers (leave unscored rows out)")
    for index, value in labels.items():
        if not 0 <= index < len(scores):
            raise ValueError(f"label for row {index}: there are only {len(scores)} judge scores (rows 0-{len(scores) - 1})")
        if not math.isfinite(float(value)):
            raise ValueError(f"label for row {index} is {value!r}: give a finite number")
    if len(labels) < 2:
        raise ValueError(f"a corrected mean needs at least 2 labels, got {len(labels)}")
    return scores


def tuned_lambda(labels: Sequence[float], preds: Sequence[float]) -> float:
    """PPI++'s variance-minimising weight on the judge (the regression slope), clipped to [0, 1]."""
    var_f = _var(preds)
    return 0.0 if var_f <= 0 else min(1.0, max(0.0, _cov(labels, preds) / var_f))


def corrected_mean(judge_scores: Sequence[float], labels: Mapping[int, float], confidence: float = 0.95,
                   tuned: bool = True) -> CorrectedMean:
    """The mean over the rows of `judge_scores`, corrected by `labels` ({row index: human score}, a
    uniform random subset of the rows): PPI++ when `tuned`, plain PPI otherwise (module docstring).
    ValueError on bad input."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence!r}")
    scores = _check(judge_scores, labels)
    order = sorted(labels)
    ys = [float(labels[i]) for i in order]
    fs = [scores[i] for i in order]
    n, big_n = len(ys), len(scores)
    tuned = tuned and n >= 3  # a slope fitted to 2 labels would leave no spread to measure
    lam = tuned_lambda(ys, fs) if tuned else 1.0
    residuals = [y - lam * f for y, f in zip(ys, fs)]
    mean = lam * statistics.fmean(scores) + statistics.fmean(residuals)
    fitted = 1 if tuned else 0  # the fitted slope costs a degree of freedom (regression estimator)
    label_var = _var(residuals) * (n - 1) / (n - 1 - fitted)
    q = t_quantile(confidence, n - 1 - fitted)
    half = q * math.sqrt(max(0.0, 1 / n - 1 / big_n) * label_var)
    return CorrectedMean(mean, mean - half, mean + half, n, big_n, statistics.fmean(scores), confidence,
                         lam, label_var, q, "ppi++" if tuned else "ppi")


def labels_only_mean(labels: Sequence[float], confidence: float = 0.95, n_rows: Optional[int] = None) -> Interval:
    """The classical t interval from the labels alone (what the correction is measured against), with
    the finite-population correction when the labels are a sample of `n_rows` rows."""
    n = len(labels)
    m = statistics.fmean(labels)
    fpc = 1 - n / n_rows if n_rows else 1.0
    half = t_quantile(confidence, n - 1) * math.sqrt(fpc * _var(labels) / n)
    return m - half, m + half


# --- active sampling: priority order and the weighted estimator ---------------------------------

def uncertainty(score: float, spread: Optional[float] = None) -> float:
    """How unsure the judge is about one row: its spread over repeats when measured, else the
    binomial spread sqrt(s(1 - s)) of a score read as a pass probability (largest at 0.5, the pass
    threshold; smallest where the judge is sure either way)."""
    if spread is not None and spread > 0:
        return spread
    s = min(1.0, max(0.0, score))
    return math.sqrt(s * (1 - s))


def sampling_weights(uncertainties: Sequence[float], mix: float = 0.5) -> List[float]:
    """Row weights proportional to uncertainty, mixed with uniform (`mix` of the weight is uniform) so
    no row's probability is tiny: a row the judge was wrongly sure of cannot blow up the variance
    (Zrnic and Candès recommend the same safeguard)."""
    total = math.fsum(uncertainties)
    n = len(uncertainties)
    if total <= 0:
        return [1.0] * n
    return [mix + (1 - mix) * u * n / total for u in uncertainties]


def priorities(weights: Sequence[float], seed: int = 0) -> List[float]:
    """Priority w_i / U_i per row, U_i ~ Uniform(0, 1] drawn from `seed` (the same seed, the same queue)."""
    rng = random.Random(seed)
    return [w / (1.0 - rng.random()) for w in weights]


@dataclass(frozen=True)
class PrioritySample:
    """A priority sample: each included row's inclusion probability."""

    probabilities: Dict[int, float] = field(default_factory=dict)
    threshold: float = 0.0  # tau: the first priority not taken (0: every row taken)


def priority_sample(weights: Sequence[float], prios: Sequence[float], reviewed: Sequence[int]) -> PrioritySample:
    """The longest prefix of the priority order whose rows are all in `reviewed`, with each row's
    inclusion probability min(1, w / tau)."""
    order = sorted(range(len(prios)), key=lambda i: (-prios[i], i))
    done = set(reviewed)
    k = 0
    while k < len(order) and order[k] in done:
        k += 1
    tau = prios[order[k]] if k < len(order) else 0.0
    probs = {i: (1.0 if tau == 0 else min(1.0, weights[i] / tau)) for i in order[:k]}
    return PrioritySample(probs, tau)


def _wls(xs: Sequence[float], ys: Sequence[float], ws: Sequence[float]) -> Tuple[float, float]:
    """(intercept, slope) of weighted least squares; slope 0 when x does not vary."""
    sw = math.fsum(ws)
    mx = math.fsum(w * x for w, x in zip(ws, xs)) / sw
    my = math.fsum(w * y for w, y in zip(ws, ys)) / sw
    sxx = math.fsum(w * (x - mx) ** 2 for w, x in zip(ws, xs))
    slope = math.fsum(w * (x - mx) * (y - my) for w, x, y in zip(ws, xs, ys)) / sxx if sxx > 0 else 0.0
    return my - slope * mx, slope


def weighted_corrected_mean(judge_scores: Sequence[float], labels: Mapping[int, float],
                            probabilities: Mapping[int, float], confidence: float = 0.95) -> CorrectedMean:
    """The corrected mean from labels drawn with known inclusion `probabilities` (row -> pi): the GREG
    estimator (1/N) sum_all (a + b f) + (1/N) sum_labelled (y - a - b f) / pi, with the Poisson-design
    variance (1/N^2) sum_labelled e^2 (1 - pi) / pi^2. Rows with a label but no probability are ignored."""
    scores = _check(judge_scores, labels)
    drawn = sorted(i for i in labels if i in probabilities)
    if len(drawn) < 3:  # intercept and slope are fitted: two labels would leave no spread to measure
        raise ValueError(f"a weighted corrected mean needs at least 3 labelled rows with a probability, got {len(drawn)}")
    if any(not 0 < probabilities[i] <= 1 for i in drawn):
        raise ValueError("inclusion probabilities must be in (0, 1]")
    ys = [float(labels[i]) for i in drawn]
    fs = [scores[i] for i in drawn]
    pis = [probabilities[i] for i in drawn]
    a, b = _wls(fs, ys, [1 / p for p in pis])
    b = min(1.0, max(0.0, b))
    a = _wls(fs, [y - b * f for y, f in zip(ys, fs)], [1 / p for p in pis])[0]
    big_n = len(scores)
    errors = [y - a - b * f for y, f in zip(ys, fs)]
    mean = (a * big_n + b * math.fsum(scores) + math.fsum(e / p for e, p in zip(errors, pis))) / big_n
    var_sum = math.fsum(e * e * (1 - p) / p ** 2 for e, p in zip(errors, pis))
    q = t_quantile(confidence, len(drawn) - 2)
    half = q * math.sqrt(var_sum) / big_n
    # labels_needed reads the variance as (1/n - 1/N) * label_var, as it shrinks at fixed weights
    n = len(drawn)
    label_var = var_sum / big_n ** 2 / (1 / n - 1 / big_n) if n < big_n else 0.0
    return CorrectedMean(mean, mean - half, mean + half, n, big_n, statistics.fmean(scores), confidence,
                         b, label_var, q, "active")


# --- sequential A/B: an anytime-valid confidence sequence ---------------------------------------

@dataclass
class ConfidenceSequence:
    """Predictable plug-in empirical-Bernstein confidence sequence for the mean of values in [-1, 1]
    (Waudby-Smith and Ramdas 2024, Theorem 2, two-sided by a union bound over alpha/2 each side).

    `add(x)` one paired difference at a time; `interval` holds at level 1 - alpha at every step at once.
    """

    alpha: float = 0.05
    truncation: float = 0.5  # the largest bet (c in the paper); 1/2 or 3/4 are their choices
    # The sample size the bets are tuned for (their eq. 24-25): tightest near it, valid at every size.
    # None: tuned for every size at once (lambda_t ~ 1/sqrt(t log t)).
    horizon: Optional[int] = None
    n: int = 0
    _sum: float = 0.0  # running sums on the [0, 1] scale: x' = (x + 1) / 2
    _sq: float = 0.25  # the prior's (1/4) plus squared deviations from the running mean
    _lam_sum: float = 0.0
    _lam_x: float = 0.0
    _penalty: float = 0.0
    _low: float = -1.0
    _high: float = 1.0

    def add(self, x: float) -> Interval:
        if not -1.0 <= x <= 1.0 or x != x:
            raise ValueError(f"a paired difference must be in [-1, 1], not {x!r}")
        v = (x + 1) / 2
        t = self.n + 1
        mean_before = (0.5 + self._sum) / t  # mu-hat_{t-1} with its prior 1/2
        var_before = self._sq / t  # sigma-hat^2_{t-1}
        scale = self.horizon if self.horizon else t * math.log(1 + t)
        lam = min(math.sqrt(2 * math.log(2 / self.alpha) / (var_before * scale)), self.truncation)
        self._penalty += 4 * (v - mean_before) ** 2 * (-math.log(1 - lam) - lam) / 4
        self._lam_sum += lam
        self._lam_x += lam * v
        self.n = t
        self._sum += v
        self._sq += (v - (0.5 + self._sum) / (t + 1)) ** 2
        centre = self._lam_x / self._lam_sum
        half = (math.log(2 / self.alpha) + self._penalty) / self._lam_sum
        self._low = max(self._low, 2 * (centre - half) - 1)
        self._high = min(self._high, 2 * (centre + half) - 1)
        if self._low > self._high:  # only by chance beyond alpha; keep a point, never an empty set
            self._low = self._high = (self._low + self._high) / 2
        return self.interval

    @property
    def interval(self) -> Interval:
        return self._low, self._high

    @property
    def estimate(self) -> float:
        return 2 * (self._sum / self.n) - 1 if self.n else 0.0


A, B, TIE, UNDECIDED = "A", "B", "tie", "undecided"


def decide(interval: Interval, tie: float) -> str:
    """A or B when the interval for mean(A - B) excludes 0, "tie" when it lies inside +-tie, else
    "undecided" (the test goes on)."""
    low, high = interval
    if low > 0:
        return A
    if high < 0:
        return B
    if -tie <= low and high <= tie:
        return TIE
    return UNDECIDED


def fixed_sample_size(delta: float, sd: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Pairs a fixed-size two-sided paired z-test needs to detect a mean difference `delta` with
    `power` (the baseline the sequential test is compared with)."""
    z = statistics.NormalDist()
    return math.ceil(((z.inv_cdf(1 - alpha / 2) + z.inv_cdf(power)) * sd / delta) ** 2)
