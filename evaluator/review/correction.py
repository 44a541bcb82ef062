"""A run's judged mean corrected by its reviews, per metric (the statistics: analysis/inference.py).

Only reviews drawn without looking at the scores may correct the mean: those given in the random
queue (a uniform sample: PPI++) or in the informative queue (known inclusion probabilities, rebuilt
from the stored scores and the queue's seed: the weighted estimator). Reviews from other queues
(worst first, gap, imports...) picked samples on purpose; with only those, the correction says so
and gives no figure rather than a biased one.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..analysis.inference import CorrectedMean, corrected_mean, weighted_corrected_mean
from ..model import EvalResult
from .queue import informative_sample, informative_seed

TARGET_HALF_WIDTH = 0.03  # the width the "N more for ±0.03" hint aims at
NOT_RANDOM = "reviews are not a random sample (use the random or informative queue): no corrected figure"


@dataclass(frozen=True)
class Correction:
    """One metric's corrected mean, or why there is none."""

    metric: str
    judged_mean: Optional[float]
    estimate: Optional[CorrectedMean] = None
    queue: str = ""  # "random" or "informative": the reviews the estimate uses
    note: str = ""  # why there is no estimate ("" when there is one or no review at all)

    def more_labels(self, half_width: float = TARGET_HALF_WIDTH) -> Optional[int]:
        """Labels still to give for ±half_width (0: reached); None without an estimate."""
        if self.estimate is None:
            return None
        return max(0, self.estimate.labels_needed(half_width) - self.estimate.n_labels)

    def line(self, half_width: float = TARGET_HALF_WIDTH) -> str:
        """ "judged 0.82 → corrected 0.76 [0.72, 0.80] from 60 reviews; 40 more for ±0.03"."""
        if self.judged_mean is None:
            return ""
        if self.estimate is None:
            return f"judged {self.judged_mean:.2f}; {self.note}" if self.note else ""
        e = self.estimate
        more = self.more_labels(half_width)
        tail = f"±{half_width:.2f} reached" if not more else f"{more} more for ±{half_width:.2f}"
        weighted = ", weighted" if self.queue == "informative" else ""
        return (f"judged {self.judged_mean:.2f} → corrected {e.mean:.2f} [{e.low:.2f}, {e.high:.2f}] from "
                f"{e.n_labels} review{'' if e.n_labels == 1 else 's'}{weighted}; {tail}")

    def to_dict(self, half_width: float = TARGET_HALF_WIDTH) -> Dict[str, Any]:
        out: Dict[str, Any] = {"judged_mean": self.judged_mean, "queue": self.queue or None, "note": self.note or None}
        if self.estimate is not None:
            out.update(self.estimate.to_dict(), interval=[self.estimate.low, self.estimate.high],
                       more_labels=self.more_labels(half_width), target_half_width=half_width)
        return out


def _human_scores(reviews: Sequence[Any], metric: str, queue_ok: Any,
                  judged: Mapping[int, float]) -> Dict[int, float]:
    """Sample index -> the reviewers' mean score, over reviews whose queue passes `queue_ok` (one who
    agreed without a score gave the judge's)."""
    found: Dict[int, List[float]] = defaultdict(list)
    for r in reviews:
        if r.metric != metric or not queue_ok(r.queue):
            continue
        human = r.human_score
        if human is None and r.verdict == "agree":
            human = judged.get(r.index)
        if human is not None:
            found[r.index].append(human)
    return {i: sum(v) / len(v) for i, v in found.items()}


def _random(scored: List[int], scores: List[float], reviews: Sequence[Any], metric: str,
            confidence: float) -> Optional[CorrectedMean]:
    position = {index: j for j, index in enumerate(scored)}
    humans = _human_scores(reviews, metric, lambda q: q == "random", {i: scores[j] for i, j in position.items()})
    labels = {position[i]: h for i, h in humans.items() if i in position}
    return corrected_mean(scores, labels, confidence) if len(labels) >= 2 else None


def _informative(results: Sequence[Tuple[int, EvalResult]], scores: List[float], reviews: Sequence[Any],
                 metric: str, confidence: float) -> Optional[CorrectedMean]:
    judged = {i: r.scores[metric].score for i, r in results if metric in r.scores}
    seeds = {informative_seed(r.queue) for r in reviews if r.metric == metric} - {None}
    best: Optional[CorrectedMean] = None
    for seed in sorted(s for s in seeds if s is not None):  # one queue per seed; the fullest one counts
        humans = _human_scores(reviews, metric, lambda q, s=seed: informative_seed(q) == s, judged)
        scored, sample = informative_sample(results, metric, list(humans), seed)
        labels = {j: humans[scored[j]] for j in sample.probabilities}
        if len(labels) >= 3 and (best is None or len(labels) > best.n_labels):
            best = weighted_corrected_mean(scores, labels, sample.probabilities, confidence)
    return best


def metric_correction(metric: str, reviews: Sequence[Any], results: Sequence[Tuple[int, EvalResult]],
                      confidence: float = 0.95) -> Correction:
    """The corrected mean of `metric` from the random or informative reviews (the one with more labels)."""
    scored = [(i, r.scores[metric].score) for i, r in results
              if metric in r.scores and not r.scores[metric].skipped]
    if not scored:
        return Correction(metric, None)
    indices, scores = [i for i, _ in scored], [s for _, s in scored]
    judged = sum(scores) / len(scores)
    random_est = _random(indices, scores, reviews, metric, confidence)
    active_est = _informative(results, scores, reviews, metric, confidence)
    if active_est is not None and (random_est is None or active_est.n_labels > random_est.n_labels):
        return Correction(metric, judged, active_est, "informative")
    if random_est is not None:
        return Correction(metric, judged, random_est, "random")
    mine = [r for r in reviews if r.metric == metric]
    unbiased = [r for r in mine if r.queue == "random" or informative_seed(r.queue) is not None]
    if unbiased:
        return Correction(metric, judged, note=f"{len(unbiased)} random or informative review"
                          f"{'' if len(unbiased) == 1 else 's'} so far: a corrected figure needs 2 random or 3 "
                          "informative ones in queue order")
    return Correction(metric, judged, note=NOT_RANDOM if mine else "")
