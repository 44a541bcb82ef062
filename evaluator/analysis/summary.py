"""A run's summary: everything its Report shows that SQL cannot give cheaply, computed once from the whole report.

Built when a run ends (runs/run.py) and stored with it (RunStore.save_summary), or built on the first
open of a run that has none (an older or interrupted one): bootstrap CIs, the verdict, agreement with
human labels and other tools' grades, judge noise, usage, target figures, the histogram and category
aggregates the charts draw. A plain JSON-able dict, so the history stores it as it is; the readers
below turn its parts back into the dataclasses the sections draw. Pages then never hold a run's rows.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from typing import Any, Dict, List, Mapping, Optional

from ..model import EvalReport, Verdict
from . import judging
from .aggregate import category_rows, histogram_rows
from .agreement import CalibrationBin, MetricAgreement, agreement_table, external_pairs
from .noise import JudgeNoise, judge_noise
from .stats import MetricSummary, summarize

VERSION = 1  # a stored summary of another version is rebuilt on open
MAX_CATEGORY_NAMES = 1_000  # the Category filter offers the largest ones


def build(report: EvalReport, *, settings: Optional[Mapping[str, Any]] = None,
          verdict: Optional[Verdict] = None) -> Dict[str, Any]:
    """The summary of `report` (one pass per figure over its rows); `verdict` is the caller's (scoring decides it)."""
    fallback, judged = judging.fallback_counts(report)
    agreement = {**agreement_table(report), **agreement_table(external_pairs(report))}
    return {
        "version": VERSION,
        "n_rows": len(report.results),
        "total_time": report.total_time,
        "usage": dict(report.usage or {}),
        "metric_names": report.metric_names(),
        "metrics": [asdict(s) for s in summarize(report)],
        "overall_mean": report.overall_mean(),
        "verdict": None if verdict is None else verdict.to_dict(),
        "judge_status": judging.judge_status(report, dict(settings or {})),
        "trust": {"stopped": judging.stopped_reason(report), "fallback": fallback, "judged": judged,
                  "main_cause": judging.main_cause(report), "offline": judging.is_offline(report),
                  "language_note": report.language_note()},
        "noise": [n.to_dict() for n in judge_noise(report)],
        "target": report.target_stats(),
        "agreement": {key: asdict(a) for key, a in agreement.items()},
        "histogram": histogram_rows(report),
        "categories": category_rows(report),
        "category_names": _category_names(report),
        "external_columns": sorted({k for r in report.results if r.sample is not None
                                    for k in (r.sample.metadata or {}).get("external_scores") or {}}),
        "conversations": report.multi_turn,
    }


def _category_names(report: EvalReport) -> List[str]:
    sizes = Counter(str(r.sample.category) for r in report.results
                    if r.sample is not None and r.sample.category not in (None, ""))
    return sorted(c for c, _ in sizes.most_common(MAX_CATEGORY_NAMES))


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
