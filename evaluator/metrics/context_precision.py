"""Context precision: whether the useful contexts are ranked first (average precision).

Everything ragmeter knows about it is here, in one Metric: the fields it needs, its prompts, how a
reply becomes a score (per-context verdicts), its heuristic in each heuristic set, the field its
sanity check reads, and its claims view for the drill-down.

Offline ("ragmeter" set): rank-aware average precision over per-context relevance to the question
(and the reference, when there is one).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..model import EvalSample
from ..text import Analysis, analyse, detect_language, words
from .claim_spans import Claim, ClaimView, said_yes
from .heuristics import (
    EMBEDDING,
    LEXICAL,
    SEED,
    HeuristicScore,
    Weights,
    analyse_contexts,
    jaccard,
    rounded,
    shares_in,
)
from . import shapes
from .metric import Metric, advice
from .parsing import average_precision, is_positive, verdict_list

# --- the judge's prompts --------------------------------------------------------------------------

# The instructions and reply shape; they follow the sample's shared prefix (prompts.py).
# One verdict per context, in rank order: average precision is computed from them (below).
CONTEXT_PRECISION_EN = """For each numbered context, in order, decide whether it is "useful" for answering the QUESTION
(it holds information the answer or the REFERENCE needs) or "not useful".
{json_only}
{{"contexts": [{{"index": <n>, "verdict": "useful" | "not useful", "reason": "<short>"}}], "reasoning": "<one sentence>"}}"""

CONTEXT_PRECISION_AR = """احكم على كل نص مرقَّم بالترتيب: هل هو مفيد للإجابة عن السؤال، أي يحتوي معلومات تحتاجها
الإجابة أو الإجابة المرجعية ("useful")، أم لا ("not useful")؟
{json_only}
{{"contexts": [{{"index": <الرقم>, "verdict": "useful" | "not useful", "reason": "<سبب موجز>"}}], "reasoning": "<جملة واحدة>"}}"""


# --- how a reply becomes a score ------------------------------------------------------------------

def useful_contexts(obj: dict) -> Optional[Tuple[float, List[dict]]]:
    """Average precision over the per-context "useful" verdicts, in rank order."""
    ctxs = verdict_list(obj, "contexts")
    return (average_precision([is_positive(c.get("verdict")) for c in ctxs]), ctxs) if ctxs else None


# --- its heuristic in each set --------------------------------------------------------------------

def _seed(s: EvalSample, lang: str) -> HeuristicScore:
    """The seed's: mean Jaccard overlap of the question and each context."""
    if not s.contexts:
        return HeuristicScore(0.0, "No contexts retrieved.")
    values = [jaccard(words(s.question), words(c)) for c in s.contexts]
    value = round(sum(values) / len(values), 4)
    return HeuristicScore(value, f"Mean Jaccard overlap of question and each context: {value:.3f}.")


def lexical_relevances(s: EvalSample, lang: str = "en", kind: str = LEXICAL) -> List[float]:
    """Relevance in [0, 1] of each retrieved context to the question (and reference, when given). A
    context that holds the reference (or the answer, which context_recall and faithfulness would find
    in it) is relevant, however few of the question's words it repeats (`holds`)."""
    if kind == SEED:
        return [jaccard(words(s.question), words(c)) for c in s.contexts]
    question = analyse(s.question)
    reference = analyse(s.ground_truth or "")
    answer = analyse(s.answer or "")
    ctx = analyse_contexts(tuple(s.contexts))
    return [max(_relevance(c, question, reference, ctx.weights), holds(c, reference, answer))
            for c in ctx.analyses]


# A context holding this share of a statement's content words holds the statement; a statement of fewer
# words than HOLDS_MIN_WORDS ("yes", "Paris") is found in too many passages to say which one answers.
HOLDS_SHARE = 0.8
HOLDS_MIN_WORDS = 6
HELD_RELEVANCE = 0.9  # well above RELEVANT_MIDPOINT: a context that holds the reference is a "yes"


