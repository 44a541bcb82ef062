"""Evaluate: pick the data, check how columns are read, choose a judge, run with live progress."""
from dataclasses import replace

import streamlit as st

from pages import _dataset_form as dataset_form
from pages import _judge as judge_ui
from pages import _nav as nav
from pages import _rubrics as rubric_ui
from pages import _run_panel as run_panel
from pages import _state as state
from pages import _target as target_ui
from pages import _team as team

nav.page_setup()
team.require("evaluator")  # team mode: viewers open reports and history, but do not upload or run

st.title(":material/science: Evaluate")
st.caption("Score every sample on faithfulness, answer relevancy, context precision, context recall and "
           "answer correctness, or the metrics you choose and define. The bundled sample and the offline "
           "judge work with no key: just press Run.")
answers = target_ui.answers_source()
dataset = dataset_form.dataset_step(needs_answer=answers == target_ui.FROM_FILE)
if dataset is None:  # nothing to score: the sidebar must not go on naming the last dataset
    state.drop(state.DATASET)
else:
    state.put(state.DATASET, dataset)
nav.refresh_sidebar()  # drawn before this page chose its dataset

piped = answers == target_ui.FROM_PIPELINE
step, target = 2, None
if piped:
    st.subheader(f"{step} · Your pipeline")
    target = target_ui.target_form()
    target_ui.try_target_button(target, dataset.samples if dataset is not None else None)
    step += 1
st.subheader(f"{step} · Judge")
config = judge_ui.judge_widgets("eval")
judge_ui.check_panel("eval", config)
st.subheader(f"{step + 1} · Metrics")
config = replace(config, **rubric_ui.metric_widgets(config.offline))
if dataset is not None and config.metrics:
    run_panel.estimate_view(dataset, config)
run_panel.run_step(dataset, config, step + 2, target=target, needs_target=piped)
