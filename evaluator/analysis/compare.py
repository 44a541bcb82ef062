"""Comparing two runs: per-metric mean deltas with a paired bootstrap CI, and the samples that moved most.

Samples are paired by sample_id (by position for samples without one), so two runs of the same
dataset under different judges, prompts or retrievers can be set side by side. Deltas are over the
pairs scored in both; beside them each run's mean over all its scored rows (scored/total), an
`overall` row, and the rows scored in one run but missing or unscored in the other: a run that
lost answers has regressed, whatever its means say. Each delta also carries the p-value of a paired
permutation test (stats.paired_permutation_p) for `ragmeter compare --fail-on-regression`.

Only the metrics both runs have are compared (`shared`); `only_a` / `only_b` name the others, and
`overall` is then the mean over the shared metrics, so a 10-metric run set beside a 2-metric one is
compared on those 2 and says so, instead of reporting that nothing changed.

Each run records the version of the test set it scored (io/versions.py); when the two differ,
`versions_differ` says so, and the deltas are still over the sample ids both share (n_paired).

Beside the fixed-size test each metric carries the sequential test (`MetricDelta.sequential`: runs/ab.py's
anytime-valid confidence sequence over the same pairs), filled in by service/compare.py when both runs
scored the same dataset, so `ragmeter compare` and the History page show one result with both tests.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Tuple

from ..store.exams import with_exam
from ..store.history import RunInfo, RunStore
from ..store.pages import row as stored_row
from ..model import METHOD_RULE, EvalResult, merged_order, rounded_mean
from ..io.versions import ROWS_KEY, version_of
from .decision import SEQUENTIAL, Comparability, comparability, decide, footnote, shown
from .provenance import Difference, pipeline_changes, scorer_differences
from .stats import paired_bootstrap_ci, paired_permutation_p

TOP_MOVERS = 10


@dataclass(frozen=True)
class SequentialTest:
    """The sequential A/B test of one metric over the paired rows, as candidate − baseline: an interval that may
    stop at any pair (so it is wider than the fixed-size CI), and where it stopped. `decision` is runs/ab.py's:
    "A" (the baseline is better), "B" (the candidate is), "tie" (within the practical margin) or "undecided"."""

    decision: str
    delta: float
    low: float
    high: float
    rows_used: int
    rows_total: int

    @property
    def verdict(self) -> str:
        """The decision in the comparison's words (decision.py): better, worse or no clear change."""
        return SEQUENTIAL[self.decision] if self.decision in SEQUENTIAL else "no clear change"

    def to_dict(self) -> Dict[str, Any]:
        return {"verdict": self.verdict, "decision": self.decision, "delta": self.delta,
                "interval": [self.low, self.high], "rows_used": self.rows_used, "rows_total": self.rows_total}


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
    all_a: Optional[float] = None  # mean over every row run A scored on this metric, paired or not
    all_b: Optional[float] = None
    scored_a: int = 0  # rows run A scored on this metric
    scored_b: int = 0
    p_value: Optional[float] = None  # paired permutation test over the pairs; None without pairs
    half_a: Optional[float] = None  # half-width of the 95% interval of mean_a (normal approximation); None for n < 2
    half_b: Optional[float] = None
    sequential: Optional[SequentialTest] = None  # None: not run (different datasets, or the overall row)

    def dropped(self, alpha: float) -> bool:
        """Whether B is worse than A on this metric at significance level `alpha`."""
        return self.delta is not None and self.delta < 0 and self.p_value is not None and self.p_value < alpha

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
    reason: str = ""  # the first line of B's reasoning for this score


@dataclass
class RowChange:
    """A row scored in one run and missing or unscored in the other ("scored", "missing", or why not)."""

    sample_id: str
    a: str
    b: str
    question: str = ""


