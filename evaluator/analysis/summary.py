"""A run's summary: everything its Report shows that SQL cannot give cheaply, computed once from its rows.

Built when a run ends (runs/run.py, from the tally its rows were counted into as they finished:
analysis/tally.py) and stored with it (RunStore.save_summary), or built on the first open of a run
that has none (an older or interrupted one; its rows are read back in pages): bootstrap CIs, the verdict, agreement with
human labels and other tools' grades, judge noise, usage, target figures, the histogram and category
aggregates the charts draw. A plain JSON-able dict, so the history stores it as it is; the readers
below turn its parts back into the dataclasses the sections draw. Pages then never hold a run's rows.
"""
from __future__ import annotations

from dataclasses import asdict
from typing import Any, Dict, List, Mapping, Optional

from ..model import EvalReport, Verdict, report_table
from . import judging
from .agreement import CalibrationBin, MetricAgreement
from .noise import JudgeNoise
from .stats import MetricSummary
from .tally import ReportTally

VERSION = 2  # a stored summary of another version is rebuilt on open
MAX_CATEGORY_NAMES = 1_000  # the Category filter offers the largest ones


def build(report: EvalReport, *, settings: Optional[Mapping[str, Any]] = None,
          verdict: Optional[Verdict] = None) -> Dict[str, Any]:
    """The summary of `report`; `verdict` is the caller's (scoring decides it)."""
    return of_tally(ReportTally.of(report), settings=settings, verdict=verdict)


def of_tally(tally: ReportTally, *, settings: Optional[Mapping[str, Any]] = None,
             verdict: Optional[Verdict] = None) -> Dict[str, Any]:
    """The summary of the rows `tally` counted (a report's, or a run's as they streamed past)."""
    fallback, judged = judging.tallied_fallbacks(tally.methods())
    decision = tally.decision()
    cause = decision["judge_cause"]
    return {
        "version": VERSION,
        "n_rows": tally.n,
        "total_time": tally.total_time,
        "usage": dict(tally.usage),
        "metric_names": tally.metric_names(),
        "metrics": [asdict(s) for s in tally.summaries()],
        "overall_mean": decision["means"]["overall"],
        "n_overall": len(tally.overall.values),
        "verdict": None if verdict is None else verdict.to_dict(),
        "decision": decision,
        "judge_status": judging.status_line(dict(settings or {}), tally.usage, tally.is_offline, lambda: cause),
        "trust": {"stopped": tally.stopped(), "fallback": fallback, "judged": judged,
                  "main_cause": cause, "offline": tally.is_offline(), "language_note": tally.language_note()},
        "noise": [n.to_dict() for n in tally.judge_noise()],
        "target": tally.target_stats(),
        "agreement": {key: asdict(a) for key, a in tally.agreement().items()},
        "histogram": tally.histogram(),
        "categories": tally.category_rows(),
        "category_names": sorted(tally.largest_categories(MAX_CATEGORY_NAMES)),
        "external_columns": sorted(tally.external_columns),
        "conversations": tally.conversations,
        "turns": tally.turn_means() if tally.conversations else {},
        "n_turns": tally.n_turns,
        "worst_turn": tally.worst_turn,
    }


def format_summary(summary: Mapping[str, Any]) -> str:
    """The printed report table (EvalReport.format_report's) from a summary: the CLI prints it for a run
    whose rows it never held."""
    n = int(summary.get("n_rows") or 0)
    rows = [(s.name, s.mean, s.std, s.n_scored) for s in metric_summaries(summary)]
    found = summary.get("turns") or {}
    turns = ({m: t["mean"] for m, t in found.items()}, {m: (t["scored"], t["total"]) for m, t in found.items()}) \
        if summary.get("conversations") else None
    return report_table(n, float(summary.get("total_time") or 0.0), rows, summary.get("overall_mean"),
                        summary.get("n_overall", n), target=summary.get("target"),
                        language=(summary.get("trust") or {}).get("language_note"), turns=turns)


def current(summary: Optional[Mapping[str, Any]]) -> bool:
    """Whether a stored summary is one this version reads (else it is rebuilt)."""
    return bool(summary) and summary.get("version") == VERSION  # type: ignore[union-attr]


def metric_summaries(summary: Mapping[str, Any]) -> List[MetricSummary]:
    return [MetricSummary(**m) for m in summary.get("metrics") or []]


def agreement(summary: Mapping[str, Any]) -> Dict[str, MetricAgreement]:
    """The agreement table as agreement.agreement_table returns it (may be empty)."""
    return {key: MetricAgreement(**{**a, "calibration": [CalibrationBin(**b) for b in a.get("calibration") or []]})
            for key, a in (summary.get("agreement") or {}).items()}


def noise(summary: Mapping[str, Any]) -> List[JudgeNoise]:
    return [JudgeNoise(**n) for n in summary.get("noise") or []]


def verdict_of(summary: Mapping[str, Any]) -> Optional[Verdict]:
    found = summary.get("verdict")
    return Verdict.from_dict(found) if found else None
