"""Answer relevancy: how directly and completely the answer addresses the question.

Everything ragmeter knows about it is here, in one Metric: its prompts, its heuristic in each
heuristic set, and the field its sanity check reads. An empty answer scores 0 without a judge call;
it has no claims view (the judge gives a score, not verdicts).

Offline ("ragmeter" set), the backbone is how much of the question the answer takes up (an answer
sharing no word with it scores the same whatever its length); modifiers: it must add content of
its own, stay on the question sentence by sentence, and not evade ("I have no comment") or hedge
("the documents do not say"); the answer's shape (yes/no, a number, a name, a reason) breaks ties.
"""
from __future__ import annotations

import math
from typing import FrozenSet

from ..model import EvalSample
from ..text import Analysis, analyse, normalize
from .heuristics import (
    EMBEDDING,
    LEXICAL,
    SEED,
    HeuristicScore,
    answer_type_match,
    is_evasive,
    jaccard_score,
    quote,
    rounded,
    scan_from,
)
from . import shapes
from .metric import Metric, advice

# --- the judge's prompts --------------------------------------------------------------------------

# The instructions and reply shape; they follow the sample's shared prefix (prompts.py).
# Relevance, not truth: a wrong answer to the question asked is relevant (correctness judges truth).
ANSWER_RELEVANCY_EN = """Score how well the ANSWER addresses the QUESTION: 1.0 when it answers it directly and
completely; lower when partial, padded or drifting; near 0.0 when evasive ("I have no comment")
or off-topic. Judge relevance, not truth.
{json_only}
{{"score": <0.0-1.0>, "reasoning": "<one sentence>"}}"""

ANSWER_RELEVANCY_AR = """قيّم مدى إجابة الإجابة عن السؤال: 1.0 إذا أجابت عنه مباشرة وبشكل كامل، وأقل إذا كانت ناقصة
أو محشوة أو منحرفة عن الموضوع، وقريبًا من 0.0 إذا تهرّبت ("لا تعليق"، "لا أعرف") أو تحدثت عن
شيء آخر. احكم على الصلة بالسؤال لا على صحة المعلومة.
{json_only}
{{"score": <من 0.0 إلى 1.0>, "reasoning": "<جملة واحدة>"}}"""


# --- its heuristic in each set --------------------------------------------------------------------

def _seed(s: EvalSample, lang: str) -> HeuristicScore:
    """The seed's: Jaccard overlap of the question and the answer."""
    return jaccard_score(s.question, s.answer, "question and answer")


# Hedges and disclaimers: a sentence that says the answer is not known or not found answers nothing.
_HEDGE = scan_from("ncudspiلغ", normalize(
    r"\b(?:no (?:relevant )?(?:information|mention|data|answer|documents?|sources?)|"
    r"not (?:provided|mentioned|specified|stated|clear|known|sure)|"
    r"(?:could|can) ?not (?:find|determine|be determined|answer)|(?:can't|couldn't) (?:find|determine|answer)|"
    r"unable to|(?:does|do|did) not (?:provide|mention|specify|say|state|contain|include)|unknown|no comment|"
    r"(?:search results|provided (?:documents?|context|passages?|search results|sources))|i (?:do not|don't) know)\b"
    r"|لا توجد معلومات|لم يتم ذكر|غير معروف|غير واضح|لا أعرف|لا اعرف|لا تعليق"))


def hedge_share(answer: str, question: str = "") -> float:
    """Share of the answer's sentences that hedge or disclaim instead of answering.

    A phrase the answer copies from the question ("...that does not contain the letter C") is the
    question's own wording, not a disclaimer, so it does not count.
    """
    sents = analyse(answer).normalized
    asked = normalize(question)
    hedged = sum(1 for x in sents if _may_hedge(x) and any(m.group() not in asked for m in _HEDGE.finditer(x)))
    return hedged / len(sents) if sents else 0.0


# Every English phrase `_HEDGE` matches contains one of these, so an ASCII sentence with none of
# them cannot match and skips the regex (a substring test is far cheaper than the regex scan).
_HEDGE_HINTS = ("no ", "not ", "n't ", "unable to", "unknown", "search results", "provided ")


def _may_hedge(normal: str) -> bool:
    return not normal.isascii() or any(map(normal.__contains__, _HEDGE_HINTS))


def _focus(answer: Analysis, question: FrozenSet[str]) -> float:
    """Share of the answer's content words in sentences that take up at least one question word:
    an answer that drifts into sentences about something else is less to the point."""
    total = sum(map(len, answer.sentences))
    on_topic = sum(len(x) for x in answer.sentences if not x.isdisjoint(question))
    return on_topic / total if total else 0.0


