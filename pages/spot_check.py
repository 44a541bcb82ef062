"""Spot check: score one hand-typed sample, in English or Arabic, with the full per-metric view."""
import streamlit as st

from evaluator import EvalSample

from pages import _ui as ui

ui.page_setup("Spot check")

st.title(":material/search: Spot check")
st.caption("Paste one question, its answer and the retrieved contexts to see every metric with its reasoning. "
           "Arabic text is scored with Arabic prompts and shown right-to-left.")

c1, c2, _ = st.columns([1, 1, 2])
c1.button("English example", key="btn_spot_example_en", on_click=ui.fill_spot_example, args=("en",))
c2.button("Arabic example", key="btn_spot_example_ar", on_click=ui.fill_spot_example, args=("ar",))

question = st.text_area("Question", key="spot_question", height=80)
answer = st.text_area("Answer", key="spot_answer", height=100)
contexts = st.text_area("Contexts", key="spot_contexts", height=160,
                        help="One context per line; for contexts that span lines, separate them with a line of ---")
ground_truth = st.text_area("Ground truth (optional)", key="spot_ground_truth", height=80,
                            help="A reference answer enables context recall and answer correctness.")
choice = ui.judge_widgets("spot", run_options=False)

if st.button("Score this sample", type="primary", key="btn_spot_score", icon=":material/search:"):
    if not question.strip():
        st.warning("Type a question first (or load an example).")
    else:
        sample = EvalSample(question.strip(), answer.strip(), ui.split_contexts(contexts),
                            ground_truth.strip() or None, sample_id="spot-check")
        with ui.guard("Scoring the sample"):
            st.session_state[ui.SPOT] = ui.score_one(sample, choice)

result = st.session_state.get(ui.SPOT)
if result is not None:
    st.subheader("Result")
    left, right = st.columns([2, 3])
    with left:
        ui.sample_view(result.sample)
    with right:
        ui.result_view(result)
