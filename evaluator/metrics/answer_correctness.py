"""Answer correctness: agreement of the answer with the reference (F1 over TP/FP/FN claims).

Everything ragmeter knows about it is here, in one Metric: the fields it needs, its prompts, how a
reply becomes a score (the judge's TP/FP/FN lists), its heuristic in each heuristic set, the fields
its sanity check reads, and its claims view for the drill-down. An empty answer scores 0 without a
judge call.

Offline ("ragmeter" set): token F1 and reference coverage beyond the question's words, a leading
yes/no counting as a word, with unsupported specifics and a flipped polarity (a leading yes against
a no, or one side negating and the other not) penalised. It has no "embedding" scorer: on
bench/validity.py's development halves the embedding lowered it (TruthfulQA AUROC 0.773 -> 0.736: a
wrong answer is fluent and on topic, so it embeds close to the reference), so that set scores it
lexically.
"""
from __future__ import annotations

from typing import Any, Dict, FrozenSet, List, Optional, Tuple

from ..model import EvalSample
from ..text import analyse, named_entities, polarity, stance
from .claim_spans import ANSWER, REFERENCE, Claim, ClaimView, locate
from .heuristics import LEXICAL, SEED, HeuristicScore, distinct_names, jaccard_score, quote, rounded
from . import shapes
from .metric import Metric, advice

# --- the judge's prompts --------------------------------------------------------------------------

# The instructions and reply shape; they follow the sample's shared prefix (prompts.py).
# Asks for the TP/FP/FN lists themselves, so the F1 is computed from them (below).
ANSWER_CORRECTNESS_EN = """Compare the ANSWER with the REFERENCE. TP: answer claims the reference supports; FP: answer
claims it does not support or contradicts; FN: reference facts the answer leaves out.
{json_only}
{{"TP": ["<claim>"], "FP": ["<claim>"], "FN": ["<fact>"], "score": <TP / (TP + 0.5 * (FP + FN)), 0.0-1.0>, "reasoning": "<one sentence>"}}"""

ANSWER_CORRECTNESS_AR = """قارن الإجابة بالإجابة المرجعية. TP: ادعاءات في الإجابة تؤيدها المرجعية؛ FP: ادعاءات لا تؤيدها
أو تناقضها؛ FN: معلومات في المرجعية أغفلتها الإجابة.
{json_only}
{{"TP": ["<ادعاء>"], "FP": ["<ادعاء>"], "FN": ["<معلومة>"], "score": <TP / (TP + 0.5 * (FP + FN)) من 0.0 إلى 1.0>, "reasoning": "<جملة واحدة>"}}"""


# --- how a reply becomes a score ------------------------------------------------------------------

def correctness_f1(obj: dict) -> Optional[Tuple[float, List[dict]]]:
    """TP / (TP + 0.5 (FP + FN)) over the judge's TP/FP/FN lists."""
    found = [obj.get(k, obj.get(k.lower())) for k in ("TP", "FP", "FN")]
    lists = [x for x in found if isinstance(x, list)]
    if len(lists) != 3:
        return None
    tp, fp, fn = (len(x) for x in lists)
    if tp + fp + fn == 0:
        return None
    verdicts = [{"claim": str(c), "verdict": k} for k, items in zip(("TP", "FP", "FN"), lists) for c in items]
    return tp / (tp + 0.5 * (fp + fn)), verdicts


# --- its heuristic in each set --------------------------------------------------------------------

def _seed(s: EvalSample, lang: str) -> HeuristicScore:
    """The seed's: Jaccard overlap of the answer and the reference."""
    return jaccard_score(s.answer, s.ground_truth or "", "answer and reference")


# Each name or number in the answer that neither the reference nor the question mentions.
EXTRA_SPECIFIC_PENALTY = 0.8
POLARITY_FLIP_PENALTY = 0.5