@dataclass
class RunComparison:
    """Run B against run A: per-metric deltas (the last is `overall`), the samples that moved most, and
    the rows one run scored and the other lost (`lost`: scored in A, not in B; `gained`: the reverse)."""

    run_a: RunInfo
    run_b: RunInfo
    metrics: List[MetricDelta]
    movers: List[Mover]
    n_paired: int
    only_a: int
    only_b: int
    lost: List[RowChange] = field(default_factory=list)
    gained: List[RowChange] = field(default_factory=list)
    total_a: int = 0
    total_b: int = 0
    worst: List[Mover] = field(default_factory=list)  # the samples whose scores fell most, worst first

    @property
    def version_a(self) -> Optional[str]:
        return version_of(self.run_a.settings)

    @property
    def version_b(self) -> Optional[str]:
        return version_of(self.run_b.settings)

    @property
    def versions_differ(self) -> bool:
        """Whether the runs scored different versions of their test set (unknown for older runs: False)."""
        return bool(self.version_a and self.version_b and self.version_a != self.version_b)

    def version_note(self) -> str:
        """One sentence on the test set versions and which samples the deltas cover."""
        shared = (f"compared on the {self.n_paired} sample ids both share ({self.only_a} only in A, "
                  f"{self.only_b} only in B)")
        if self.versions_differ:
            rows_a = self.run_a.settings.get(ROWS_KEY, self.total_a)
            rows_b = self.run_b.settings.get(ROWS_KEY, self.total_b)
            return (f"The runs scored different versions of the test set: A {self.version_a} ({rows_a} rows), "
                    f"B {self.version_b} ({rows_b} rows); {shared}.")
        if self.version_a and self.version_b:
            return f"Both runs scored test set version {self.version_a}; {shared}."
        unknown = "A" if not self.version_a else "B"
        return f"The test set version of {unknown} is unknown (saved before versions were recorded); {shared}."

    metrics_a: List[str] = field(default_factory=list)  # the metrics each run has, in its order
    metrics_b: List[str] = field(default_factory=list)
    sequential_note: str = ""  # why no metric carries a sequential test, when none does
    scorers_allowed: bool = False  # verdicts across scorers asked for (--allow-different-scorers, the page's box)

    @property
    def comparability(self) -> Comparability:
        """Whether the metrics get verdicts, and if not why not ("scored by different heuristics (...)")."""
        return comparability(self.run_a.settings, self.run_b.settings, self.scorer_differences, self.scorers_allowed)

    def decision(self, d: "MetricDelta", alpha: float) -> str:
        """The metric's one decision (decision.py): better, worse, no clear change or not comparable."""
        return decide(d.delta, d.p_value, alpha, self.comparability.judged)

    def decision_shown(self, d: "MetricDelta", alpha: float) -> str:
        """The decision as every table cell says it: marked "(scorers differ)" when given across scorers."""
        return shown(self.decision(d, alpha), not self.comparability.comparable)

    def footnote(self, d: "MetricDelta", alpha: float) -> str:
        """One sentence where the sequential test reads the metric differently; "" otherwise."""
        interval = ("no interval" if d.ci_low is None or d.ci_high is None
                    else f"95% CI {d.ci_low:+.3f} to {d.ci_high:+.3f}")
        return footnote(d.metric, self.decision(d, alpha), d.sequential, d.n_pairs, interval)

    @property
    def scorer_differences(self) -> List[Difference]:
        """How the baseline (A) and the candidate (B) were scored differently: judge, model, heuristics,
        metric settings, language, dataset version (provenance.py); empty when the scorers match."""
        return scorer_differences(self.run_a.settings, self.run_b.settings)

    @property
    def pipeline_changes(self) -> List[Difference]:
        """What changed in the pipeline under test (target, git commit, prompt version): what is compared."""
        return pipeline_changes(self.run_a.settings, self.run_b.settings)

    @property
    def shared(self) -> List[str]:
        """The metrics both runs have: the only ones compared."""
        return [m for m in self.metrics_a if m in self.metrics_b]

    @property
    def metrics_only_a(self) -> List[str]:
        return [m for m in self.metrics_a if m not in self.metrics_b]

    @property
    def metrics_only_b(self) -> List[str]:
        return [m for m in self.metrics_b if m not in self.metrics_a]

    def metrics_note(self) -> str:
        """Which metrics each side has, in words; "" when both have the same ones."""
        if not self.metrics_only_a and not self.metrics_only_b:
            return ""
        said = [f"A has {len(self.metrics_a)} metrics, B has {len(self.metrics_b)}; compared on the "
                f"{len(self.shared)} both have ({', '.join(self.shared) or 'none'}), overall included."]
        if self.metrics_only_a:
            said.append(f"Only in A: {', '.join(self.metrics_only_a)}.")
        if self.metrics_only_b:
            said.append(f"Only in B: {', '.join(self.metrics_only_b)}.")
        return " ".join(said)

    @property
    def regressions(self) -> List[str]:
        """What got worse from A to B, in words: lost rows first, then metrics clearly worse."""
        found = [f"{len(self.lost)} of {self.total_a} rows scored in A are missing or unscored in B"] if self.lost else []
        return found + [f"{d.metric}: {d.delta:+.3f} (95% CI {d.ci_low:+.3f} to {d.ci_high:+.3f})"
                        for d in self.metrics if d.significant and d.delta is not None and d.delta < 0
                        and d.ci_low is not None and d.ci_high is not None]


def _examined(store: RunStore, info: Any) -> Any:
    """The run's info with its judge's exam in its settings, for the captions (store/exams.py with_exam)."""
    return replace(info, settings=with_exam(store, info.settings))


