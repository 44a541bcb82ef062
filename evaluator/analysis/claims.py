"""Where the judge's claims sit in the text: each claim located in the answer (or reference), and
the context sentence that supports it, by fuzzy alignment — or "not located", never a guess.

The judge writes paraphrases ("The card launched in 1997" for "Launched in 1997, the card ..."),
so a claim is aligned on content words (the heuristics' tokeniser: stop words dropped, light
stems, Arabic normalised), in any order, within one sentence; a word the stemmer misses
("colour"/"color") still counts when difflib finds it close enough. A claim is located only when
most of its content words are found in one sentence (MIN_COVERAGE); the mark then spans the
first to the last matched word, or the whole sentence when those words are scattered.

Offline scores get the same view from the heuristic's own evidence: the answer's content words
and numbers that appear in no context, each answer sentence with its best context sentence,
each context's relevance, each reference sentence with where it was found.

Offsets are character offsets into the text as written (Arabic diacritics included), so a
renderer can cut the original string; see evaluator.analysis.highlight.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..metrics.heuristics import context_relevances, relevant_probability
from ..model import EvalSample, MetricScore
from ..text import content_word, detect_language, normalize, sentences, words

# Share of a claim's content words that must be found in one sentence to locate it there.
MIN_COVERAGE = 0.6
# The heuristics count a reference sentence as found when half its words are (see _recall there).
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
def _sentences(text: str) -> Tuple[_Sentence, ...]:
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
               for n, sent in enumerate(_sentences(text or "")) if not sent.keys.isdisjoint(wanted)]
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


# --- claim views, from the judge's verdicts or the heuristic's evidence -------------------

def _contexts(sample: EvalSample) -> List[Tuple[str, str]]:
    return [(context_field(i), c) for i, c in enumerate(sample.contexts or [])]


def _claim(text: str, verdict: str, positive: bool, home: str, home_text: str, sample: EvalSample,
           kind: str = "claim") -> Claim:
    evidence = support(text, _contexts(sample)) if positive else None
    return Claim(text, verdict, positive, kind, locate(text, home_text, home), evidence)


def _yes(value: Any, positive: Tuple[str, ...]) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in positive


def _faithfulness(sample: EvalSample, verdicts: List[Dict[str, Any]]) -> Tuple[Claim, ...]:
    out = []
    for v in verdicts:
        ok = _yes(v.get("verdict"), ("supported", "yes", "true", "1"))
        out.append(_claim(str(v.get("claim") or ""), "supported" if ok else "unsupported", ok,
                          ANSWER, sample.answer, sample))
    return tuple(out)


def _recall(sample: EvalSample, verdicts: List[Dict[str, Any]]) -> Tuple[Claim, ...]:
    out = []
    for v in verdicts:
        ok = _yes(v.get("attributed"), ("true", "yes", "1", "attributed"))
        out.append(_claim(str(v.get("statement") or ""), "found in the contexts" if ok else "not in the contexts",
                          ok, REFERENCE, sample.ground_truth or "", sample, kind="statement"))
    return tuple(out)


def _correctness(sample: EvalSample, verdicts: List[Dict[str, Any]]) -> Tuple[Claim, ...]:
    names = {"TP": "in the reference", "FP": "not in the reference", "FN": "missing from the answer"}
    out = []
    for v in verdicts:
        kind = str(v.get("verdict") or "")
        home, text = (REFERENCE, sample.ground_truth or "") if kind == "FN" else (ANSWER, sample.answer)
        claim = str(v.get("claim") or "")
        out.append(Claim(claim, names.get(kind, kind), kind == "TP", "claim", locate(claim, text, home)))
    return tuple(out)


def _precision(sample: EvalSample, verdicts: List[Dict[str, Any]]) -> Tuple[Tuple[Claim, ...], Tuple[Optional[bool], ...]]:
    useful: List[Optional[bool]] = [None] * len(sample.contexts or [])
    claims = []
    for rank, v in enumerate(verdicts, 1):
        try:
            index = int(v.get("index", rank)) - 1  # the prompt numbers contexts from 1
        except (TypeError, ValueError):
            index = rank - 1
        ok = _yes(v.get("verdict"), ("useful", "yes", "true", "1", "relevant"))
        if 0 <= index < len(useful):
            useful[index] = ok
        claims.append(Claim(str(v.get("reason") or ""), f"context {index + 1}: {'useful' if ok else 'not useful'}",
                            ok, "context"))
    return tuple(claims), tuple(useful)


_JUDGED = {"faithfulness": _faithfulness, "context_recall": _recall, "answer_correctness": _correctness}


def claim_view(sample: EvalSample, score: MetricScore) -> Optional[ClaimView]:
    """The claims behind one score: the judge's verdicts when it gave some, else the heuristic's
    evidence for the metrics that have one; None for a metric with neither (e.g. relevancy)."""
    verdicts = [v for v in score.verdicts if isinstance(v, dict)]
    if score.skipped:
        return None
    if verdicts and score.name == "context_precision":
        claims, useful = _precision(sample, verdicts)
        return ClaimView(score.name, "judge", claims, useful)
    if verdicts and score.name in _JUDGED:
        return ClaimView(score.name, "judge", _JUDGED[score.name](sample, verdicts))
    offline = _OFFLINE.get(score.name)
    return offline(sample) if offline else None


# --- the heuristic's own evidence ----------------------------------------------------------

def _offline_faithfulness(sample: EvalSample) -> ClaimView:
    """Each answer sentence with its best context sentence; the words and numbers no context has."""
    contexts = _contexts(sample)
    vocab = {t.key for _, text in contexts for s in _sentences(text) for t in s.tokens if t.key}
    claims = []
    for sent in _sentences(sample.answer or ""):
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


def _offline_precision(sample: EvalSample) -> ClaimView:
    lang = detect_language(sample.question, *sample.contexts)
    useful = tuple(relevant_probability(r) >= 0.5 for r in context_relevances(sample, lang))
    claims = tuple(Claim(f"relevance {r:.2f}", f"context {i}: {'useful' if u else 'not useful'}", u, "context")
                   for i, (r, u) in enumerate(zip(context_relevances(sample, lang), useful), 1))
    return ClaimView("context_precision", "heuristic", claims, useful,
                     note="Offline: each context's word overlap with the question and reference.")


def _offline_recall(sample: EvalSample) -> ClaimView:
    reference = sample.ground_truth or ""
    claims = []
    for sent in _sentences(reference):
        piece = reference[sent.start:sent.end]
        where = support(piece, _contexts(sample), OFFLINE_COVERAGE)
        claims.append(Claim(piece, "found in the contexts" if where else "not in the contexts", where is not None,
                            "statement", Where(REFERENCE, sent.start, sent.end), where))
    return ClaimView("context_recall", "heuristic", tuple(claims),
                     note="Offline: each reference sentence with the context sentence that holds most of it.")


_OFFLINE = {"faithfulness": _offline_faithfulness, "context_precision": _offline_precision,
            "context_recall": _offline_recall}


def claim_views(sample: EvalSample, scores: Dict[str, MetricScore]) -> List[ClaimView]:
    """The claim view of every metric of a result that has one, in the result's order."""
    return [v for v in (claim_view(sample, ms) for ms in scores.values()) if v is not None]


def clear_caches() -> None:
    """Forget cached sentence splits and word keys (for benchmarks and long-lived processes)."""
    _sentences.cache_clear()
    _key.cache_clear()
    _close.cache_clear()
