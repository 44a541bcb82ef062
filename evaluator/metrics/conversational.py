"""Conversation-level metrics: what only the whole chat shows.

    knowledge_retention     judged: does the assistant forget or contradict what the user said
                            earlier? Offline, a heuristic catches the assistant asking again for
                            something the user already told it; it cannot see contradictions.
    goal_completion         judged against the scenario / expected outcome. Offline, the share of
                            the expected outcome's words found in the assistant's replies: it sees
                            words, not whether the goal was met. Skipped with neither field.
    conversation_relevancy  no judge call: the share of assistant turns whose answer_relevancy
                            (judged in context) is at least 0.5.

Both judged metrics are ordinary `Metric`s (one judge call per conversation and repeat, blended
with their heuristic, cached like any other prompt); they read the conversation from the row's
`EvalSample.conversation` (its `question` is the transcript and `answer` the last reply).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

from ..conversation import ASSISTANT, LABELS, USER, Conversation, transcript
from ..model import EvalSample, MetricScore
from ..text import content_words
from .heuristics import HeuristicScore
from .metric import Metric, advice
from .prompts import GUARD_AR, GUARD_EN, JSON_ONLY_AR, JSON_ONLY_EN, fenced

RELEVANT_AT = 0.5  # a turn counts as relevant for conversation_relevancy from this answer_relevancy up
NO_GOAL = "No scenario or expected_outcome for this conversation: nothing to judge the goal against."
ASK_MARKS = ("?", "؟")

KNOWLEDGE_RETENTION_EN = """Read the CONVERSATION. Decide whether the assistant keeps what the user told it: it must not
ask again for information the user already gave, contradict it, or answer as if it had not been said.
1.0: every reply respects what the user said; 0.0: the assistant forgets or contradicts it repeatedly.
{guard}
{json_only}
{{"score": <0.0-1.0>, "reasoning": "<one sentence naming what was forgotten, or that nothing was>"}}

{data}"""
KNOWLEDGE_RETENTION_AR = """اقرأ المحادثة. قرّر هل يحتفظ المساعد بما أخبره به المستخدم: لا يسأل مجددًا عن معلومة قدّمها المستخدم،
ولا يناقضها، ولا يجيب كأنها لم تُذكر. 1.0: كل الردود تحترم ما قاله المستخدم؛ 0.0: ينسى المساعد ما قيل أو يناقضه مرارًا.
{guard}
{json_only}
{{"score": <من 0.0 إلى 1.0>, "reasoning": "<جملة واحدة تذكر ما نُسي، أو أنه لم يُنسَ شيء>"}}

{data}"""
GOAL_COMPLETION_EN = """Read the CONVERSATION and the user's GOAL (a scenario and/or an expected outcome). Decide whether
the conversation reached it. 1.0: the goal is fully met by the assistant's replies; 0.5: partly;
0.0: not met, or the assistant claimed results it did not deliver.
{guard}
{json_only}
{{"score": <0.0-1.0>, "reasoning": "<one sentence naming what was or was not reached>"}}

{data}"""
GOAL_COMPLETION_AR = """اقرأ المحادثة وهدف المستخدم (سيناريو و/أو نتيجة متوقعة). قرّر هل بلغت المحادثة هذا الهدف.
1.0: حققت ردود المساعد الهدف كاملًا؛ 0.5: جزئيًا؛ 0.0: لم يتحقق، أو ادّعى المساعد نتائج لم يقدّمها.
{guard}
{json_only}
{{"score": <من 0.0 إلى 1.0>, "reasoning": "<جملة واحدة تذكر ما تحقق وما لم يتحقق>"}}

