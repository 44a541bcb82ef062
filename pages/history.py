"""History: every run, saved row by row as it is scored. Reopen, rename, delete, resume, compare."""
import streamlit as st

from evaluator.errors import RagmeterError

from pages import _ui as ui

ui.page_setup("History")

st.title(":material/history: History")
st.caption(f"Runs are saved in `{ui.history_path()}` as they are scored (change the file in the sidebar).")
try:
    store = ui.open_store()
    runs = store.list_runs()
except RagmeterError as exc:
    st.error(f"The run history cannot be opened. {exc}", icon=":material/block:")
    st.stop()
if not runs:
    st.info("No runs yet: every evaluation is saved here automatically.", icon=":material/waving_hand:")
    ui.button_link("Go to Evaluate", ui.EVALUATE_PAGE, key="btn_hist_go_evaluate")
    st.stop()

st.dataframe(ui.runs_table(runs), hide_index=True, width="stretch")
by_id = {r.run_id: r for r in runs}

st.subheader("Manage a run")
run_id = st.selectbox("Run", list(by_id), format_func=lambda i: ui.run_label(by_id[i]), key="hist_run")
info = by_id[run_id]
c1, c2, c3 = st.columns([2, 3, 2])
if c1.button("Open in report", key="btn_hist_open", type="primary", icon=":material/bar_chart:"):
    with ui.guard("Opening the run"):
        ui.open_history_run(store, info)
        st.switch_page(ui.REPORT_PAGE)
new_name = c2.text_input("New name", value=info.name or "", key=f"hist_name_{run_id}", label_visibility="collapsed",
                         placeholder="New name for this run")
if c2.button("Rename", key="btn_hist_rename"):
    with ui.guard("Renaming"):
        store.rename_run(run_id, new_name.strip())
        st.rerun()
if c3.button("Delete run", key="btn_hist_delete", icon=":material/delete:"):
    st.session_state[ui.DELETE_PENDING] = run_id
if st.session_state.get(ui.DELETE_PENDING) == run_id:
    ui.confirm_delete(store, info)
ui.resume_controls(store, info)

st.subheader("Compare two runs")
if len(runs) < 2:
    st.caption("Save a second run (for example after changing your prompt or retriever) to compare them.")
    st.stop()
ids = list(by_id)
c1, c2 = st.columns(2)
run_a = c1.selectbox("Baseline (A)", ids, index=1, format_func=lambda i: ui.run_label(by_id[i]), key="hist_cmp_a")
run_b = c2.selectbox("Compared (B)", ids, index=0, format_func=lambda i: ui.run_label(by_id[i]), key="hist_cmp_b")
if st.button("Compare runs", key="btn_hist_compare", type="primary"):
    with ui.guard("Comparing"):
        st.session_state[ui.COMPARISON] = store.compare_runs(run_a, run_b)
comparison = st.session_state.get(ui.COMPARISON)
if comparison is not None:
    ui.comparison_view(comparison)
