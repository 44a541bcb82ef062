"""The Spot check page's parts: the example samples and scoring the typed sample (service.spot_check: one
`Run`, held in memory)."""
from evaluator import service
from evaluator.model import EvalResult

from pages import _judge as judge_ui
from pages import _state as state
from pages import _team as team

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
        state.SPOT_ANSWER: "للغلاية ضمان لمدة سنتين يغطي عيوب التصنيع.",
        state.SPOT_CONTEXTS: "الضمان: كل غلاية مضمونة لمدة سنتين ضد عيوب التصنيع.\n"
                             "الشحن: الطلبات التي تزيد على ٤٠ دولارًا تُشحن مجانًا داخل البلد.",
        state.SPOT_GROUND_TRUTH: "سنتان، ويغطي الضمان عيوب التصنيع.",
    },
}


def fill_example(lang: str) -> None:
    """Button callback: put an example sample in the fields."""
    state.fill(EXAMPLES[lang])
    state.drop(state.SPOT)


def score(question: str, answer: str, contexts: str, ground_truth: str, config: service.RunConfig) -> EvalResult:
    """Score the typed sample with the chosen judge (contexts one per line, or blocks between lines of ---)."""
    return service.spot_check(question, answer, contexts, ground_truth, config, access=team.access(),
                              api_key=judge_ui.api_key(PREFIX))
