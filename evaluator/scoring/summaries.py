"""A stored run's summary (analysis/summary.py), read from the history or built once and stored there.

A run saves its summary when it ends; a run that has none (written before summaries, or interrupted)
gets it on its first open: the one time its rows are all decoded (a page at a time, into a tally), after
which every reader gets the stored summary (a RunSummary read from its JSON). The verdict is decided here, the one layer that may (scoring/verdict.py).
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ..analysis import summary as summaries
from ..analysis.summary import RunSummary
from ..model import EvalReport, Verdict
from ..store.history import RunStore
from ..analysis.tally import ReportTally
from .verdict import from_decision


def of_report(report: EvalReport, settings: Mapping[str, Any], ending: Optional[Verdict] = None) -> RunSummary:
    """The summary of a report held in memory (`ending` defaults to its own verdict): one tally gives both."""
    tally = ReportTally.of(report)
    return summaries.of_tally(tally, settings=settings, verdict=ending or from_decision(tally.decision()))


def stored(store: RunStore, run_id: str) -> RunSummary:
    """The run's stored summary; built from its rows and stored when it has none (or an older version's)."""
    found = store.get_summary(run_id)
    if summaries.current(found):
        assert found is not None
        return RunSummary.from_dict(found)
    info = store.get_run(run_id)
    built = of_store(store, run_id, info.settings, info.verdict, info.total_time or 0.0)
    if info.status != "running":  # a running run's rows are still coming: its summary is built when it ends
        store.save_summary(run_id, built.to_dict())
    return built


def tally_of_store(store: RunStore, run_id: str, total_time: float = 0.0) -> ReportTally:
    """The tally of every row stored for the run, read a page at a time."""
    tally = ReportTally(total_time=total_time, usage=store.stored_usage(run_id))
    return tally.add_all(store.iter_results(run_id))


def of_store(store: RunStore, run_id: str, settings: Mapping[str, Any], ending: Optional[Verdict] = None,
             total_time: float = 0.0) -> RunSummary:
    """The summary of a stored run's rows, read a page at a time (never the whole run at once)."""
    tally = tally_of_store(store, run_id, total_time)
    return summaries.of_tally(tally, settings=settings, verdict=ending or from_decision(tally.decision()))
