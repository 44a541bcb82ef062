"""Claims and where they sit in the text: each claim located in the answer (or reference), and the
context sentence that supports it, by fuzzy alignment — or "not located", never a guess.

The judge writes paraphrases ("The card launched in 1997" for "Launched in 1997, the card ..."),
so a claim is aligned on content words (the heuristics' tokeniser: stop words dropped, light
stems, Arabic normalised), in any order, within one sentence; a word the stemmer misses
("colour"/"color") still counts when difflib finds it close enough. A claim is located only when
most of its content words are found in one sentence (MIN_COVERAGE); the mark then spans the
first to the last matched word, or the whole sentence when those words are scattered.

These are the shared pieces a metric builds its claims view with (`Metric.claims` from the judge's
verdicts, `Metric.offline_claims` from its heuristic's evidence: see faithfulness.py); the view of a
score is asked for in evaluator.analysis.claims. Offsets are character offsets into the text as
written (Arabic diacritics included), so a renderer can cut the original string; see
evaluator.analysis.highlight.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, List, Optional, Sequence, Tuple

from ..model import EvalSample
from ..text import content_word, normalize, sentences, words

# Share of a claim's content words that must be found in one sentence to locate it there.
MIN_COVERAGE = 0.6
# The heuristics count a reference sentence as found when half its words are (see context_recall.py).
OFFLINE_COVERAGE = 0.5
# A word the stemmer did not match still counts when difflib rates it this close (e.g. "colour"/"color").
CLOSE_WORD = 0.8
# Sentences (by exact word overlap) that are aligned closely, difflib included.
FUZZY_CANDIDATES = 4
# Matched words further apart than this many times the claim's length: mark the whole sentence.
SCATTER = 3

ANSWER, REFERENCE = "answer", "reference"
# A word as written: letters/digits of any script, with the Arabic marks that sit inside words.
_WORD = re.compile(r"(?:[^\W_]|[\u0610-\u061A\u064B-\u065F\u0670\u06D6-\u06ED\u0640])+")


def context_field(index: int) -> str:
    """The field name of the 0-based context `index` ("context:0")."""
    return f"context:{index}"


@dataclass(frozen=True)
class Where:
    """A span of one field's text: field is "answer", "reference" or "context:N" (0-based)."""

    field: str
    start: int
    end: int


@dataclass(frozen=True)
class Claim:
    """One claim (or statement, or context verdict) with where it sits and what supports it.

    kind: "claim" (a statement in the answer), "statement" (a reference statement), "context"
    (a context's verdict) or "word" (a heuristic's unsupported word or number).
    """

    text: str
    verdict: str
    positive: bool
    kind: str = "claim"
    located: Optional[Where] = None  # the claim in the answer / reference; None: not located
    evidence: Optional[Where] = None  # the context sentence that supports it


@dataclass(frozen=True)
class ClaimView:
    """Every claim of one metric of one sample; source is "judge" or "heuristic"."""

    metric: str
    source: str
    claims: Tuple[Claim, ...] = ()
    context_verdicts: Tuple[Optional[bool], ...] = ()  # context precision: useful?, per context
    note: str = ""

    @property
    def not_located(self) -> List[Claim]:
        return [c for c in self.claims if c.kind in ("claim", "statement") and c.located is None]


# --- tokens with offsets -------------------------------------------------------------------

@dataclass(frozen=True)
class _Token:
    key: str  # content word ("" for a stop word)
    start: int
    end: int


@dataclass(frozen=True)
class _Sentence:
    start: int
    end: int
    tokens: Tuple[_Token, ...]
    keys: frozenset = field(default_factory=frozenset)


@lru_cache(maxsize=65536)
def _key(word: str) -> str:
    parts = words(normalize(word))
    return content_word(parts[0]) if len(parts) == 1 else ""


@lru_cache(maxsize=256)
def sentence_spans(text: str) -> Tuple[_Sentence, ...]:
    """The text's sentences (the heuristics' splitter) as offsets, with their tokens."""
    out, cursor = [], 0
    for sent in sentences(text):
        start = text.find(sent, cursor)
        if start < 0:  # cannot happen for stripped substrings; skip rather than mis-place
            continue
        end = start + len(sent)
        cursor = end
        toks = tuple(_Token(_key(m.group()), start + m.start(), start + m.end()) for m in _WORD.finditer(sent))
        out.append(_Sentence(start, end, toks, frozenset(t.key for t in toks if t.key)))
    return tuple(out)