def compare_runs(store: RunStore, run_a: str, run_b: str) -> RunComparison:
    """Run B against run A, pairing samples by sample_id (by index for samples without one)."""
    info_a, info_b = (_examined(store, store.get_run(r)) for r in (run_a, run_b))
    light_a, light_b = _light(store, run_a), _light(store, run_b)
    keyed_a, keyed_b = _keyed(light_a), _keyed(light_b)
    pairs = [(key, keyed_a[key], keyed_b[key]) for key in keyed_a if key in keyed_b]
    names_a, names_b = _names(keyed_a), _names(keyed_b)
    names = [n for n in merged_order(r.names for r in (*keyed_a.values(), *keyed_b.values()))
             if n in names_a and n in names_b]
    only = None if names_a == names_b else tuple(names)  # overall over the shared metrics when they differ
    deltas = [_with_totals(_metric_delta(name, pairs, only), name, keyed_a, keyed_b, only)
              for name in [*names, OVERALL]]
    full = _Detail(store, (run_a, run_b), (_indices(keyed_a, light_a), _indices(keyed_b, light_b)))
    lost, gained = _lost(keyed_a, keyed_b), _lost(keyed_b, keyed_a, swap=True)
    return RunComparison(
        run_a=info_a, run_b=info_b, metrics=deltas, movers=[full.mover(m) for m in _movers(pairs, names)],
        n_paired=len(pairs), only_a=len(keyed_a) - len(pairs), only_b=len(keyed_b) - len(pairs),
        lost=[full.change(c) for c in lost], gained=[full.change(c, swap=True) for c in gained],
        total_a=len(keyed_a), total_b=len(keyed_b), metrics_a=names_a, metrics_b=names_b,
        worst=[full.mover(m) for m in _worst(pairs, names)],
    )


@dataclass
class _Row:
    """One stored row as a comparison needs it: its scores as numbers (issue 28: read from the narrow
    scores table, so comparing two 200,000-row runs decodes no record and builds no MetricScore)."""

    sample_id: Optional[str]
    names: List[str] = field(default_factory=list)  # every metric it has, skipped ones too, in order
    values: Dict[str, float] = field(default_factory=dict)  # the scored (not skipped) ones
    judged: List[str] = field(default_factory=list)  # those that count in its overall (not rule-based)

    def score(self, name: str, shared: "Shared" = None) -> Optional[float]:
        """Its score on `name`, or its overall (over `shared` when given, as EvalResult.overall_score)."""
        if name != OVERALL:
            return self.values.get(name)
        found = [self.values[n] for n in self.judged if shared is None or n in shared]
        return round(sum(found) / len(found), 4) if found else None


def _light(store: RunStore, run_id: str) -> List[Tuple[int, _Row]]:
    """(index, row) of every stored row, in index order; the text a comparison shows is read by _Detail
    for the few rows it names."""
    rows = {idx: _Row(sample_id) for idx, sample_id in
            store.query("SELECT idx, sample_id FROM results WHERE run_id = ? ORDER BY idx", (run_id,))}
    for idx, metric, score, method, skipped in store.query(
            "SELECT idx, metric, score, method, skipped FROM scores WHERE run_id = ? ORDER BY idx, pos", (run_id,)):
        row = rows.get(idx)
        if row is None:
            continue
        row.names.append(metric)
        if not skipped:
            row.values[metric] = 0.0 if score is None else float(score)
            if method != METHOD_RULE:
                row.judged.append(metric)
    return list(rows.items())


class _Detail:
    """The question, B's reasoning and why a row is unscored, read one row at a time for the rows shown."""

    def __init__(self, store: RunStore, runs: Tuple[str, str], indices: Tuple[Dict[str, int], Dict[str, int]]) -> None:
        self.store, self.runs, self.indices = store, runs, indices

    def result(self, side: int, key: str) -> Optional[EvalResult]:
        idx = self.indices[side].get(key)
        return None if idx is None else stored_row(self.store, self.runs[side], idx)

    def mover(self, m: Mover) -> Mover:
        rb = self.result(1, m.sample_id)
        ms = rb.metric_scores().get(m.metric) if rb is not None else None
        return replace(m, question=rb.sample.question if rb is not None and rb.sample else "",
                       reason=(ms.reasoning.strip().splitlines() or [""])[0] if ms is not None else "")

    def change(self, c: RowChange, swap: bool = False) -> RowChange:
        """`c` with the scored row's question, and the other row's reason (a target's error) when it has one."""
        scored, other = (1, 0) if swap else (0, 1)
        here, there = self.result(scored, c.sample_id), self.result(other, c.sample_id)
        why = _why_unscored(there)
        question = here.sample.question if here is not None and here.sample else ""
        return replace(c, a=why, question=question) if swap else replace(c, b=why, question=question)


def _indices(keyed: Dict[str, _Row], indexed: List[Tuple[int, _Row]]) -> Dict[str, int]:
    """Pairing key -> row index (_keyed keeps the rows' order)."""
    return dict(zip(keyed, (idx for idx, _ in indexed)))


