"""History: every run, saved row by row as it is scored; a project over time. Reopen, rename, delete, resume,
compare."""
import streamlit as st

from evaluator import service

from pages import _errors as errors
from pages import _history_sections as sections
from pages import _nav as nav
from pages import _runs as runs
from pages import _views as views

nav.page_setup()

st.title(":material/history: History")
runs.active_runs("hist")  # every queued and running run, live, with Stop for its owner and admins
try:
    store = runs.open_store()
    found = sections.list_runs(store)
except service.RagmeterError as exc:
    errors.error("The run history cannot be opened. {problem}", problem=exc, icon=":material/block:")
    st.stop()
if not found:
    errors.info("No runs yet: every evaluation is saved here automatically.", icon=":material/waving_hand:")
    nav.button_link("Go to Evaluate", nav.EVALUATE_PAGE, key="btn_hist_go_evaluate")
    st.stop()

views.records_table(sections.runs_table(found), column_config={"overall": sections.THREE})
by_id = {r.run_id: r for r in found}
sections.trend_view(store, found)

st.subheader("Manage a run")
run_id = st.selectbox("Run", list(by_id), format_func=lambda i: sections.run_label(by_id[i]), key="hist_run")
sections.manage(store, by_id[run_id])

st.subheader("Compare two runs")
if len(found) < 2:
    st.caption("Save a second run (for example after changing your prompt or retriever) to compare them.")
    st.stop()
sections.compare_controls(store, by_id)
