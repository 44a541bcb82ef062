"""Spot check: score one hand-typed sample, in English or Arabic, with the full per-metric view."""
from typing import List

import streamlit as st

from evaluator import EvalSample
from evaluator.judges.base import close_judge
from evaluator.model import EvalResult
from evaluator.runs import RunConfig

from pages import _team as team
from pages import _ui as ui

ui.page_setup("Spot check")
team.require("evaluator")  # a spot check calls the judge: evaluators only in team mode

EXAMPLES = {
    "en": {
        "spot_question": "How long does the warranty on the kettle last?",
        "spot_answer": "The kettle has a two-year warranty that covers manufacturing defects.",
        "spot_contexts": "Warranty: every kettle is covered for two years against manufacturing defects.\n"
                         "Shipping: orders over $40 ship for free within the country.",
        "spot_ground_truth": "Two years, covering manufacturing defects.",
    },
    "ar": {
        "spot_question": "كم تستغرق مدة الضمان على الغلاية؟",
        "spot_answer": "تتمتع الغلاية بضمان لمدة سنتين يغطي عيوب التصنيع.",
        "spot_contexts": "الضمان: كل غلاية مضمونة لمدة سنتين ضد عيوب التصنيع.\n"
                         "الشحن: الطلبات التي تزيد على ٤٠ دولارًا تُشحن مجانًا داخل البلد.",
        "spot_ground_truth": "سنتان، ويغطي الضمان عيوب التصنيع.",
    },
}


def fill_example(lang: str) -> None:
    """Button callback: put an example sample in the fields."""
    st.session_state.update(EXAMPLES[lang])
    st.session_state.pop(ui.SPOT, None)


def split_contexts(text: str) -> List[str]:
    """Contexts typed in one box: one per line, or blocks separated by a line of ---."""
    lines = (text or "").splitlines()
    if not any(line.strip() == "---" for line in lines):
        return [line.strip() for line in lines if line.strip()]
    blocks, current = [], []
    for line in lines + ["---"]:
        if line.strip() == "---":
            blocks.append("\n".join(current).strip())
            current = []
        else:
            current.append(line)
    return [b for b in blocks if b]


def score_one(sample: EvalSample, config: RunConfig) -> EvalResult:
    """Score one sample with the chosen judge (closed afterwards)."""
    judge = config.build_judge(ui.api_key("spot"))
    try:
        return config.evaluator(judge).evaluate(sample)
    finally:
        close_judge(judge)


st.title(":material/search: Spot check")
st.caption("Paste one question, its answer and the retrieved contexts to see every metric with its reasoning. "
           "Arabic text is scored with Arabic prompts and shown right-to-left.")

c1, c2, _ = st.columns([1, 1, 2])
c1.button("English example", key="btn_spot_example_en", on_click=fill_example, args=("en",))
c2.button("Arabic example", key="btn_spot_example_ar", on_click=fill_example, args=("ar",))

question = st.text_area("Question", key="spot_question", height=80)
answer = st.text_area("Answer", key="spot_answer", height=100)
contexts = st.text_area("Contexts", key="spot_contexts", height=160,
                        help="One context per line; for contexts that span lines, separate them with a line of ---")
ground_truth = st.text_area("Ground truth (optional)", key="spot_ground_truth", height=80,
                            help="A reference answer enables context recall and answer correctness.")
config = ui.judge_widgets("spot", run_options=False)

if st.button("Score this sample", type="primary", key="btn_spot_score", icon=":material/search:"):
    if not question.strip():
        st.warning("Type a question first (or load an example).")
    else:
        sample = EvalSample(question.strip(), answer.strip(), split_contexts(contexts),
                            ground_truth.strip() or None, sample_id="spot-check")
        with ui.guard("Scoring the sample"):
            st.session_state[ui.SPOT] = score_one(sample, config)

result = st.session_state.get(ui.SPOT)
if result is not None:
    st.subheader("Result")
    ui.result_view(result)