def _names(keyed: Dict[str, _Row]) -> List[str]:
    """The metrics a run has (any row's), in its order; none for a run without rows."""
    return merged_order(r.names for r in keyed.values())


OVERALL = "overall"  # the per-row overall score (EvalResult.overall_score), compared like a metric


Shared = Optional[Tuple[str, ...]]  # the metrics `overall` is taken over (None: all of the row's)


def _with_totals(delta: MetricDelta, name: str, keyed_a: Dict[str, _Row],
                 keyed_b: Dict[str, _Row], shared: Shared = None) -> MetricDelta:
    """`delta` with each run's mean over all its scored rows (not only the pairs) and their counts."""
    found_a = [v for v in (r.score(name, shared) for r in keyed_a.values()) if v is not None]
    found_b = [v for v in (r.score(name, shared) for r in keyed_b.values()) if v is not None]
    delta.all_a, delta.all_b = rounded_mean(found_a), rounded_mean(found_b)
    delta.scored_a, delta.scored_b = len(found_a), len(found_b)
    return delta


def _why_unscored(result: Optional[EvalResult]) -> str:
    if result is None:
        return "missing"
    if result.sample is not None and result.sample.target_error:
        return f"target failed: {result.sample.target_error}"
    return "scored" if result.overall_score() is not None else "no score"


def _lost(keyed_a: Dict[str, _Row], keyed_b: Dict[str, _Row], swap: bool = False) -> List[RowChange]:
    """Rows with a score in `keyed_a` and none (or no row) in `keyed_b` (_Detail.change says why not)."""
    lost = []
    for key, ra in keyed_a.items():
        rb = keyed_b.get(key)
        if ra.score(OVERALL) is None or (rb is not None and rb.score(OVERALL) is not None):
            continue
        there = "missing" if rb is None else "no score"
        lost.append(RowChange(key, there, "scored") if swap else RowChange(key, "scored", there))
    return lost


def _keyed(indexed: List[Tuple[int, _Row]]) -> Dict[str, _Row]:
    """Rows by pairing key: the sample_id (numbered on repeats), or '#<index>' without one."""
    keyed: Dict[str, _Row] = {}
    for index, row in indexed:
        key = str(row.sample_id) if row.sample_id not in (None, "") else f"#{index}"
        base, n = key, 1
        while key in keyed:
            n += 1
            key = f"{base} ({n})"
        keyed[key] = row
    return keyed


def _pair_scores(name: str, pairs, shared: Shared = None) -> List[Tuple[str, float, float]]:
    out = []
    for key, ra, rb in pairs:
        a, b = ra.score(name, shared), rb.score(name, shared)
        if a is not None and b is not None:
            out.append((key, a, b))
    return out


def _metric_delta(name: str, pairs, shared: Shared = None) -> MetricDelta:
    scored = _pair_scores(name, pairs, shared)
    if not scored:
        return MetricDelta(name, None, None, None, None, None, 0)
    n = len(scored)
    mean_a = sum(a for _, a, _ in scored) / n
    mean_b = sum(b for _, _, b in scored) / n
    diffs = [b - a for _, a, b in scored]
    ci = paired_bootstrap_ci(diffs)
    low, high = (None, None) if ci is None else (round(ci[0], 4), round(ci[1], 4))
    p = paired_permutation_p(diffs)
    return MetricDelta(name, round(mean_a, 4), round(mean_b, 4), round(mean_b - mean_a, 4), low, high, n,
                       p_value=None if p is None else round(p, 4), half_a=_half([a for _, a, _ in scored]),
                       half_b=_half([b for _, _, b in scored]))


def _half(values: List[float]) -> Optional[float]:
    """1.96 standard errors of the mean of `values` (the chart's interval for one run); None for fewer than 2."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    return round(1.96 * (sum((v - mean) ** 2 for v in values) / (n - 1) / n) ** 0.5, 4)


def _movers(pairs, names: List[str]) -> List[Mover]:
    moved = _changes(pairs, names)
    moved.sort(key=lambda m: (-abs(m.delta), m.sample_id, names.index(m.metric)))
    return moved[:TOP_MOVERS]


def _worst(pairs, names: List[str]) -> List[Mover]:
    fell = [m for m in _changes(pairs, names) if m.delta < 0]
    fell.sort(key=lambda m: (m.delta, m.sample_id, names.index(m.metric)))
    return fell[:TOP_MOVERS]


def _changes(pairs, names: List[str]) -> List[Mover]:
    """Every changed score of a pair (_Detail.mover adds the question and B's reasoning to those shown)."""
    return [Mover(key, name, a, b, round(b - a, 4)) for name in names
            for key, a, b in _pair_scores(name, pairs) if b != a]
