"""How far the judge agrees with the people who reviewed it, per metric.

From a run's reviews (evaluator.store.reviews) and its scores:
- agree rate: the share of reviews that agree with the score shown, with a bootstrap CI;
- Spearman between the judge's scores and the reviewers' (per sample, the reviewers' mean), and
  AUROC when the reviewers' scores are pass/fail;
- bias: judge minus human per sample, its mean and bootstrap CI (positive: the judge is lenient);
- Krippendorff's alpha (interval) between reviewers on the samples two or more reviewed: the
  ceiling a judge can be held to;
- the reviewers' mean over the samples drawn by the random queue (the unbiased draw), and the
  judge's mean corrected by the random or informative reviews (review/correction.py):
  "judged 0.82 → corrected 0.76 [0.72, 0.80] from 60 reviews; 40 more for ±0.03".
A reviewer who agrees without a score counts the judge's score as theirs; one who disagrees
without a score counts towards the agree rate only.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..model import EvalResult
from ..analysis.agreement import BINARY, auroc, label_kind, spearman
from ..analysis.stats import bootstrap_ci, mean_std
from .correction import Correction, metric_correction

Interval = Tuple[float, float]
FEW_REVIEWS = 5  # below this many labels an interval says more than the labels do: none is shown


@dataclass(frozen=True)
class ReviewAgreement:
    """The judge against its reviewers on one metric (None where a figure is undefined)."""

    metric: str
    n_reviews: int
    n_samples: int  # samples with a human score
    n_reviewers: int
    agree_rate: Optional[float] = None
    agree_ci: Optional[Interval] = None
    spearman: Optional[float] = None
    auroc: Optional[float] = None
    bias: Optional[float] = None  # mean of judge - human
    bias_ci: Optional[Interval] = None
    alpha: Optional[float] = None  # Krippendorff's alpha (interval) between reviewers
    judged_mean: Optional[float] = None  # the judge's mean over every scored sample of the run
    reviewed_mean: Optional[float] = None  # reviewers' mean over the random-queue samples
    reviewed_ci: Optional[Interval] = None
    n_random: int = 0
    disagreements: List[Tuple[int, float, float]] = field(default_factory=list)  # (index, judge, human), worst first
    correction: Optional[Correction] = None  # the judged mean corrected by random/informative reviews

    def to_dict(self) -> Dict[str, Any]:
        out = {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(self).items()}
        out["correction"] = None if self.correction is None else self.correction.to_dict()
        return out


def krippendorff_alpha_interval(units: Sequence[Sequence[float]]) -> Optional[float]:
    """Krippendorff's alpha with the interval metric (squared difference) over units of ratings.

    Units with fewer than two ratings are not pairable and are left out; None when fewer than two
    pairable values remain or every value is the same (no disagreement is possible to measure).
    """
    pairable = [list(u) for u in units if len(u) >= 2]
    values = [v for u in pairable for v in u]
    n = len(values)
    if n < 2:
        return None
    observed = sum(sum((a - b) ** 2 for a, b in combinations(u, 2)) * 2 / (len(u) - 1) for u in pairable) / n
    expected = sum((a - b) ** 2 for a, b in combinations(values, 2)) * 2 / (n * (n - 1))
    return None if expected == 0 else 1.0 - observed / expected


def _judge_score(review: Any, results: Mapping[int, EvalResult]) -> Optional[float]:
    if review.judge_score is not None:
        return float(review.judge_score)
    result = results.get(review.index)
    ms = result.scores.get(review.metric) if result is not None else None
    return None if ms is None or ms.skipped else ms.score


def _half(ci: Optional[Interval]) -> Optional[float]:
    return None if ci is None else (ci[1] - ci[0]) / 2


def metric_review_agreement(metric: str, reviews: Sequence[Any], results: Mapping[int, EvalResult],
                            seed: int = 0) -> ReviewAgreement:
    """Every figure of the module docstring for one metric's reviews."""
    mine = [r for r in reviews if r.metric == metric]
    agrees = [1.0 if r.verdict == "agree" else 0.0 for r in mine]
    humans: Dict[int, List[float]] = defaultdict(list)
    judge: Dict[int, float] = {}
    random_drawn = set()
    for r in mine:
        score, human = _judge_score(r, results), r.human_score
        if human is None and r.verdict == "agree":
            human = score
        if score is None or human is None:
            continue
        humans[r.index].append(human)
        judge[r.index] = score
        if r.queue == "random":
            random_drawn.add(r.index)
    order = sorted(humans)
    h = [sum(humans[i]) / len(humans[i]) for i in order]
    j = [judge[i] for i in order]
    gaps = [a - b for a, b in zip(j, h)]
    binary = bool(h) and label_kind(h) == BINARY
    drawn = [sum(humans[i]) / len(humans[i]) for i in order if i in random_drawn]
    judged = [ms.score for res in results.values() for name, ms in res.scores.items()
              if name == metric and not ms.skipped]
    return ReviewAgreement(
        metric, n_reviews=len(mine), n_samples=len(order), n_reviewers=len({r.reviewer for r in mine}),
        agree_rate=mean_std(agrees)[0], agree_ci=bootstrap_ci(agrees, seed=seed),
        spearman=spearman(j, h) if len(h) >= 2 else None, auroc=auroc(j, h) if binary else None,
        bias=mean_std(gaps)[0], bias_ci=bootstrap_ci(gaps, seed=seed),
        alpha=krippendorff_alpha_interval([humans[i] for i in order]),
        judged_mean=mean_std(judged)[0], reviewed_mean=mean_std(drawn)[0],
        reviewed_ci=bootstrap_ci(drawn, seed=seed), n_random=len(drawn),
        disagreements=sorted(((i, a, b) for i, a, b in zip(order, j, h) if a != b),
                             key=lambda t: (-abs(t[1] - t[2]), t[0]))[:10],
        correction=metric_correction(metric, reviews, sorted(results.items())))


