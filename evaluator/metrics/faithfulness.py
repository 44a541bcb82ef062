"""Faithfulness: the share of the answer's claims that the retrieved contexts support.

Everything ragmeter knows about it is here, in one Metric: the fields it needs, its prompts, how a
reply becomes a score (the claims' verdicts), its heuristic in each heuristic set, the fields its
sanity check reads, and its claims view for the drill-down.

Offline ("ragmeter" set), it asks how much of what the answer says can be found in the contexts,
sentence by sentence, with numbers and names that appear nowhere in them, and sentences about the
speaker or listener ("I love it", "you should") that no context speaks in, penalised. It has no
"embedding" scorer: on bench/validity.py's development halves the embedding lowered it (HaluEval
pairwise 0.980 -> 0.909, BEGIN low-overlap AUROC 0.884 -> 0.866: similar is not supported), so that
set scores it lexically.
"""
from __future__ import annotations

from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

from .. import text
from ..model import EvalSample
from ..text import Analysis, analyse, named_entities
from .claim_spans import (
    ANSWER,
    OFFLINE_COVERAGE,
    Claim,
    ClaimView,
    Where,
    claim_in,
    context_texts,
    said_yes,
    sentence_spans,
    support,
)
from .heuristics import (
    LEXICAL,
    NOTHING,
    QUESTION_CREDIT,
    SEED,
    HeuristicScore,
    Weights,
    analyse_contexts,
    distinct_names,
    is_bare_span,
    jaccard_score,
    quote,
    rounded,
    weighted_share,
)
from . import shapes
from .metric import Metric, advice
from .parsing import positive_share, verdict_list

# --- the judge's prompts --------------------------------------------------------------------------

# The instructions and reply shape; they follow the sample's shared prefix (prompts.py).
# Asks for the claims one by one, so the score is computed from the verdicts (below), never taken on trust.
FAITHFULNESS_EN = """Split the ANSWER into its factual claims. For each, decide whether the CONTEXTS state or
directly imply it ("supported") or not ("unsupported"); facts absent from the contexts are unsupported.
{json_only}
{{"claims": [{{"claim": "<claim>", "verdict": "supported" | "unsupported"}}], "score": <supported claims / all claims, 0.0-1.0>, "reasoning": "<one sentence>"}}"""

FAITHFULNESS_AR = """قسّم الإجابة إلى ادعاءاتها الواقعية، واحكم على كل ادعاء: هل تنص عليه النصوص المسترجعة أو
تدل عليه مباشرة ("supported")، أم لا ("unsupported")؟ ما لا يرد في النصوص يُعدّ غير مدعوم.
{json_only}
{{"claims": [{{"claim": "<الادعاء>", "verdict": "supported" | "unsupported"}}], "score": <نسبة الادعاءات المدعومة من 0.0 إلى 1.0>, "reasoning": "<جملة واحدة>"}}"""


# --- how a reply becomes a score ------------------------------------------------------------------

def supported_claims(obj: dict) -> Optional[Tuple[float, List[dict]]]:
    """The share of claims judged "supported"."""
    claims = verdict_list(obj, "claims")
    return (positive_share(claims, "verdict"), claims) if claims else None


# --- its heuristic in each set --------------------------------------------------------------------

def _seed(s: EvalSample, lang: str) -> HeuristicScore:
    """The seed's: Jaccard overlap of the answer and the contexts."""
    return jaccard_score(s.answer, " ".join(s.contexts), "answer and contexts")


# Pronouns of one grammatical person count as one: a context that says "you" licenses "your".
_PERSON_OF = {text.normalize_arabic(w): person for person, ws in (
    ("first singular", "i me my mine myself أنا انا"), ("first plural", "we us our ours ourselves نحن"),
    ("second", "you your yours yourself yourselves أنت انت أنتم انتم أنتما أنتن")) for w in ws.split()}


def _persons(pronouns: FrozenSet[str]) -> FrozenSet[str]:
    """The grammatical persons a set of pronouns speaks in."""
    return frozenset(_PERSON_OF.get(w, w) for w in pronouns)


# Each number or name the contexts never mention multiplies the score by this.
SPECIFIC_PENALTY = 0.6
SENTENCE_WEIGHT = 0.5  # sentence-level support vs. support anywhere in the contexts


# Verbs that open an instruction ("Open Settings…", "Ask within 14 days…", "افتح الإعدادات…"): the mood of a
# help-desk answer, not a claim; one that no context uses is left out of the answer's words.
IMPERATIVES = frozenset(text.content_word(text.normalize(w)) for w in (
    "go open ask click tap select choose pick press contact visit use check enter call try follow find see send "
    "email reach request make keep return sign log turn set add remove update install restart "
    "افتح اختر اضغط انقر احتفظ أعد اترك تواصل اتصل استخدم ادخل راجع فعّل اطلب أرسل توجه").split())
