"""A run's summary: everything its Report shows that SQL cannot give cheaply, computed once from its rows.

Built when a run ends (runs/run.py, from the tally its rows were counted into as they finished:
analysis/tally.py) and stored with it (RunStore.save_summary), or built on the first open of a run
that has none (an older or interrupted one; its rows are read back in pages): bootstrap CIs, the verdict, agreement with
human labels and other tools' grades, judge noise, usage, target figures, the histogram and category
aggregates the charts draw. Pages then never hold a run's rows.

`RunSummary` is a frozen dataclass of typed parts, so every reader (the report files, the CLI, the pages)
reads attributes mypy checks; `to_dict()`/`from_dict()` are its stored JSON, whose keys are those the
history has always held (VERSION 2), so summaries stored before the dataclass still open as they are.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..model import EvalReport, RowCounts, Verdict, report_table
from . import judging
from .agreement import CalibrationBin, MetricAgreement
from .noise import JudgeNoise
from .stats import MetricSummary
from .tally import ReportTally

VERSION = 2  # a stored summary of another version is rebuilt on open; bump it when to_dict's shape changes
MAX_CATEGORY_NAMES = 1_000  # the Category filter offers the largest ones


@dataclass(frozen=True)
class Decision:
    """Everything the run's verdict is decided from (scoring.verdict.from_decision reads `to_dict()`)."""

    counts: RowCounts
    means: Dict[str, Optional[float]]  # each metric's mean and "overall" (None: N/A)
    stopped: Optional[str] = None
    judge_cause: Optional[str] = None
    target_cause: Optional[str] = None
    nothing_cause: Optional[str] = None

    @classmethod
    def from_dict(cls, found: Mapping[str, Any]) -> "Decision":
        return cls(RowCounts(**found["counts"]), dict(found.get("means") or {}), found.get("stopped"),
                   found.get("judge_cause"), found.get("target_cause"), found.get("nothing_cause"))

    def to_dict(self) -> Dict[str, Any]:
        return {"counts": asdict(self.counts), "means": dict(self.means), "stopped": self.stopped,
                "judge_cause": self.judge_cause, "target_cause": self.target_cause,
                "nothing_cause": self.nothing_cause}


@dataclass(frozen=True)
class Trust:
    """How far the scores can be trusted: a stopped judge, fallbacks to the heuristic, offline scoring."""

    stopped: Optional[str] = None
    fallback: int = 0  # judged scores that fell back to the heuristic
    judged: int = 0  # scores the judge was asked for
    main_cause: Optional[str] = None
    offline: bool = False
    language_note: Optional[str] = None


@dataclass(frozen=True)
class TargetStats:
    """The pipeline under test: calls, failures and latency percentiles (None when unknown)."""

    calls: int
    failures: int
    p50_ms: Optional[float] = None
    p95_ms: Optional[float] = None


@dataclass(frozen=True)
class HistogramBin:
    """How many of a metric's scores fall in [bin_start, bin_end)."""

    metric: str
    bin_start: float
    bin_end: float
    count: int


@dataclass(frozen=True)
class CategoryMean:
    """A metric's mean over the rows of one category (the smaller categories pooled as one)."""

    category: str
    metric: str
    mean: float
    n: int


@dataclass(frozen=True)
class TurnMean:
    """A conversation run's metric over every assistant turn: its mean, turns scored, turns that have it."""

    mean: Optional[float]
    scored: int
    total: int


@dataclass(frozen=True)
class WorstTurn:
    """The run's lowest-scored assistant turn."""

    row: int
    turn: int
    overall: float
    sample_id: Optional[str] = None