def holds(ctx: Analysis, *statements: Analysis) -> float:
    """HELD_RELEVANCE when `ctx` holds one of `statements` (the reference, the answer), else 0."""
    for st in statements:
        if len(st.vocab) >= HOLDS_MIN_WORDS and len(st.vocab & ctx.vocab) >= HOLDS_SHARE * len(st.vocab):
            return HELD_RELEVANCE
    return 0.0


def _relevance(ctx: Analysis, question: Analysis, reference: Analysis, weights: Weights) -> float:
    """Weighted question coverage, in the whole context and in its lead sentence (which names what
    the passage is about), plus the share of the reference found in it."""
    lead = ctx.sentences[0] if ctx.sentences else frozenset()
    if not question.vocab:
        whole = topic = 0.0
    else:
        whole, topic = shares_in(question.vocab, weights, ctx.vocab, lead)
    if not reference.vocab:
        return 0.6 * whole + 0.4 * topic
    ref = len(reference.vocab & ctx.vocab) / len(reference.vocab)
    return 0.5 * whole + 0.3 * topic + 0.2 * ref


# Relevance scores become probabilities of "this context is relevant" before average precision,
# which is defined over yes/no verdicts: well above the midpoint counts as a yes, well below as a no.
RELEVANT_MIDPOINT = 0.45
RELEVANT_STEEPNESS = 20.0


def relevant_probability(relevance: float) -> float:
    return 1.0 / (1.0 + math.exp(-RELEVANT_STEEPNESS * (relevance - RELEVANT_MIDPOINT)))


def soft_average_precision(relevance: Sequence[float]) -> float:
    """Average precision with graded relevance: sum of precision@k weighted by each item's relevance.

    With 0/1 relevance it equals evaluator.metrics.parsing.average_precision; with weak relevance
    everywhere it stays low, because precision@k is itself the mean relevance of the top k.
    """
    total = got = running = 0.0
    for k, rel in enumerate(relevance, 1):
        running += rel
        got += rel * running / k
        total += rel
    return got / total if total else 0.0


def precision_from(s: EvalSample, relevances: Callable[[EvalSample, str], List[float]], lang: str,
                   how: str = "") -> HeuristicScore:
    """Context precision from per-context relevances (rank-aware average precision), explained."""
    if not s.contexts:
        return HeuristicScore(0.0, "No contexts retrieved.")
    rel = relevances(s, lang)
    score = soft_average_precision([relevant_probability(r) for r in rel])
    shown = ", ".join(f"{r:.2f}" for r in rel[:10])
    what = "question and reference" if (s.ground_truth or "").strip() else "question"
    return HeuristicScore(rounded(score), f"Relevance of each context to the {what}{how}, in rank order: "
                                         f"{shown}; rank-aware average precision {score:.2f}.")


def _precision(s: EvalSample, lang: str) -> HeuristicScore:
    return precision_from(s, lexical_relevances, lang)


# Kept in the "embedding" set, per bench/validity.py on the development halves (lexical -> with
# embeddings): each context's similarity to the question and reference, averaged with its lexical
# relevance before the rank-aware average precision; per-context AUROC 0.913 -> 0.942, Spearman
# 0.610 -> 0.632.
def embedding_relevances(s: EvalSample, lang: str = "en") -> List[float]:
    """Relevance in [0, 1] of each context: its lexical relevance averaged with its embedding
    similarity to the question, followed by the reference when there is one."""
    from .embeddings import blend_similarity, get_embedder  # loaded with the "embedding" set only

    lex = lexical_relevances(s, lang)
    if lang == "ar" or not s.contexts:
        return lex
    query = " ".join(t for t in (s.question, s.ground_truth or "") if t.strip())
    vecs = get_embedder().encode([query] + list(s.contexts))
    return [blend_similarity(r, float(v @ vecs[0])) for r, v in zip(lex, vecs[1:])]