{data}"""
_HEADINGS = {"en": ("CONVERSATION", "GOAL"), "ar": ("المحادثة", "الهدف")}
def goal_text(conv: Conversation) -> str:
    parts = [f"Scenario: {conv.scenario}" if conv.scenario else "",
             f"Expected outcome: {conv.expected_outcome}" if conv.expected_outcome else ""]
    return "\n".join(p for p in parts if p)


@dataclass(frozen=True)
class ConversationMetric(Metric):
    """A judged metric over a whole conversation: the judge sees the transcript (and the goal)."""

    with_goal: bool = False

    def skip_reason(self, sample: EvalSample) -> Optional[str]:
        conv = sample.conversation
        if conv is None:
            return "Not a conversation: this metric scores multi-turn conversations."
        if self.with_goal and not (conv.scenario or conv.expected_outcome):
            return NO_GOAL
        return None

    def prompt(self, sample: EvalSample, lang: str, fields: Optional[Sequence[str]] = None) -> str:
        # Its own layout (the steps / the transcript): `fields` of the shared prefix do not apply.
        lang = lang if lang in self.prompts else "en"
        conv = sample.conversation
        assert conv is not None  # skip_reason said so first
        chat_head, goal_head = _HEADINGS[lang]
        parts = [f"[{chat_head}]", transcript(conv.turns, LABELS[lang])]
        if self.with_goal:
            parts += [f"[{goal_head}]", goal_text(conv)]
        guard, json_only = (GUARD_AR, JSON_ONLY_AR) if lang == "ar" else (GUARD_EN, JSON_ONLY_EN)
        return self.prompts[lang].format(guard=guard, json_only=json_only, data=fenced(parts))


def re_asked(conv: Conversation) -> List[str]:
    """Assistant questions about something the user already said: two or more of its content words
    appeared in an earlier user turn ("What is your order number?" after "My order number is 4417")."""
    told: set = set()
    found = []
    for t in conv.turns:
        if t.role == USER:
            told |= set(content_words(t.content))
        elif t.role == ASSISTANT:
            for sentence in _questions(t.content):
                overlap = told & set(content_words(sentence))
                if len(overlap) >= 2:
                    found.append(sentence.strip())
    return found


def _questions(text: str) -> List[str]:
    out, start = [], 0
    for i, ch in enumerate(text):
        if ch in ".!\n":
            start = i + 1
        elif ch in ASK_MARKS:
            out.append(text[start:i + 1])
            start = i + 1
    return out


def knowledge_retention_heuristic(sample: EvalSample, lang: str = "en", kind: str = "") -> HeuristicScore:
    conv = sample.conversation
    assert conv is not None
    asked = re_asked(conv)
    replies = sum(1 for t in conv.turns if t.role == ASSISTANT and not t.not_asked)
    if not asked:
        return HeuristicScore(1.0, "No reply asks again for what the user already said (a heuristic: it "
                                   "cannot see contradictions).")
    score = max(0.0, 1 - len(asked) / max(1, replies))
    return HeuristicScore(round(score, 4), f"{len(asked)} repl{'y asks' if len(asked) == 1 else 'ies ask'} again "
                                           f"for what the user already said: {asked[0][:120]!r}.")


def goal_completion_heuristic(sample: EvalSample, lang: str = "en", kind: str = "") -> HeuristicScore:
    conv = sample.conversation
    assert conv is not None
    wanted = set(content_words(conv.expected_outcome or conv.scenario or ""))
    said = set(content_words(" ".join(t.content for t in conv.turns if t.role == ASSISTANT)))
    share = len(wanted & said) / len(wanted) if wanted else 0.0
    return HeuristicScore(round(share, 4), f"{len(wanted & said)}/{len(wanted)} words of the goal appear in the "
                                           "assistant's replies (a heuristic: it sees words, not whether the "
                                           "goal was met).")


KNOWLEDGE_RETENTION = ConversationMetric(
    "knowledge_retention", prompts={"en": KNOWLEDGE_RETENTION_EN, "ar": KNOWLEDGE_RETENTION_AR},
    heuristic=knowledge_retention_heuristic,
    advice=advice("The assistant forgets what users told it earlier in the conversation.",
                  "Check that the whole history reaches the model (truncation, a memory window too short).",
                  "Summarise the facts the user gave into the system prompt of long conversations."),
    description="Whether the assistant keeps what the user said earlier (no re-asking, no contradiction).")
GOAL_COMPLETION = ConversationMetric(
    "goal_completion", prompts={"en": GOAL_COMPLETION_EN, "ar": GOAL_COMPLETION_AR},
    heuristic=goal_completion_heuristic, with_goal=True,
    advice=advice("Conversations end without reaching the user's goal.",
                  "Read the lowest conversations' transcripts: where did the assistant stop helping?"),
    description="Whether the conversation reached its scenario's expected outcome (judged).")
CONVERSATION_METRICS = (KNOWLEDGE_RETENTION, GOAL_COMPLETION)


def conversation_relevancy(turn_scores: List[Optional[MetricScore]], method: str) -> MetricScore:
    """Share of assistant turns whose answer_relevancy is at least RELEVANT_AT (no judge call)."""
    scored = [ms for ms in turn_scores if ms is not None and not ms.skipped]
    if not scored:
        return MetricScore("conversation_relevancy", 0.0, "No assistant turn has an answer_relevancy score.",
                           skipped=True, method="skipped")
    good = sum(1 for ms in scored if ms.score >= RELEVANT_AT)
    return MetricScore("conversation_relevancy", round(good / len(scored), 4),
                       f"{good}/{len(scored)} assistant turns are relevant (answer_relevancy >= {RELEVANT_AT}).",
                       method=method)