@dataclass(frozen=True)
class RunSummary:
    """A run's figures (see the module docstring); `to_dict()` is what the history stores."""

    n_rows: int
    total_time: float
    decision: Decision
    metric_names: Tuple[str, ...] = ()
    metrics: Tuple[MetricSummary, ...] = ()
    overall_mean: Optional[float] = None
    n_overall: int = 0
    usage: Mapping[str, Any] = field(default_factory=dict)
    verdict: Optional[Verdict] = None
    judge_status: str = ""
    trust: Trust = Trust()
    noise: Tuple[JudgeNoise, ...] = ()
    target: Optional[TargetStats] = None
    agreement: Mapping[str, MetricAgreement] = field(default_factory=dict)
    histogram: Tuple[HistogramBin, ...] = ()
    categories: Tuple[CategoryMean, ...] = ()
    category_names: Tuple[str, ...] = ()
    external_columns: Tuple[str, ...] = ()
    conversations: bool = False
    turns: Mapping[str, TurnMean] = field(default_factory=dict)
    n_turns: int = 0
    worst_turn: Optional[WorstTurn] = None

    def histogram_rows(self) -> List[Dict[str, Any]]:
        """The histogram as the charts draw it (analysis.charts.histogram_chart)."""
        return [asdict(b) for b in self.histogram]

    def category_rows(self) -> List[Dict[str, Any]]:
        """The category means as the charts draw them (analysis.charts.category_heatmap)."""
        return [asdict(c) for c in self.categories]

    def target_dict(self) -> Dict[str, Any]:
        """The target's figures as a plain dict ({} when no target answered)."""
        return {} if self.target is None else asdict(self.target)

    def to_dict(self) -> Dict[str, Any]:
        """The stored JSON (the keys every VERSION-2 summary has)."""
        return {
            "version": VERSION, "n_rows": self.n_rows, "total_time": self.total_time, "usage": dict(self.usage),
            "metric_names": list(self.metric_names), "metrics": [asdict(s) for s in self.metrics],
            "overall_mean": self.overall_mean, "n_overall": self.n_overall,
            "verdict": None if self.verdict is None else self.verdict.to_dict(),
            "decision": self.decision.to_dict(), "judge_status": self.judge_status, "trust": asdict(self.trust),
            "noise": [n.to_dict() for n in self.noise], "target": None if self.target is None else asdict(self.target),
            "agreement": {key: asdict(a) for key, a in self.agreement.items()},
            "histogram": self.histogram_rows(), "categories": self.category_rows(),
            "category_names": list(self.category_names), "external_columns": list(self.external_columns),
            "conversations": self.conversations, "turns": {m: asdict(t) for m, t in self.turns.items()},
            "n_turns": self.n_turns, "worst_turn": None if self.worst_turn is None else asdict(self.worst_turn),
        }

    @classmethod
    def from_dict(cls, found: Mapping[str, Any]) -> "RunSummary":
        """A stored summary read back (`current(found)` says whether this version reads it)."""
        target, worst, verdict = found.get("target"), found.get("worst_turn"), found.get("verdict")
        return cls(
            n_rows=int(found.get("n_rows") or 0), total_time=float(found.get("total_time") or 0.0),
            decision=Decision.from_dict(found["decision"]), metric_names=tuple(found.get("metric_names") or ()),
            metrics=tuple(MetricSummary(**m) for m in found.get("metrics") or ()),
            overall_mean=found.get("overall_mean"), n_overall=int(found.get("n_overall") or 0),
            usage=dict(found.get("usage") or {}), verdict=Verdict.from_dict(verdict) if verdict else None,
            judge_status=str(found.get("judge_status") or ""), trust=Trust(**(found.get("trust") or {})),
            noise=tuple(JudgeNoise(**n) for n in found.get("noise") or ()),
            target=TargetStats(**target) if target else None,
            agreement={key: _agreement(a) for key, a in (found.get("agreement") or {}).items()},
            histogram=tuple(HistogramBin(**b) for b in found.get("histogram") or ()),
            categories=tuple(CategoryMean(**c) for c in found.get("categories") or ()),
            category_names=tuple(found.get("category_names") or ()),
            external_columns=tuple(found.get("external_columns") or ()),
            conversations=bool(found.get("conversations")),
            turns={m: TurnMean(**t) for m, t in (found.get("turns") or {}).items()},
            n_turns=int(found.get("n_turns") or 0), worst_turn=WorstTurn(**worst) if worst else None)


