"""Agreement between scores and human labels, in pure Python.

Used by bench/validity.py to measure the heuristics and judges on labelled sets, and by the
report, HTML export and CLI (`--labels`) to show how far a run's scores can be trusted when the
uploaded data carries `human_<metric>` labels.

Labels may be binary (0/1), graded in [0, 1], or ratings 1–5; `scale_labels` maps all to [0, 1].
Binary labels are judged by AUROC, graded ones by Spearman and Kendall's tau-b; both get the
mean absolute error after scaling and a calibration table (mean score per label bin).
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import (
    Any,
    Dict,
    Hashable,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
)

BINARY = "binary"
GRADED = "graded"


def rankdata(values: Sequence[float]) -> List[float]:
    """1-based ranks, tied values sharing their mean rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def auroc(scores: Sequence[float], labels: Sequence[Any]) -> Optional[float]:
    """Probability that a positive outscores a negative (ties count half); None without both classes."""
    ranks = rankdata(scores)
    pos = [r for r, y in zip(ranks, labels) if y]
    n_pos, n_neg = len(pos), len(ranks) - len(pos)
    if not n_pos or not n_neg:
        return None
    return (sum(pos) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def _pearson(x: Sequence[float], y: Sequence[float]) -> Optional[float]:
    n = len(x)
    if n < 2:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx and syy else None


def spearman(x: Sequence[float], y: Sequence[float]) -> Optional[float]:
    """Spearman's rho (Pearson on mid-ranks); None when either side is constant or n < 2."""
    return _pearson(rankdata(x), rankdata(y))


def _tied_pairs(values: Iterable[Hashable]) -> int:
    counts: Dict[Hashable, int] = defaultdict(int)
    for v in values:
        counts[v] += 1
    return sum(c * (c - 1) // 2 for c in counts.values())


def _count_inversions(seq: List[float]) -> int:
    """Strictly decreasing pairs in `seq` (merge sort, O(n log n)); sorts `seq` in place."""
    if len(seq) < 2:
        return 0
    mid = len(seq) // 2
    left, right = seq[:mid], seq[mid:]
    count = _count_inversions(left) + _count_inversions(right)
    i = j = 0
    for k in range(len(seq)):
        if j >= len(right) or (i < len(left) and left[i] <= right[j]):
            seq[k] = left[i]
            i += 1
        else:
            seq[k] = right[j]
            count += len(left) - i
            j += 1
    return count


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> Optional[float]:
    """Kendall's tau-b with tie correction (Knight's O(n log n) method); None when a side is constant."""
    n = len(x)
    if n < 2:
        return None
    pairs = sorted(zip(x, y))
    n0 = n * (n - 1) // 2
    n1, n2, n3 = _tied_pairs(x), _tied_pairs(y), _tied_pairs(pairs)
    # Sorted by (x, y), pairs tied on x are never inversions, so inversions count discordant pairs.
    discordant = _count_inversions([b for _, b in pairs])
    concordant_minus_discordant = n0 - n1 - n2 + n3 - 2 * discordant
    denom = math.sqrt((n0 - n1) * (n0 - n2))
    return concordant_minus_discordant / denom if denom else None


def pairwise_accuracy(scores: Sequence[float], labels: Sequence[float], groups: Sequence[Hashable],
                      min_gap: float = 1e-9) -> Optional[float]:
    """Within each group, the share of label-ordered pairs the scores order the same way (ties 0.5).

    Only pairs whose labels differ by at least `min_gap` count; None when there is no such pair.
    """
    by_group: Dict[Hashable, List[Tuple[float, float]]] = defaultdict(list)
    for s, y, g in zip(scores, labels, groups):
        by_group[g].append((s, y))
    total, hits = 0, 0.0
    for items in by_group.values():
        for i, (si, yi) in enumerate(items):
            for sj, yj in items[i + 1:]:
                if abs(yi - yj) < min_gap:
                    continue
                total += 1
                diff = (si - sj) * (yi - yj)
                hits += 1.0 if diff > 0 else 0.5 if diff == 0 else 0.0
    return hits / total if total else None


def label_kind(labels: Iterable[float]) -> str:
    """'binary' when every label is 0 or 1, else 'graded'."""
    return BINARY if all(y in (0, 1) for y in labels) else GRADED


def scale_labels(labels: Sequence[float]) -> List[float]:
    """Labels mapped to [0, 1]: 0/1 and 0–1 labels unchanged, 1–5 ratings as (y - 1) / 4."""
    if all(0 <= y <= 1 for y in labels):
        return [float(y) for y in labels]
    if all(1 <= y <= 5 for y in labels):
        return [(y - 1) / 4 for y in labels]
    raise ValueError("human labels must be 0/1, between 0 and 1, or ratings from 1 to 5; "
                     f"found values from {min(labels)} to {max(labels)}")


def mae(scores: Sequence[float], labels: Sequence[float]) -> Optional[float]:
    """Mean absolute error of the scores against the labels scaled to [0, 1]."""
    if not scores:
        return None
    scaled = scale_labels(labels)
    return sum(abs(s - y) for s, y in zip(scores, scaled)) / len(scores)


@dataclass(frozen=True)
class CalibrationBin:
    """Scores of the rows whose scaled label falls in [low, high]."""

    low: float
    high: float
    n: int
    mean_score: Optional[float]
    mean_label: Optional[float]


def calibration(scores: Sequence[float], labels: Sequence[float], bins: int = 5) -> List[CalibrationBin]:
    """Mean score per label bin: one bin per distinct label when there are at most `bins` of them
    (0/1 labels, 1–5 ratings), else `bins` equal-width bins over the scaled labels."""
    scaled = scale_labels(labels)
    distinct = sorted(set(scaled))
    if len(distinct) <= bins:
        edges = [(v, v) for v in distinct]
    else:
        edges = [(i / bins, (i + 1) / bins) for i in range(bins)]
    out = []
    for k, (low, high) in enumerate(edges):
        last = k == len(edges) - 1
        inside = [(s, y) for s, y in zip(scores, scaled) if low <= y < high or (y == high and (last or low == high))]
        n = len(inside)
        out.append(CalibrationBin(round(low, 4), round(high, 4), n,
                                  round(sum(s for s, _ in inside) / n, 4) if n else None,
                                  round(sum(y for _, y in inside) / n, 4) if n else None))
    return out


@dataclass(frozen=True)
class MetricAgreement:
    """How one metric's scores agree with the human labels of the same rows."""

    metric: str
    n: int
    kind: str  # "binary" or "graded"
    auroc: Optional[float] = None
    spearman: Optional[float] = None
    kendall: Optional[float] = None
    mae: Optional[float] = None
    calibration: List[CalibrationBin] = field(default_factory=list)

    def to_dict(self) -> Dict[str, Any]:
        return {"metric": self.metric, "n": self.n, "kind": self.kind,
                "auroc": _r(self.auroc), "spearman": _r(self.spearman), "kendall": _r(self.kendall),
                "mae": _r(self.mae), "calibration": [vars(b) for b in self.calibration]}


def _r(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(value, 4)


def metric_agreement(metric: str, scores: Sequence[float], labels: Sequence[float],
                     bins: int = 5) -> MetricAgreement:
    """Agreement statistics for one metric's (score, label) pairs."""
    kind = label_kind(labels)
    n, error, bins_ = len(scores), mae(scores, labels), calibration(scores, labels, bins)
    if kind == BINARY:
        return MetricAgreement(metric, auroc=auroc(scores, labels), n=n, kind=kind, mae=error, calibration=bins_)
    return MetricAgreement(metric, spearman=spearman(scores, labels), kendall=kendall_tau_b(scores, labels),
                           n=n, kind=kind, mae=error, calibration=bins_)


def label_of(labels: Mapping[str, Any], metric: str) -> Optional[float]:
    value = labels.get(f"human_{metric}", labels.get(metric))
    if value is None or value == "":
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) else value


def labelled_pairs(report: Any) -> Dict[str, List[Tuple[float, float]]]:
    """Metric -> (score, human label) for every scored, non-skipped result whose sample carries
    `metadata["human_labels"]` (keys `human_<metric>` or `<metric>`)."""
    pairs: Dict[str, List[Tuple[float, float]]] = defaultdict(list)
    for result in report.results:
        labels = (getattr(result.sample, "metadata", None) or {}).get("human_labels") or {}
        for metric, ms in result.metric_scores().items():
            label = label_of(labels, metric)
            if label is not None and not ms.skipped:
                pairs[metric].append((ms.score, label))
    return dict(pairs)


def external_pairs(report: Any) -> Dict[str, List[Tuple[float, float]]]:
    """"<metric> vs <external column>" -> (our score, the other tool's grade) for each grade another tool gave
    (`metadata["external_scores"]`, io/grades.py) of a metric this run scored: what `--labels` compares."""
    from ..io.grades import EXTERNAL_PREFIX, measures

    pairs: Dict[str, List[Tuple[float, float]]] = defaultdict(list)
    for result in report.results:
        grades = (getattr(result.sample, "metadata", None) or {}).get("external_scores") or {}
        scored = result.metric_scores()
        for column, grade in grades.items():
            metric = measures(str(column)[len(EXTERNAL_PREFIX):].split("_", 1)[-1])
            ms = scored.get(metric) if metric else None
            if ms is not None and not ms.skipped and isinstance(grade, (int, float)):
                pairs[f"{metric} vs {column}"].append((ms.score, float(grade)))
    return dict(pairs)


def agreement_table(report_or_pairs: Any, bins: int = 5) -> Dict[str, MetricAgreement]:
    """Per metric with human labels: n, label kind, AUROC or Spearman + Kendall, MAE, calibration.

    Accepts an EvalReport (labels read from each sample's metadata["human_labels"]) or a mapping
    metric -> [(score, label), ...]. Metrics without labelled rows are left out.
    """
    pairs = report_or_pairs if isinstance(report_or_pairs, Mapping) else labelled_pairs(report_or_pairs)
    table = {}
    for metric, items in pairs.items():
        if items:
            scores, labels = [s for s, _ in items], [y for _, y in items]
            table[metric] = metric_agreement(metric, scores, labels, bins)
    return table


def format_agreement_table(table: Mapping[str, MetricAgreement]) -> str:
    """A plain-text table of `agreement_table`'s result, for the CLI."""
    w = max([20] + [len(a.metric) for a in table.values()])  # "faithfulness vs external_deepeval_..." is long
    lines = [f"{'metric':<{w}} {'n':>5} {'labels':<7} {'AUROC':>6} {'Spearman':>8} {'Kendall':>7} {'MAE':>6}"]
    for a in table.values():
        cells = [_fmt(a.auroc), _fmt(a.spearman), _fmt(a.kendall), _fmt(a.mae)]
        lines.append(f"{a.metric:<{w}} {a.n:>5} {a.kind:<7} {cells[0]:>6} {cells[1]:>8} {cells[2]:>7} {cells[3]:>6}")
        bins = ", ".join(f"{b.low:g}{'' if b.low == b.high else f'-{b.high:g}'}: {_fmt(b.mean_score)} (n={b.n})"
                         for b in a.calibration)
        lines.append(f"{'':<{w}} mean score by label: {bins}")
    return "\n".join(lines)


def _fmt(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.3f}"