def review_agreement(reviews: Sequence[Any], results: Sequence[Tuple[int, EvalResult]],
                     seed: int = 0) -> Dict[str, ReviewAgreement]:
    """Metric -> ReviewAgreement for every metric that has a review, in the order first reviewed."""
    by_index = dict(results)
    metrics = list(dict.fromkeys(r.metric for r in reviews))
    return {m: metric_review_agreement(m, reviews, by_index, seed) for m in metrics}


def _f(value: Optional[float], digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ci(ci: Optional[Interval]) -> str:
    return "" if ci is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]"


def corrected_line(a: ReviewAgreement) -> str:
    """ "judged 0.82 → corrected 0.76 [0.72, 0.80] from 60 reviews; 40 more for ±0.03", why there is
    no corrected figure ("judged 0.82; reviews are not a random sample ..."), or "" without reviews."""
    return a.correction.line() if a.correction is not None else ""


def agreement_line(a: ReviewAgreement) -> str:
    """One line per metric for the CLI and the report."""
    parts = [f"agree {_f(a.agree_rate)}{_ci(a.agree_ci)} (n={a.n_reviews})"]
    if a.auroc is not None:
        parts.append(f"AUROC {_f(a.auroc)}")
    elif a.spearman is not None:
        parts.append(f"Spearman {_f(a.spearman)}")
    if a.bias is not None:
        parts.append(f"bias {a.bias:+.2f}{_ci(a.bias_ci)}")
    if a.alpha is not None:
        parts.append(f"reviewers' alpha {_f(a.alpha)}")
    corrected = corrected_line(a)
    return "; ".join(parts + ([corrected] if corrected else []))


def format_review_agreement(table: Mapping[str, ReviewAgreement]) -> str:
    if not table:
        return "No reviews yet."
    width = max(len(m) for m in table)
    return "\n".join(f" {m:<{width}}  {agreement_line(a)}" for m, a in table.items())
