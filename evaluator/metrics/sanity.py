"""Cheap sanity checks that keep obvious garbage out of the top bands of the lexical heuristics.

The heuristics count shared words, so a "word salad" made of the context's own words reads as
faithful, relevant and correct. Two signs of garbage that no real answer shows, both about word
*order*, which word counting cannot see:

- no sentence structure: eight or more words, almost no function words (the, of, is, ...; in
  Arabic also those written as clitics: the article in الكتاب, بالبطاقة, a pronoun in كتابها) and
  few capitalised names (a sentence of names, "Zazie Beetz appeared in 20th Century Fox films",
  has few function words too);
- a bag of the context's words: eight or more words, nearly all found in the contexts, yet
  hardly any two neighbours stand next to each other anywhere in the contexts or question.

Neither applies to a list (commas, semicolons, bullets, one item a line): a list of names is a
fine answer. Only answers and reference answers are checked; questions are often telegraphic
("please explain British education terms (0 levels, 6th form, uni, etc)").

A text that shows either caps the heuristic scores that read it at GARBAGE_CAP, with the reason: each
metric names the fields its heuristic reads as prose (`Metric.prose`; offline.py applies the cap).
The judge, when there is one, still scores as it likes: this only bounds the lexical estimate.
(An empty answer scores 0 on relevancy and correctness: see `Metric.zero_if_empty`.)
"""
from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from typing import FrozenSet, Iterable, Optional, Sequence, Set, Tuple

from ..model import EvalSample
from ..text import analyse, carries_function_word, tokens
from .heuristics import HeuristicScore
from .units import spell_units

GARBAGE_CAP = 0.3  # inside "Problem": garbage must never read as Good or Excellent
MIN_WORDS = 8  # shorter texts (bare answers, names) carry too little order to judge
MAX_FUNCTION_SHARE = 0.1  # real English or Arabic prose runs at 30-50% function words
MAX_NAME_SHARE = 0.3  # capitalised words: above this the text is a sentence about names
MIN_CONTEXT_COVERAGE = 0.9
MAX_BIGRAM_SHARE = 0.2  # copied or paraphrased prose shares far more neighbour pairs
_LIST_MARKS = re.compile(r"[,;،؛\n•|]|\s[-*]\s|\d[.)]\s")


def garbage_reason(text: str, contexts: Iterable[str] = (), question: str = "") -> Optional[str]:
    """Why `text` is not prose (no structure, or a shuffled bag of the contexts' words), or None."""
    return _garbage_reason(text or "", tuple(contexts), question or "")


@lru_cache(maxsize=1024)  # three metrics of a sample check the same answer against the same contexts
def _garbage_reason(text: str, contexts: Tuple[str, ...], question: str) -> Optional[str]:
    toks = _tokens(text)
    if len(toks) < MIN_WORDS or len(_LIST_MARKS.findall(text)) >= len(toks) / 4:
        return None
    if _no_structure(text, toks):
        return "it has no sentence structure (almost no function words)"
    if _shuffled_bag(toks, (*contexts, question)):
        return "its words are the contexts' words in an order found nowhere in them"
    return None


def _tokens(text: str) -> Sequence[str]:
    """`tokens(text)`; for ASCII text the heuristics read as it is, from its cached analysis."""
    text = text or ""
    if text.isascii() and spell_units(text) is text:
        return analyse(text).written  # the same words (see text.normalized_words)
    return tokens(text)


def _no_structure(text: str, toks: Sequence[str]) -> bool:
    function = sum(map(carries_function_word, toks))  # Arabic clitics count: بالبطاقة holds "with the"
    names = sum(1 for w in text.split() if w[:1].isupper())
    return function <= MAX_FUNCTION_SHARE * len(toks) and names < MAX_NAME_SHARE * len(toks)


def _shuffled_bag(toks: Sequence[str], sources: Tuple[str, ...]) -> bool:
    vocab = _words(sources)
    if not vocab or sum(map(vocab.__contains__, toks)) < MIN_CONTEXT_COVERAGE * len(toks):
        return False  # the common case: the neighbour pairs are never needed
    pairs = _pairs(sources)
    own = list(zip(toks, toks[1:]))
    return sum(p in pairs for p in own) <= MAX_BIGRAM_SHARE * len(own)


@lru_cache(maxsize=256)  # one sample's metrics read the same contexts several times
def _words(sources: Tuple[str, ...]) -> FrozenSet[str]:
    return frozenset().union(*map(_tokens, sources))


@lru_cache(maxsize=256)
def _pairs(sources: Tuple[str, ...]) -> FrozenSet[Tuple[str, str]]:
    pairs: Set[Tuple[str, str]] = set()
    for source in sources:
        src = _tokens(source)
        pairs.update(zip(src, src[1:]))
    return frozenset(pairs)


def checked(prose: Sequence[str], sample: EvalSample, score: HeuristicScore) -> HeuristicScore:
    """`score` (a heuristic's result), capped at GARBAGE_CAP when a text it reads is garbage: `prose`
    names the sample fields the metric's heuristic reads as prose (`Metric.prose`)."""
    if score.score <= GARBAGE_CAP:
        return score
    for field in prose:
        text = getattr(sample, field) or ""
        reason = garbage_reason(text, sample.contexts, sample.question)
        if reason:
            why = f"Capped at {GARBAGE_CAP}: the {_FIELD_NAMES[field]} looks like word salad ({reason}). "
            return replace(score, score=GARBAGE_CAP, reasoning=why + score.reasoning)
    return score


_FIELD_NAMES = {"answer": "answer", "ground_truth": "reference answer"}