def _agreement(found: Mapping[str, Any]) -> MetricAgreement:
    return MetricAgreement(**{**found, "calibration": [CalibrationBin(**b) for b in found.get("calibration") or []]})


def build(report: EvalReport, *, settings: Optional[Mapping[str, Any]] = None,
          verdict: Optional[Verdict] = None) -> RunSummary:
    """The summary of `report`; `verdict` is the caller's (scoring decides it)."""
    return of_tally(ReportTally.of(report), settings=settings, verdict=verdict)


def of_tally(tally: ReportTally, *, settings: Optional[Mapping[str, Any]] = None,
             verdict: Optional[Verdict] = None) -> RunSummary:
    """The summary of the rows `tally` counted (a report's, or a run's as they streamed past)."""
    fallback, judged = judging.tallied_fallbacks(tally.methods())
    decision = Decision.from_dict(tally.decision())
    cause = decision.judge_cause
    target = tally.target_stats()
    return RunSummary(
        n_rows=tally.n, total_time=tally.total_time, usage=dict(tally.usage), decision=decision,
        metric_names=tuple(tally.metric_names()), metrics=tuple(tally.summaries()),
        overall_mean=decision.means.get("overall"), n_overall=len(tally.overall.values), verdict=verdict,
        judge_status=judging.status_line(dict(settings or {}), tally.usage, tally.is_offline, lambda: cause),
        trust=Trust(stopped=tally.stopped(), fallback=fallback, judged=judged, main_cause=cause,
                    offline=tally.is_offline(), language_note=tally.language_note()),
        noise=tuple(tally.judge_noise()), target=TargetStats(**target) if target else None,
        agreement=dict(tally.agreement()), histogram=tuple(HistogramBin(**b) for b in tally.histogram()),
        categories=tuple(CategoryMean(**c) for c in tally.category_rows()),
        category_names=tuple(sorted(tally.largest_categories(MAX_CATEGORY_NAMES))),
        external_columns=tuple(sorted(tally.external_columns)), conversations=tally.conversations,
        turns={m: TurnMean(**t) for m, t in tally.turn_means().items()} if tally.conversations else {},
        n_turns=tally.n_turns, worst_turn=WorstTurn(**tally.worst_turn) if tally.worst_turn else None)


def format_summary(summary: RunSummary) -> str:
    """The printed report table (EvalReport.format_report's) from a summary: the CLI prints it for a run
    whose rows it never held."""
    rows = [(s.name, s.mean, s.std, s.n_scored) for s in summary.metrics]
    found = summary.turns
    turns = ({m: t.mean for m, t in found.items()}, {m: (t.scored, t.total) for m, t in found.items()}) \
        if summary.conversations else None
    return report_table(summary.n_rows, summary.total_time, rows, summary.overall_mean, summary.n_overall,
                        target=summary.target_dict() or None, language=summary.trust.language_note, turns=turns)


def current(summary: Optional[Mapping[str, Any]]) -> bool:
    """Whether a stored summary is one this version reads (else it is rebuilt)."""
    return bool(summary) and summary.get("version") == VERSION  # type: ignore[union-attr]


def metric_summaries(summary: RunSummary) -> List[MetricSummary]:
    return list(summary.metrics)


def agreement(summary: RunSummary) -> Dict[str, MetricAgreement]:
    """The agreement table as agreement.agreement_table returns it (may be empty)."""
    return dict(summary.agreement)


def noise(summary: RunSummary) -> List[JudgeNoise]:
    return list(summary.noise)


def verdict_of(summary: RunSummary) -> Optional[Verdict]:
    return summary.verdict