# With no question word taken up, an answer is scored ZERO_OVERLAP whatever its length: more words
# about something else do not make it more relevant. Only the answer's shape moves it from there.
ZERO_OVERLAP = 0.2


def _relevancy(s: EvalSample, lang: str) -> HeuristicScore:
    if not (s.answer or "").strip():
        return HeuristicScore(0.0, "The answer is empty.")
    if is_evasive(s.answer):
        return HeuristicScore(0.05, "The answer declines to answer (evasive), so it does not address the question.")
    answer, question = analyse(s.answer), analyse(s.question)
    shared = answer.vocab & question.vocab
    coverage = len(shared) / len(question.vocab) if question.vocab else 0.0
    new = answer.vocab - question.vocab
    shape = answer_type_match(s.question, s.answer)
    # Backbone: how much of the question the answer takes up. Modifiers: it must add something
    # beyond echoing the question (a bare span of the right shape does), and stay on the question.
    adds = max(1.0 - math.exp(-len(new)), 0.8 if shape > 0 else 0.0)
    focus = _focus(answer, question.vocab)
    topical = math.sqrt(coverage) * (0.4 + 0.6 * adds) * (0.5 + 0.5 * focus)
    score = ZERO_OVERLAP + (1.0 - ZERO_OVERLAP) * topical
    hedged = hedge_share(s.answer, s.question)
    score *= 1.0 - 0.6 * hedged - (0.2 if hedged else 0.0)
    # The answer's shape breaks ties, chiefly among answers that share no words with the question.
    score = score * 0.3 if shape < 0 else score + 0.05 * (shape > 0)
    why = f"{len(shared)}/{len(question.vocab)} question content words taken up by the answer"
    why += f"; {len(new)} new content words" + (f" ({quote(sorted(new), 3, answer.as_written)})" if new else "")
    if shared and focus < 1.0:
        why += f"; {focus:.0%} of its content is in sentences that take up the question"
    if shape:
        why += "; the answer has the shape the question asks for" if shape > 0 else \
            "; a yes/no answer to a question that is not a yes/no question"
    if hedged:
        why += f"; {hedged:.0%} of its sentences hedge or say the answer is not known"
    return HeuristicScore(rounded(score), why + ".")


# Kept in the "embedding" set, per bench/validity.py on the development halves (lexical -> with
# embeddings): question-answer similarity, scaled by whether the answer adds words of its own (an
# answer that echoes the question is near-identical to it but answers nothing); TruthfulQA
# informativeness AUROC 0.761 -> 0.774, relevancy swap AUROC 0.873 -> 0.908 (pairwise 0.853 -> 0.917),
# ALCE Spearman 0.369 -> 0.386.
def _embedding(s: EvalSample, lang: str) -> HeuristicScore:
    from .embeddings import blend_similarity, get_embedder  # loaded with the "embedding" set only

    h = _relevancy(s, lang)
    # Empty and evasive answers are settled lexically: "I have no comment" may sit close to the question.
    if not (s.answer or "").strip() or is_evasive(s.answer):
        return h
    similarity = get_embedder().similarity(s.question, s.answer)
    new = analyse(s.answer).vocab - analyse(s.question).vocab
    adds = 1.0 - math.exp(-len(new))
    semantic = max(0.0, similarity) * (0.4 + 0.6 * adds)
    why = (f"Question-answer embedding similarity {similarity:.2f}"
           + ("" if new else ", though the answer only echoes the question's words")
           + f"; blended evenly with the lexical score {h.score:.2f}: {h.reasoning}")
    return HeuristicScore(blend_similarity(h.score, semantic), why)


# --- its reply shape and completion cap: a score and one sentence ---------------------------------
REPLY_SCHEMA = shapes.SCORED
MAX_TOKENS = 128


ANSWER_RELEVANCY = Metric(
    "answer_relevancy",
    max_tokens=MAX_TOKENS,
    reply_schema=REPLY_SCHEMA,
    zero_if_empty=("answer",),
    prompts={"en": ANSWER_RELEVANCY_EN, "ar": ANSWER_RELEVANCY_AR},
    shows=("question", "answer"),
    heuristics={LEXICAL: _relevancy, SEED: _seed, EMBEDDING: _embedding},
    default=True,  # scored when a run names no metrics
    languages=("en", "ar"),
    heuristic_sets=(LEXICAL, SEED, EMBEDDING),
    prose=("answer",),
    advice=advice("The prompt drifts: answers do not address the question that was asked.",
                   "Improve the prompt so it restates the question and asks for a direct answer.",
                   "Add a system prompt that keeps the model on the user's question."),
    description="How directly and completely the answer addresses the question.",
)
