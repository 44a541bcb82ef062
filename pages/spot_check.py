"""Spot check: score one hand-typed sample, in English or Arabic, with the full per-metric view."""
import streamlit as st

from pages import _errors as errors
from pages import _judge as judge_ui
from pages import _nav as nav
from pages import _spot as spot
from pages import _state as state
from pages import _team as team
from pages import _views as views

nav.page_setup()
team.require("evaluator")  # a spot check calls the judge: evaluators only in team mode

st.title(":material/search: Spot check")
st.caption("Paste one question, its answer and the retrieved contexts to see every metric with its reasoning. "
           "Arabic text is scored with Arabic prompts and shown right-to-left.")

c1, c2, _ = st.columns([1, 1, 2])
c1.button("English example", key="btn_spot_example_en", on_click=spot.fill_example, args=("en",))
c2.button("Arabic example", key="btn_spot_example_ar", on_click=spot.fill_example, args=("ar",))

question = st.text_area("Question", key=state.SPOT_QUESTION, height=80, persist_state=state.KEEP)
answer = st.text_area("Answer", key=state.SPOT_ANSWER, height=100, persist_state=state.KEEP)
contexts = st.text_area("Contexts", key=state.SPOT_CONTEXTS, height=160, persist_state=state.KEEP,
                        help="One context per line; for contexts that span lines, separate them with a line of ---")
ground_truth = st.text_area("Ground truth (optional)", key=state.SPOT_GROUND_TRUTH, height=80,
                            persist_state=state.KEEP,
                            help="A reference answer enables context recall and answer correctness.")
config = judge_ui.judge_widgets(spot.PREFIX, run_options=False)

if st.button("Score this sample", type="primary", key="btn_spot_score", icon=":material/search:"):
    if not question.strip():
        errors.warning("Type a question first (or load an example).")
    else:
        with errors.guard("Scoring the sample"):
            state.put(state.SPOT, spot.score(question, answer, contexts, ground_truth, config))

result = state.spot_result()
if result is not None:
    st.subheader("Result")
    views.result_view(result)
