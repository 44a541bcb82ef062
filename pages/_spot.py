"""The Spot check page's parts: the example samples, the contexts box, scoring one sample."""
from typing import List

from evaluator.judges.base import close_judge
from evaluator.model import EvalResult, EvalSample
from evaluator.runs.run import RunConfig

from pages import _judge as judge_ui
from pages import _state as state

PREFIX = "spot"  # the judge picker's key prefix on this page
EXAMPLES = {
    "en": {
        state.SPOT_QUESTION: "How long does the warranty on the kettle last?",
        state.SPOT_ANSWER: "The kettle has a two-year warranty that covers manufacturing defects.",
        state.SPOT_CONTEXTS: "Warranty: every kettle is covered for two years against manufacturing defects.\n"
                             "Shipping: orders over $40 ship for free within the country.",
        state.SPOT_GROUND_TRUTH: "Two years, covering manufacturing defects.",
    },
    "ar": {
        state.SPOT_QUESTION: "كم تستغرق مدة الضمان على الغلاية؟",
        state.SPOT_ANSWER: "تتمتع الغلاية بضمان لمدة سنتين يغطي عيوب التصنيع.",
        state.SPOT_CONTEXTS: "الضمان: كل غلاية مضمونة لمدة سنتين ضد عيوب التصنيع.\n"
                             "الشحن: الطلبات التي تزيد على ٤٠ دولارًا تُشحن مجانًا داخل البلد.",
        state.SPOT_GROUND_TRUTH: "سنتان، ويغطي الضمان عيوب التصنيع.",
    },
}


def fill_example(lang: str) -> None:
    """Button callback: put an example sample in the fields."""
    state.fill(EXAMPLES[lang])
    state.drop(state.SPOT)


def split_contexts(text: str) -> List[str]:
    """Contexts typed in one box: one per line, or blocks separated by a line of ---."""
    lines = (text or "").splitlines()
    if not any(line.strip() == "---" for line in lines):
        return [line.strip() for line in lines if line.strip()]
    blocks: List[str] = []
    current: List[str] = []
    for line in lines + ["---"]:
        if line.strip() == "---":
            blocks.append("\n".join(current).strip())
            current = []
        else:
            current.append(line)
    return [b for b in blocks if b]


def score_one(sample: EvalSample, config: RunConfig) -> EvalResult:
    """Score one sample with the chosen judge (closed afterwards)."""
    judge = config.build_judge(judge_ui.api_key(PREFIX))
    try:
        return config.evaluator(judge).evaluate(sample)
    finally:
        close_judge(judge)
