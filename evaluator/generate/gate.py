"""The quality gate: what a generated item must pass to be kept, and the reasons it is not.

Lexical checks first (free): the question is not empty, not a near-duplicate of a kept question
(content-word Jaccard at or above NEAR_DUPLICATE), and does not copy a run of a passage's words
(COPY_RUN of its own words in a row, or all of a short question's). Then the judge: the question is
answerable from its chunks and the reference is supported by them; for the unanswerable kind, the
chunks the lexical retriever finds over the whole corpus must not answer it. Each rejection has
one reason from REASONS, which the runner counts.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, List, Optional, Sequence, Set, Tuple

from ..metrics.parsing import load_json_object
from ..text import content_words, tokens
from .chunking import Chunk

NEAR_DUPLICATE = 0.7
COPY_SHARE, COPY_MIN = 0.8, 6
REASONS = {
    "unparseable": "the generation reply was not the JSON asked for",
    "empty": "no question or no reference answer",
    "near_duplicate": "too close to a question already kept",
    "copies_passage": "copies a sentence of its passage",
    "not_answerable": "the judge found it not answerable from its chunks",
    "unsupported_reference": "the judge found the reference answer not supported by the chunks",
    "answerable_from_corpus": "meant to be unanswerable, but the retrieved chunks answer it",
    "unparseable_check": "the judge's check reply could not be read",
    "judge_error": "a judge call failed after its retries",
}


def word_set(text: str) -> Set[str]:
    return set(content_words(text))


def jaccard(a: Set[str], b: Set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def near_duplicate(question: str, kept: Iterable[Set[str]]) -> bool:
    words = word_set(question)
    return any(jaccard(words, other) >= NEAR_DUPLICATE for other in kept)


def copies_passage(question: str, chunks: Sequence[Chunk]) -> bool:
    """Does the question repeat COPY_SHARE of its words in a row from one of the passages?"""
    q = tokens(question)
    if not q:
        return False
    run = min(len(q), max(COPY_MIN, math.ceil(COPY_SHARE * len(q))))
    grams = {tuple(q[i:i + run]) for i in range(len(q) - run + 1)}
    for c in chunks:
        t = tokens(c.text)
        if any(tuple(t[i:i + run]) in grams for i in range(len(t) - run + 1)):
            return True
    return False


def read_generation(reply: str, unanswerable: bool) -> Tuple[Optional[dict], Optional[str]]:
    """(the reply's fields, None) or (None, a rejection reason)."""
    obj = load_json_object(reply or "")
    if obj is None:
        return None, "unparseable"
    question = _text(obj.get("question"))
    answer = _text(obj.get("answer") or obj.get("reference") or obj.get("reference_answer"))
    if not question or (not unanswerable and not answer):
        return None, "empty"
    return {"question": question, "answer": answer, "keywords": _keywords(obj.get("keywords"))}, None


def read_check(reply: str, *keys: str) -> Optional[dict]:
    """The check's verdicts as booleans ({key: bool}), or None when the reply does not give them all."""
    obj = load_json_object(reply or "")
    if obj is None:
        return None
    verdicts = {}
    for key in keys:
        value = _truth(obj.get(key))
        if value is None:
            return None
        verdicts[key] = value
    return verdicts


def _truth(value: Any) -> Optional[bool]:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    return True if text in ("true", "yes", "1") else False if text in ("false", "no", "0") else None


def _text(value: Any) -> str:
    return " ".join(str(value).split()) if isinstance(value, (str, int, float)) else ""


def _keywords(value: Any) -> List[str]:
    if isinstance(value, str):
        value = [v for v in value.replace(";", ",").split(",")]
    if not isinstance(value, list):
        return []
    return [k for k in (_text(v) for v in value) if k][:6]


def answer_keywords(keywords: Sequence[str], answer: str, limit: int = 4) -> List[str]:
    """The model's keywords that the reference answer contains (a keyword the answer lacks would fail
    a right answer), else the answer's numbers and longest content words."""
    answer_words = set(tokens(answer))
    kept = [k for k in keywords if tokens(k) and set(tokens(k)) <= answer_words]
    if kept:
        return list(dict.fromkeys(kept))[:limit]
    words = [w for w in tokens(answer) if any(ch.isdigit() for ch in w)]
    words += sorted({w for w in tokens(answer) if content_words(w) and len(w) > 3}, key=lambda w: (-len(w), w))
    return list(dict.fromkeys(words))[:min(limit, 3)]