def _embedding(s: EvalSample, lang: str) -> HeuristicScore:
    return precision_from(s, embedding_relevances, lang, " (lexical and embedding similarity, evenly)")


def context_relevances(s: EvalSample, lang: str = "en", kind: str = LEXICAL) -> List[float]:
    """Relevance in [0, 1] of each retrieved context to the question, as the named heuristic set sees it."""
    if kind == EMBEDDING:
        return embedding_relevances(s, lang)
    return lexical_relevances(s, lang, kind)


# --- its claims view ------------------------------------------------------------------------------

def judge_claims(sample: EvalSample, verdicts: List[Dict[str, Any]]) -> ClaimView:
    """Each context's verdict, by the index the judge gave it (its rank when it gave none)."""
    useful: List[Optional[bool]] = [None] * len(sample.contexts or [])
    claims = []
    for rank, v in enumerate(verdicts, 1):
        try:
            index = int(v.get("index", rank)) - 1  # the prompt numbers contexts from 1
        except (TypeError, ValueError):
            index = rank - 1
        ok = said_yes(v.get("verdict"), ("useful", "yes", "true", "1", "relevant"))
        if 0 <= index < len(useful):
            useful[index] = ok
        claims.append(Claim(str(v.get("reason") or ""), f"context {index + 1}: {'useful' if ok else 'not useful'}",
                            ok, "context"))
    return ClaimView("context_precision", "judge", tuple(claims), tuple(useful))


def offline_claims(sample: EvalSample) -> ClaimView:
    """Each context's lexical relevance, and whether that reads as useful."""
    lang = detect_language(sample.question, *sample.contexts)
    useful = tuple(relevant_probability(r) >= 0.5 for r in lexical_relevances(sample, lang))
    claims = tuple(Claim(f"relevance {r:.2f}", f"context {i}: {'useful' if u else 'not useful'}", u, "context")
                   for i, (r, u) in enumerate(zip(lexical_relevances(sample, lang), useful), 1))
    return ClaimView("context_precision", "heuristic", claims, useful,
                     note="Offline: each context's word overlap with the question and reference.")


# --- its reply shape and completion cap -----------------------------------------------------------
MAX_CONTEXTS = 12
REPLY_SCHEMA = shapes.shape(contexts=shapes.items(shapes.shape(index={"type": "integer"},
                                                                 verdict=shapes.choice(("useful", "not useful")),
                                                                 reason=shapes.text(80)), MAX_CONTEXTS, min_items=1),
                            reasoning=shapes.text())
MAX_TOKENS = shapes.cap_for(MAX_CONTEXTS, 35)  # ~35 tokens a context's verdict and reason: 500


CONTEXT_PRECISION = Metric(
    "context_precision",
    max_tokens=MAX_TOKENS,
    reply_schema=REPLY_SCHEMA,
    needs=("contexts",),  # no contexts is N/A, not a precision of 0 (a chat turn without retrieval)
    prompts={"en": CONTEXT_PRECISION_EN, "ar": CONTEXT_PRECISION_AR},
    shows=("question", "ground_truth", "contexts"),  # the reference is shown only when there is one
    verdicts=useful_contexts,
    heuristics={LEXICAL: _precision, SEED: _seed, EMBEDDING: _embedding},
    default=True,  # scored when a run names no metrics
    languages=("en", "ar"),
    heuristic_sets=(LEXICAL, SEED, EMBEDDING),
    prose=("ground_truth",),  # relevance to a salad reference means nothing
    claims=judge_claims,
    offline_claims=offline_claims,
    advice=advice("Noisy retrieval: many retrieved contexts are irrelevant to the question.",
                   "Rerank the retrieved chunks (for example with a cross-encoder) before answering.",
                   "Lower top_k so fewer irrelevant chunks reach the model.",
                   "Use hybrid search (keyword + vector) to rank relevant chunks first."),
    description="Whether the useful contexts are ranked first (average precision).",
)