def _claim_keys(claim: str) -> List[str]:
    keys = [_key(m.group()) for m in _WORD.finditer(claim or "")]
    return list(dict.fromkeys(k for k in keys if k))


def _coverage(keys: Sequence[str], sent: _Sentence) -> Tuple[float, List[_Token]]:
    """The share of the claim's keys found in the sentence (exactly, or closely by difflib for a
    word the stemmer missed), and the sentence's tokens that matched."""
    wanted = {k for k in keys if k in sent.keys}
    found = len(wanted)
    loose = [k for k in keys if k not in sent.keys and len(k) > 3]
    if loose and (found + len(loose)) / len(keys) >= OFFLINE_COVERAGE:  # else no fuzzy match can matter
        pool = tuple(sorted(sent.keys - wanted))
        for k in loose:
            close = _close(k, pool)
            if close:
                wanted.add(close)
                found += 1
    return found / len(keys), [t for t in sent.tokens if t.key and t.key in wanted]


@lru_cache(maxsize=16384)
def _close(word: str, pool: Tuple[str, ...]) -> Optional[str]:
    found = difflib.get_close_matches(word, pool, n=1, cutoff=CLOSE_WORD)
    return found[0] if found else None


def locate(claim: str, text: str, field_name: str) -> Optional[Where]:
    """Where `claim` sits in `text`: the span of its words in the best sentence, or None when no
    sentence holds MIN_COVERAGE of its content words."""
    found = _best(claim, [(field_name, text)])
    return found[0] if found else None


def support(claim: str, texts: Sequence[Tuple[str, str]], least: float = MIN_COVERAGE) -> Optional[Where]:
    """The whole sentence, among (field, text) pairs, that holds most of `claim`; None below `least`."""
    found = _best(claim, texts, least)
    if not found:
        return None
    where, sent = found
    return Where(where.field, sent.start, sent.end)


def _best(claim: str, texts: Sequence[Tuple[str, str]],
          least: float = MIN_COVERAGE) -> Optional[Tuple[Where, _Sentence]]:
    keys = _claim_keys(claim)
    if not keys:
        return None
    wanted = frozenset(keys)
    # Exact overlap first (a set intersection per sentence); difflib only for the few sentences
    # that share the most words, so ten 500-word contexts cost milliseconds, not seconds.
    overlap = [(len(sent.keys & wanted), n, name, sent) for name, text in texts
               for n, sent in enumerate(sentence_spans(text or "")) if not sent.keys.isdisjoint(wanted)]
    overlap.sort(key=lambda t: -t[0])
    best: Optional[Tuple[float, int, Where, _Sentence]] = None
    for _, _, name, sent in overlap[:FUZZY_CANDIDATES]:
        share, hits = _coverage(keys, sent)
        if share < least or not hits:
            continue
        where = _span(hits, sent, len(keys), name)
        width = where.end - where.start
        if best is None or share > best[0] or (share == best[0] and width < best[1]):
            best = (share, width, where, sent)
    return (best[2], best[3]) if best else None


def _span(hits: List[_Token], sent: _Sentence, n_keys: int, name: str) -> Where:
    first, last = hits[0], hits[-1]
    between = sum(1 for t in sent.tokens if first.start <= t.start <= last.start and t.key)
    if between > SCATTER * n_keys:
        return Where(name, sent.start, sent.end)
    return Where(name, first.start, last.end)


# --- pieces of a metric's claims view ----------------------------------------------------

def context_texts(sample: EvalSample) -> List[Tuple[str, str]]:
    """(field, text) of each retrieved context: what `support` searches."""
    return [(context_field(i), c) for i, c in enumerate(sample.contexts or [])]


def claim_in(text: str, verdict: str, positive: bool, home: str, home_text: str, sample: EvalSample,
             kind: str = "claim") -> Claim:
    """A judged claim located in its home field's text, with its support in the contexts when it is positive."""
    evidence = support(text, context_texts(sample)) if positive else None
    return Claim(text, verdict, positive, kind, locate(text, home_text, home), evidence)


def said_yes(value: Any, positive: Tuple[str, ...]) -> bool:
    """Whether a verdict's value (a bool, or a word among `positive`) says yes."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in positive


def clear_caches() -> None:
    """Forget cached sentence splits and word keys (for benchmarks and long-lived processes)."""
    sentence_spans.cache_clear()
    _key.cache_clear()
    _close.cache_clear()