IMPERATIVES = IMPERATIVES - {""}
ADDRESSED_SUPPORT = 0.75  # a "you" sentence at least this well supported is scored on its content alone


def _opening_verb(sentence: str) -> str:
    """The sentence's first word as a content word, when it is one of IMPERATIVES ("" otherwise)."""
    first = sentence.split(maxsplit=1)[0] if sentence.split() else ""
    word = next(iter(text.content_words(first)), "")
    return word if word in IMPERATIVES else ""


def _instruction_verbs(answer: Analysis, vocab: FrozenSet[str]) -> FrozenSet[str]:
    """The content words that open one of the answer's sentences as an imperative verb no context uses."""
    return frozenset(w for w in map(_opening_verb, answer.raw) if w and w not in vocab)


def _without(answer: Analysis, drop: FrozenSet[str]) -> Analysis:
    if not drop:
        return answer
    return answer._replace(words=tuple(w for w in answer.words if w not in drop),
                           sentences=tuple(sent - drop for sent in answer.sentences))


def _faithfulness(s: EvalSample, lang: str) -> HeuristicScore:
    question = analyse(s.question)
    ctx = analyse_contexts(tuple(s.contexts))
    vocab, weights = ctx.vocab, ctx.weights
    written = analyse(s.answer)
    answer = _without(written, _instruction_verbs(written, vocab))
    if not answer.words:
        return HeuristicScore(1.0, "The answer makes no content claim (no content words) to check against the contexts.")
    # Only a bare span leans on the question; a full sentence must stand on the contexts alone.
    implicit = question.vocab if is_bare_span(s.answer) else NOTHING
    overall = weighted_share(answer.words, weights, vocab, implicit)
    sentence_score, flips, supports = _sentence_support(answer, ctx.sentences, implicit, weights)
    base = SENTENCE_WEIGHT * sentence_score + (1.0 - SENTENCE_WEIGHT) * overall
    bad_numbers = sorted(answer.numbers - ctx.numbers)
    names = named_entities(s.answer)
    known = vocab | question.vocab if names else vocab  # the union only when there is a name to check
    bad_names = [(span, e) for span, e in names if not e <= known]
    # Sentences about the speaker or the listener ("I love hiking"), not about the passages:
    # they use a first/second-person pronoun that no context uses.
    # (A sentence with no pronoun has no person to miss: the set difference is read only for the others.)
    # A sentence that tells the reader what to do ("you can…", "your plan…") is scored on its content: only
    # an unlicensed "you" sentence the contexts do not support, or an "I"/"we" one, counts.
    instructions = [bool(_opening_verb(raw)) for raw in answer.raw] if len(answer.raw) == len(supports) else \
        [False] * len(supports)
    unlicensed = [(_persons(p) - _persons(ctx.persons), support, told)
                  for p, support, told in zip(answer.persons, supports, instructions) if p]
    personal = sum(1 for persons, support, told in unlicensed
                   if persons and not (told and persons == {"second"} and support >= ADDRESSED_SUPPORT))
    score = base * SPECIFIC_PENALTY ** (len(bad_numbers) + len(bad_names) + personal)
    absent = [w for w in answer.words if w not in vocab]
    unsupported = [w for w in absent if w not in implicit] if implicit else absent
    why = f"{len(answer.words) - len(absent)}/{len(answer.words)} answer content words appear in the contexts"
    if unsupported:
        why += f"; unsupported: {quote(unsupported, show=answer.as_written)}"
    if bad_numbers or bad_names:
        why += f"; numbers/names found nowhere in the contexts: {quote(bad_numbers + distinct_names(bad_names))}"
    why += f"; answer sentences supported by their best context sentence: {sentence_score:.2f}"
    if flips:
        why += f"; {flips} sentence(s) negate what the context says, or the reverse"
    if personal:
        why += f"; {personal} sentence(s) speak of the speaker or listener (I, you), which the contexts never do"
    return HeuristicScore(rounded(score), why + ".")


# A question in the answer asserts nothing the contexts could support; a sentence whose polarity
# differs from its best-matching context sentence ("do not sing" vs "sing") likely contradicts it.
ASKING_CREDIT = 0.5
FLIP_CREDIT = 0.5


