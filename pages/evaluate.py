"""Evaluate: pick the data, check how columns are read, choose a judge, run with live progress."""
from typing import Optional

import streamlit as st

from evaluator.errors import DatasetError

from pages import _ui as ui

ui.page_setup("Evaluate")

st.title(":material/science: Evaluate")
st.caption("Score every sample on faithfulness, answer relevancy, context precision, context recall and "
           "answer correctness. The bundled sample and the offline judge work with no key: just press Run.")


def read_source() -> Optional[tuple]:
    """(file name, bytes) of the bundled sample or the upload; None while nothing is uploaded."""
    source = st.radio("Data source", ["Bundled sample", "Upload a file"], key="eval_source", horizontal=True)
    if source == "Bundled sample":
        name = st.selectbox("Sample file", ui.bundled_files(), key="eval_sample_file")
        return (name, (ui.SAMPLE_DIR / name).read_bytes()) if name else None
    st.file_uploader("CSV, JSONL or JSON file", type=["csv", "tsv", "jsonl", "ndjson", "json"],
                     key="upload_file", on_change=ui.remember_upload,
                     help="Columns: question, answer, contexts, optional ground_truth, sample_id, category, "
                          "human_<metric> labels. Mapping below if yours are named differently.")
    if ui.UPLOAD not in st.session_state:
        st.info("Upload a file to continue, or switch back to the bundled sample.")
    return st.session_state.get(ui.UPLOAD)


def dataset_step() -> Optional[ui.LoadedDataset]:
    st.subheader("1 · Data")
    with st.expander("Upload limits"):
        c1, c2 = st.columns(2)
        max_rows = int(c1.number_input("Max rows", 1, 10_000_000, ui.DEFAULT_MAX_ROWS, key="eval_max_rows"))
        max_mb = c2.number_input("Max file size (MB)", 1, ui.DEFAULT_MAX_MB, ui.DEFAULT_MAX_MB, key="eval_max_mb")
    picked = read_source()
    if picked is None:
        return None
    name, data = picked
    try:
        pre = ui.preview(data, name, int(max_mb * 1_000_000))
        st.caption(f"**{name}** · {pre.format.upper()} · {pre.row_count:,} rows · {len(pre.columns)} columns"
                   + (f" · human labels: {', '.join(pre.label_columns)}" if pre.label_columns else ""))
        st.dataframe(ui.preview_rows(pre), hide_index=True, width="stretch")
        with st.expander("Column mapping", expanded=bool(pre.missing)):
            mapping = ui.mapping_widgets(pre, ui.digest(data))
        dataset = ui.load_bytes(data, name, mapping, max_rows=max_rows, max_bytes=int(max_mb * 1_000_000))
    except DatasetError as exc:
        st.error(f"Cannot use this file. {exc}", icon=":material/block:")
        return None
    st.session_state[ui.DATASET] = dataset
    return dataset


def run_step(dataset: Optional[ui.LoadedDataset], choice: ui.JudgeChoice) -> None:
    st.subheader("3 · Run")
    live: Optional[ui.LiveRun] = st.session_state.get(ui.LIVE)
    busy = live is not None and live.running
    clicked = st.button("Run evaluation", type="primary", key="btn_run", disabled=busy or dataset is None)
    if clicked and not busy:  # a click sent while the button was still enabled must not start a second run
        with ui.guard("Starting the run"):
            live = ui.start_run(list(enumerate(dataset.samples)), choice, dataset_name=dataset.name)
    if live is not None:
        controls = st.empty()
        with controls.container():
            if st.button("Stop run", key="btn_stop", help="Finish the samples in flight, keep every finished row."):
                live.stop.set()
            if live.stop.is_set():
                st.caption("Stopping: finishing the samples in flight. Every finished row is kept.")
        ui.watch(live)
        controls.empty()
    ui.run_outcome()


dataset = dataset_step()
st.subheader("2 · Judge")
choice = ui.judge_widgets("eval")
if dataset is not None:
    ui.estimate_view(dataset, choice)
run_step(dataset, choice)
