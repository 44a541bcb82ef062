"""Context recall: the share of the reference answer's statements found in the contexts.

Everything ragmeter knows about it is here, in one Metric: the fields it needs, its prompts, how a
reply becomes a score (the statements' verdicts), its heuristic in each heuristic set, the field its
sanity check reads, and its claims view for the drill-down.

Offline ("ragmeter" set): how much of each reference sentence the contexts contain, a sentence's
names and numbers counting for half of it.
"""
from __future__ import annotations

from typing import Any, Dict, FrozenSet, List, Optional, Tuple

from ..model import EvalSample
from ..text import Analysis, analyse, sentences
from .claim_spans import (OFFLINE_COVERAGE, REFERENCE, Claim, ClaimView, Where, claim_in, context_texts, said_yes,
                          sentence_spans, support)
from .heuristics import (
    EMBEDDING,
    LEXICAL,
    SEED,
    HeuristicScore,
    analyse_contexts,
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
# Asks for the reference's statements one by one, so the score is computed from the verdicts (below).
CONTEXT_RECALL_EN = """Split the REFERENCE into its statements. For each, decide whether it can be attributed to the
CONTEXTS (they state or directly imply it).
{json_only}
{{"statements": [{{"statement": "<statement>", "attributed": true | false}}], "score": <attributed / all, 0.0-1.0>, "reasoning": "<one sentence>"}}"""

CONTEXT_RECALL_AR = """قسّم الإجابة المرجعية إلى عباراتها، واحكم على كل منها: هل يمكن نسبتها إلى النصوص المسترجعة
(أي تنص عليها أو تدل عليها مباشرة)؟
{json_only}
{{"statements": [{{"statement": "<العبارة>", "attributed": true | false}}], "score": <نسبة العبارات المنسوبة من 0.0 إلى 1.0>, "reasoning": "<جملة واحدة>"}}"""


# --- how a reply becomes a score ------------------------------------------------------------------

def attributed_statements(obj: dict) -> Optional[Tuple[float, List[dict]]]:
    """The share of reference statements attributed to the contexts."""
    stmts = verdict_list(obj, "statements")
    return (positive_share(stmts, "attributed"), stmts) if stmts else None


# --- its heuristic in each set --------------------------------------------------------------------

def _seed(s: EvalSample, lang: str) -> HeuristicScore:
    """The seed's: Jaccard overlap of the reference and the contexts."""
    return jaccard_score(s.ground_truth or "", " ".join(s.contexts), "reference and contexts")


def _recall(s: EvalSample, lang: str) -> HeuristicScore:
    reference, question = analyse(s.ground_truth or ""), analyse(s.question)
    ctx = analyse_contexts(tuple(s.contexts))
    vocab, weights = ctx.vocab, ctx.weights
    statements = _reference_statements(reference, question)
    if not statements:
        return HeuristicScore(0.0, "Neither the reference nor the question has content words to look for.")
    shares, keys_found, keys_total = [], 0, 0
    for words_, keys in statements:
        coverage = weighted_share(words_, weights, vocab)
        found = sum(1 for k in keys if k <= vocab)
        keys_found, keys_total = keys_found + found, keys_total + len(keys)
        # Names and numbers are the facts a statement hinges on: half its score when it has any.
        shares.append(0.5 * coverage + 0.5 * found / len(keys) if keys else coverage)
    score = sum(shares) / len(shares)
    attributed = sum(1 for v in shares if v >= 0.5)
    missing = sorted(reference.vocab - vocab)
    why = f"{attributed}/{len(shares)} reference sentences mostly found in the contexts"
    if keys_total:
        why += f"; {keys_found}/{keys_total} of their names and numbers retrieved"
    why += f"; reference words not retrieved: {quote(missing, show=reference.as_written)}." if missing else "."
    return HeuristicScore(rounded(score), why)


def _reference_statements(reference: Analysis, question: Analysis) -> List[Tuple[FrozenSet[str], list]]:
    """(content words, key facts) of each reference sentence to look for in the contexts.

    A bare-span reference ("1933", "yes") answers the question: the statement to find is the
    question and the span together, and its key facts are the question's names and the span.
    """
    if len(reference.sentences) <= 1 and len(reference.vocab) < len(question.vocab):
        keys = list(question.entities) + ([reference.vocab] if reference.vocab else [])
        return [(reference.vocab | question.vocab, keys)]
    out = []
    for part, sent in zip(reference.raw, reference.sentences):
        if sent:
            a = analyse(part)
            out.append((sent, list(a.entities) + [frozenset([n]) for n in a.numbers]))
    return out


# Kept in the "embedding" set, per bench/validity.py on the development halves (lexical -> with
# embeddings): each reference statement's best-matching context sentence; Spearman 0.633 -> 0.653,
# all-gold AUROC 0.872 -> 0.882.
def _embedding(s: EvalSample, lang: str) -> HeuristicScore:
    from .embeddings import blend_similarity, get_embedder  # loaded with the "embedding" set only

    h = _recall(s, lang)
    reference = (s.ground_truth or "").strip()
    if not reference or not s.contexts:
        return h
    # A bare-span reference ("1933") means nothing alone: the statement to find is the question
    # answered by it, as in the lexical scorer.
    statements = [f"{s.question} {reference}"] if is_bare_span(reference) else sentences(reference) or [reference]
    pieces = [p for c in s.contexts for p in sentences(c) or [c]]
    best = get_embedder().best_match(statements, pieces)
    sizes = [len(x) for x in statements]
    semantic = sum(b * n for b, n in zip(best, sizes)) / sum(sizes)
    why = (f"Reference statements' best-matching context sentences: embedding similarity {semantic:.2f}; "
           f"blended evenly with the lexical score {h.score:.2f}: {h.reasoning}")
    return HeuristicScore(blend_similarity(h.score, semantic), why)


# --- its claims view ------------------------------------------------------------------------------

def judge_claims(sample: EvalSample, verdicts: List[Dict[str, Any]]) -> ClaimView:
    """Each statement the judge listed, located in the reference, with where the contexts hold it."""
    out = []
    for v in verdicts:
        ok = said_yes(v.get("attributed"), ("true", "yes", "1", "attributed"))
        out.append(claim_in(str(v.get("statement") or ""), "found in the contexts" if ok else "not in the contexts",
                            ok, REFERENCE, sample.ground_truth or "", sample, kind="statement"))
    return ClaimView("context_recall", "judge", tuple(out))


def offline_claims(sample: EvalSample) -> ClaimView:
    """Each reference sentence with the context sentence that holds most of it."""
    reference = sample.ground_truth or ""
    claims = []
    for sent in sentence_spans(reference):
        piece = reference[sent.start:sent.end]
        where = support(piece, context_texts(sample), OFFLINE_COVERAGE)
        claims.append(Claim(piece, "found in the contexts" if where else "not in the contexts", where is not None,
                            "statement", Where(REFERENCE, sent.start, sent.end), where))
    return ClaimView("context_recall", "heuristic", tuple(claims),
                     note="Offline: each reference sentence with the context sentence that holds most of it.")


# --- its reply shape and completion cap -----------------------------------------------------------
MAX_STATEMENTS = 8
REPLY_SCHEMA = shapes.shape(statements=shapes.items(shapes.shape(statement=shapes.text(shapes.ITEM_CHARS),
                                                                   attributed={"type": "boolean"}), MAX_STATEMENTS,
                                                    min_items=1),
                            reasoning=shapes.text())
MAX_TOKENS = shapes.cap_for(MAX_STATEMENTS, 55)  # 520


CONTEXT_RECALL = Metric(
    "context_recall",
    max_tokens=MAX_TOKENS,
    reply_schema=REPLY_SCHEMA,
    needs=("ground_truth", "contexts"),  # no contexts is N/A with its reason, never a silent 0
    prompts={"en": CONTEXT_RECALL_EN, "ar": CONTEXT_RECALL_AR},
    shows=("question", "contexts", "ground_truth"),
    verdicts=attributed_statements,
    heuristics={LEXICAL: _recall, SEED: _seed, EMBEDDING: _embedding},
    default=True,  # scored when a run names no metrics
    languages=("en", "ar"),
    heuristic_sets=(LEXICAL, SEED, EMBEDDING),
    prose=("ground_truth",),
    claims=judge_claims,
    offline_claims=offline_claims,
    advice=advice("Retrieval misses: the retrieved contexts lack facts the reference answer needs.",
                   "Raise top_k so more candidate chunks reach the model.",
                   "Revisit chunking (chunk size and overlap) so facts are not split across chunks.",
                   "Add metadata filters so retrieval searches the right documents."),
    description="Share of the reference answer's statements found in the contexts.",
)