def _sentence_support(answer: Analysis, ctx_sents: Sequence[Tuple[FrozenSet[str], bool]],
                      question: FrozenSet[str], weights: Weights) -> Tuple[float, int, List[float]]:
    """Mean support of the answer's sentences (weighted by their content words), how many
    sentences flip the polarity of their best-matching context sentence, and each sentence's support."""
    total = got = 0.0
    flips = 0
    supports: List[float] = []
    for sent, neg, asks in zip(answer.sentences, answer.negated, answer.asks):
        if not sent:
            supports.append(0.0)  # no content to be scored on: a bare "you" sentence still counts
            continue
        best, best_neg = _best_context_sentence(sent, neg, ctx_sents, question, weights)
        if best_neg != neg:
            best *= FLIP_CREDIT
            flips += 1
        if asks:
            best *= ASKING_CREDIT
        total += len(sent)
        got += len(sent) * best
        supports.append(best)
    return (got / total if total else 1.0), flips, supports


def _best_context_sentence(sent: FrozenSet[str], neg: bool, ctx_sents: Sequence[Tuple[FrozenSet[str], bool]],
                           question: FrozenSet[str], weights: Weights) -> Tuple[float, bool]:
    """The weighted share of `sent` found in its best-matching context sentence (see
    `weighted_share`; question words at part credit), and whether that sentence negates.

    Word weights and the sentence's total are looked up once rather than once per context
    sentence; each share is summed in the same order, so the value is the same to the bit.
    """
    get, unseen = weights.get, weights.unseen
    items, total = [], 0.0
    for w in sent:
        wt = get(w, unseen)
        total += wt
        items.append((w, wt, wt * QUESTION_CREDIT if w in question else 0.0))
    best, best_neg = 0.0, neg
    for cs, cneg in ctx_sents:
        if cs.isdisjoint(sent):
            continue
        got = 0.0
        for w, wt, part in items:
            if w in cs:
                got += wt
            elif part:  # adding a zero credit would leave the sum as it is
                got += part
        value = got / total
        if value > best:
            best, best_neg = value, cneg
            if got == total:  # a share cannot exceed 1: no later sentence can beat this one
                break
    return best, best_neg


# --- its claims view ------------------------------------------------------------------------------

def judge_claims(sample: EvalSample, verdicts: List[Dict[str, Any]]) -> ClaimView:
    """Each claim the judge listed, located in the answer, with its support in the contexts when supported."""
    out = []
    for v in verdicts:
        ok = said_yes(v.get("verdict"), ("supported", "yes", "true", "1"))
        out.append(claim_in(str(v.get("claim") or ""), "supported" if ok else "unsupported", ok,
                            ANSWER, sample.answer, sample))
    return ClaimView("faithfulness", "judge", tuple(out))


def offline_claims(sample: EvalSample) -> ClaimView:
    """Each answer sentence with its best context sentence; the words and numbers no context has."""
    contexts = context_texts(sample)
    vocab = {t.key for _, text_ in contexts for s in sentence_spans(text_) for t in s.tokens if t.key}
    claims = []
    for sent in sentence_spans(sample.answer or ""):
        piece = sample.answer[sent.start:sent.end]
        where = support(piece, contexts, OFFLINE_COVERAGE)
        claims.append(Claim(piece, "supported" if where else "unsupported", where is not None, "claim",
                            Where(ANSWER, sent.start, sent.end), where))
        for tok in sent.tokens:
            if tok.key and tok.key not in vocab:
                word = sample.answer[tok.start:tok.end]
                claims.append(Claim(word, "found in no context", False, "word", Where(ANSWER, tok.start, tok.end)))
    return ClaimView("faithfulness", "heuristic", tuple(claims),
                     note="Offline: answer sentences with their best context sentence; words found in no context.")


# --- its reply shape and completion cap -----------------------------------------------------------
MAX_CLAIMS = 8
REPLY_SCHEMA = shapes.shape(claims=shapes.items(shapes.shape(claim=shapes.text(shapes.ITEM_CHARS),
                                                               verdict=shapes.choice(("supported", "unsupported"))),
                                                  MAX_CLAIMS, min_items=1),
                            reasoning=shapes.text())
MAX_TOKENS = shapes.cap_for(MAX_CLAIMS, 55)  # ~40 tokens a claim and its verdict's ~15: 520


FAITHFULNESS = Metric(
    "faithfulness",
    max_tokens=MAX_TOKENS,
    reply_schema=REPLY_SCHEMA,
    needs=("answer", "contexts"),
    prompts={"en": FAITHFULNESS_EN, "ar": FAITHFULNESS_AR},
    shows=("question", "contexts", "answer"),
    verdicts=supported_claims,
    heuristics={LEXICAL: _faithfulness, SEED: _seed},
    default=True,  # scored when a run names no metrics
    languages=("en", "ar"),
    heuristic_sets=(LEXICAL, SEED),
    prose=("answer",),
    claims=judge_claims,
    offline_claims=offline_claims,
    advice=advice("Hallucination: answers state things the retrieved documents do not support.",
                   "Tell the model to answer only from the documents provided.",
                   "Ask it to say it does not know when the documents do not contain the answer."),
    description="Share of the answer's claims that the retrieved contexts support.",
)
