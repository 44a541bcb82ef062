"""The Monitor page's data and sections: a project's live runs over time and its alerts, read through the
service (service.timeline, service.alert_events), cached for a short while (the collector keeps writing) and
keyed by the history's location, so every session shares one read."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import streamlit as st

from evaluator import service

from pages import _errors as errors
from pages import _runs as runs
from pages import _team as team
from pages import _views as views

TTL = 30  # seconds a read is reused: a live run grows by the minute, the page need not re-read every rerun
DAYS = (1, 7, 14, 30)
COLLECT_HELP = ("ragmeter collect --listen 127.0.0.1:4318 --project NAME --sample 0.1 "
                "--alert \"faithfulness < 0.75 over 200\" --webhook URL")


def report_link(run_id: Optional[str]) -> Optional[str]:
    """The Report's share link of a run (the drill-down of its samples), on this dashboard's address."""
    return runs.share_url(team.share_link("report", run=run_id)) if run_id else None


@st.cache_data(ttl=TTL, max_entries=4, show_spinner=False)
def projects(location: str, _store: service.RunStore) -> List[str]:
    return service.live_projects(_store)


@st.cache_data(ttl=TTL, max_entries=16, show_spinner="Reading the live runs…")
def timeline(location: str, project: str, days: int, step: str, _store: service.RunStore) -> service.Timeline:
    return service.timeline(_store, project, days, step)


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def events(location: str, project: str, _store: service.RunStore) -> List[service.AlertEvent]:
    return service.alert_events(_store, project)


def chart_rows(points: Sequence[service.Point]) -> List[Dict[str, Any]]:
    """A metric's points as the chart draws them; each links to the report of its (first) run."""
    return [{"time": p.start, "mean": round(p.mean, 4), "low": p.low, "high": p.high, "n": p.n,
             "run": ", ".join(p.run_ids), "href": report_link(p.run_ids[0])} for p in points]


def deploy_rows(deploys: Sequence[service.Deploy]) -> List[Dict[str, Any]]:
    return [{"at": d.at, "version": d.version, "previous": d.previous} for d in deploys]


def charts(line: service.Timeline, fired: Sequence[service.AlertEvent] = ()) -> None:
    """One chart per metric, its points linking to their runs' reports, its alerts marked."""
    marks = deploy_rows(line.deploys)
    for metric, points in line.points.items():
        shown = [{"at": e.at, "value": e.value, "state": e.state, "rule": e.rule} for e in fired
                 if e.metric == metric and e.at >= line.since]
        st.altair_chart(service.timeline_chart(metric, chart_rows(points), marks, shown), width="stretch")
    if line.deploys:
        st.caption("Dashed red lines: deploys (the traced service's version changed).")
        views.records_table([{"at": d.at, "version": d.version, "after": d.previous} for d in line.deploys])


def alerts_table(found: Sequence[service.AlertEvent]) -> None:
    """Breaches and recoveries, newest first, each linking to the run of the row that moved the mean."""
    st.subheader("Alerts")
    if not found:
        st.caption("No alert has fired for this project. Rules are set where the collector runs "
                   "(`--alert \"faithfulness < 0.75 over 200\"`).")
        return
    rows = [{"at": e.at, "state": e.state, "rule": e.rule, "mean": e.value, "limit": e.threshold,
             "sample": e.idx, "report": report_link(e.run_id), "webhook": e.delivery or "not posted"}
            for e in found]
    views.records_table(rows, column_config={
        "mean": st.column_config.NumberColumn(format="%.3f"), "limit": st.column_config.NumberColumn(format="%.3f"),
        "report": st.column_config.LinkColumn("report", display_text="open run")})


def drill_down(store: service.RunStore, line: service.Timeline) -> None:
    """The samples behind one point: its runs, their sample numbers, and a link to each run's report."""
    st.subheader("Samples behind a point")
    buckets = sorted({p.bucket for points in line.points.values() for p in points}, reverse=True)
    bucket = st.selectbox("Point", buckets, key="mon_point", help="Newest first; the report opens the run.")
    if not bucket:
        return
    found = service.samples_at(store, line.project, bucket)
    by_run: Dict[str, List[int]] = {}
    for run_id, idx in found:
        by_run.setdefault(run_id, []).append(idx)
    views.records_table([{"run": run_id, "samples": _ranges(indices), "count": len(indices),
                          "report": report_link(run_id)} for run_id, indices in by_run.items()],
                        column_config={"report": st.column_config.LinkColumn("report", display_text="open run")})
    if len(found) >= service.MAX_DRILL:
        st.caption(f"Listing the first {service.MAX_DRILL:,} samples of this point.")


def _ranges(indices: Sequence[int]) -> str:
    """`#3–#7, #9`: sample numbers as runs of consecutive ones."""
    spans: List[Tuple[int, int]] = []
    for i in sorted(indices):
        if spans and i == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], i)
        else:
            spans.append((i, i))
    return ", ".join(f"#{a}" if a == b else f"#{a}–#{b}" for a, b in spans)


def empty_state(project: Optional[str] = None) -> None:
    """What to do when there is nothing to chart: start a collector."""
    if project is None:
        errors.info("No production traces yet. Start a collector beside your app; it scores sampled traces "
                    "into a live run per project and day, charted here:", icon=":material/sensors:")
    else:
        errors.info("No scored traces for {project} in this window. Widen the window, or check that the "
                    "collector for this project is running:", project=project, icon=":material/sensors:")
    st.code(COLLECT_HELP, language="bash")
