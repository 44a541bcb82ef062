"""Monitor: a project's production traces over time (means with bands per hour or day, deploys) and its alerts."""
import streamlit as st

from evaluator import service

from pages import _errors as errors
from pages import _monitor_data as monitor
from pages import _nav as nav
from pages import _receivers as receivers
from pages import _runs as runs

nav.page_setup()

st.title(":material/monitoring: Monitor")
try:
    store = runs.open_store()
    location = str(store.location)
    # a project whose receiver this dashboard runs is listed before its first trace (and says why none came)
    projects = monitor.projects(location, store) + [p for p in receivers.projects() if p not in
                                                    monitor.projects(location, store)]
except service.RagmeterError as exc:
    errors.error("The run history cannot be opened. {problem}", problem=exc, icon=":material/block:")
    st.stop()
if not projects:
    monitor.empty_state()
    st.stop()

c1, c2, c3 = st.columns([2, 1, 1])
project = c1.selectbox("Project", projects, key="mon_project")
receivers.show(project)
step = c2.segmented_control("Per", ["hour", "day"], default="hour", key="mon_step") or "hour"
days = c3.selectbox("Last", monitor.DAYS, index=2, format_func=lambda d: f"{d} days", key="mon_days")
with errors.guard("Reading the live runs"):
    line = monitor.timeline(location, project, days, step, store)
    fired = monitor.events(location, project, store)
    if line.empty:
        monitor.empty_state(project)
    else:
        st.caption("Each point is the mean of the traces scored in that hour or day, with its 95% band; "
                   "click a point to open its run's report. Triangles: alerts (red breach, green recovery).")
        monitor.charts(line, fired)
    monitor.alerts_table(fired)
    if not line.empty:
        monitor.drill_down(store, line)