def _correctness(s: EvalSample, lang: str) -> HeuristicScore:
    answer, reference, question = analyse(s.answer), analyse(s.ground_truth or ""), analyse(s.question)
    # What the question already says is in both; compare what each side adds beyond it. A leading
    # yes/no is part of what a side says ("Yes." agrees with "Yes, all of them are"), so it joins as
    # a word of its own.
    a = (answer.vocab - question.vocab) | _stance_word(s.answer) or answer.vocab
    r = (reference.vocab - question.vocab) | _stance_word(s.ground_truth or "") or reference.vocab
    if not a or not r:
        return HeuristicScore(0.0, "The answer or the reference has no content words to compare.")
    common = a & r
    precision, recall = len(common) / len(a), len(common) / len(r)
    f1 = 2 * precision * recall / (precision + recall) if common else 0.0
    score = 0.5 * f1 + 0.5 * recall
    flipped = polarity(s.answer) != polarity(s.ground_truth or "")
    known = reference.vocab | question.vocab
    bad_names = [(span, e) for span, e in named_entities(s.answer) if not e <= known]
    # Sorted: a frozenset's order changes with the process's hash seed, and the text must not.
    bad_numbers = sorted(answer.numbers - reference.numbers - question.numbers)
    bad = distinct_names(bad_names) + bad_numbers
    penalty = EXTRA_SPECIFIC_PENALTY ** (len(bad_names) + len(bad_numbers))
    score = (0.3 + 0.7 * score) * (POLARITY_FLIP_PENALTY if flipped else 1.0) * penalty
    why = f"token F1 {f1:.2f} and reference coverage {recall:.2f} beyond the question's words"
    if flipped:
        why += "; one side negates what the other asserts"
    if bad:
        why += f"; names/numbers not in the reference: {quote(bad)}"
    return HeuristicScore(rounded(score), why + ".")


def _stance_word(text_: str) -> FrozenSet[str]:
    """{"yes"} or {"no"} for a text that opens with one (see evaluator.text.stance), else nothing."""
    value = stance(text_)
    return frozenset(["yes" if value > 0 else "no"]) if value else frozenset()


# --- its claims view ------------------------------------------------------------------------------

def judge_claims(sample: EvalSample, verdicts: List[Dict[str, Any]]) -> ClaimView:
    """Each TP/FP claim located in the answer, each FN fact in the reference."""
    names = {"TP": "in the reference", "FP": "not in the reference", "FN": "missing from the answer"}
    out = []
    for v in verdicts:
        kind = str(v.get("verdict") or "")
        home, text = (REFERENCE, sample.ground_truth or "") if kind == "FN" else (ANSWER, sample.answer)
        claim = str(v.get("claim") or "")
        out.append(Claim(claim, names.get(kind, kind), kind == "TP", "claim", locate(claim, text, home)))
    return ClaimView("answer_correctness", "judge", tuple(out))


# --- its reply shape and completion cap -----------------------------------------------------------
MAX_EACH = 5
_CLAIMS = shapes.items(shapes.text(120), MAX_EACH)
REPLY_SCHEMA = shapes.shape(TP=_CLAIMS, FP=_CLAIMS, FN=_CLAIMS, reasoning=shapes.text())
MAX_TOKENS = shapes.cap_for(3 * MAX_EACH, 32)  # 560


ANSWER_CORRECTNESS = Metric(
    "answer_correctness",
    max_tokens=MAX_TOKENS,
    reply_schema=REPLY_SCHEMA,
    needs=("ground_truth",),
    zero_if_empty=("answer",),
    prompts={"en": ANSWER_CORRECTNESS_EN, "ar": ANSWER_CORRECTNESS_AR},
    shows=("question", "answer", "ground_truth"),
    verdicts=correctness_f1,
    heuristics={LEXICAL: _correctness, SEED: _seed},
    default=True,  # scored when a run names no metrics
    languages=("en", "ar"),
    heuristic_sets=(LEXICAL, SEED),
    prose=("answer", "ground_truth"),
    claims=judge_claims,
    advice=advice("Wrong facts: answers disagree with the reference answers.",
                   "Improve retrieval so the right facts reach the model (see context recall).",
                   "Improve grounding: instruct the model to answer from the documents only.",
                   "Check the reference answers themselves; outdated or wrong references lower this score."),
    description="Agreement of the answer with the reference (F1 over TP/FP/FN claims).",
)
