"""Lexical heuristics' shared pieces: the offline judge, and the 30% stabiliser blended with every LLM score.

Each metric's heuristic is a pure function (sample, lang) -> HeuristicScore that lives in the metric's
own module (faithfulness.py, answer_relevancy.py, ...), one per heuristic set (offline.py): the
"ragmeter" set, and the seed's Jaccard set kept to reproduce the seed's numbers. This module holds
what they share:

- the seed's token Jaccard overlap;
- one analysis of a sample's contexts (content words, numbers, persons, sentences) made once per
  sample, and IDF-like word weights computed from the sample's own texts only, so a word every
  context repeats counts less than a rare one; weighted shares of words found;
- the answer's shape: bare spans, evasive answers ("I have no comment"), and whether the answer
  has the shape its question asks for (yes/no, a number, a name, a reason), which answer relevancy
  and the agent metrics' task completion both read.

The "ragmeter" set compares *content words* (stop words dropped, lightly stemmed, Arabic
normalised; see evaluator.text) rather than raw tokens, and asks each metric's own question.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from typing import (
    AbstractSet,
    Callable,
    Dict,
    FrozenSet,
    Iterable,
    List,
    Sequence,
    Tuple,
)

from .. import text
from ..model import EvalSample
from ..text import (
    Analysis,
    analyse,
    at_most_words,
    normalize,
    normalized_words,
    words,
)


@dataclass(frozen=True)
class HeuristicScore:
    score: float
    reasoning: str


Heuristic = Callable[[EvalSample, str], HeuristicScore]

# The heuristic sets a run can choose (offline.py): a metric names its scorer in each (Metric.heuristics).
LEXICAL = "ragmeter"  # the default
SEED = "jaccard"  # the seed's heuristics, kept exactly to reproduce its numbers
EMBEDDING = "embedding"  # opt-in: sentence embeddings blended in where they paid (embeddings.py)


# --- the seed's Jaccard overlap (its set is kept exactly, to reproduce the seed's numbers) -----

def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 0.0


def jaccard_score(left: str, right: str, what: str) -> HeuristicScore:
    """The seed's score of a metric: the Jaccard token overlap of two texts, explained."""
    value = round(jaccard(words(left), words(right)), 4)
    return HeuristicScore(value, f"Jaccard token overlap of {what}: {value:.3f}.")


# --- shared pieces of the ragmeter set -----------------------------------------------------

# Words from the question support an answer at part strength: a bare span ("Paris") restates the
# question's subject implicitly, but the question is not evidence.
QUESTION_CREDIT = 0.5


@dataclass(frozen=True)
class ContextAnalysis:
    """What the metrics read about one sample's retrieved contexts, put together once per sample."""

    analyses: Tuple[Analysis, ...]
    vocab: FrozenSet[str]  # every content word of every context
    numbers: FrozenSet[str]
    persons: FrozenSet[str]  # the first/second-person pronouns any context uses
    sentences: Tuple[Tuple[FrozenSet[str], bool], ...]  # every context sentence: content words, negated?
    weights: "Weights"


@lru_cache(maxsize=64)  # one entry a sample: small, like the text caches (see text.TEXT_CACHE_SIZE)
def analyse_contexts(texts: Tuple[str, ...]) -> ContextAnalysis:
    """The contexts' analyses, their unions and word weights (cached: four metrics read them)."""
    ctxs = tuple(map(analyse, texts))
    return ContextAnalysis(
        ctxs, frozenset().union(*(c.vocab for c in ctxs)), frozenset().union(*(c.numbers for c in ctxs)),
        frozenset().union(*(p for c in ctxs for p in c.persons)),
        tuple((sent, neg) for c in ctxs for sent, neg in zip(c.sentences, c.negated)), _idf(ctxs))


def _idf(texts: Sequence[Analysis]) -> "Weights":
    """IDF-like weight from the sample's own sentences: a word in most of them weighs little."""
    docs = [s for t in texts for s in t.sentences] or [frozenset()]
    df = Counter(chain.from_iterable(docs))
    by_count = _idf_values(len(docs))
    weights = Weights(zip(df.keys(), map(by_count.__getitem__, df.values())))
    weights.unseen = by_count[0]
    return weights


@lru_cache(maxsize=1024)
def _idf_values(n: int) -> Tuple[float, ...]:
    """The weight of a word found in 0, 1, ..., n of n sentences (one table per sentence count)."""
    return tuple(1.0 + math.log((n + 1) / (count + 1)) for count in range(n + 1))


class Weights(dict):
    """Word -> weight; a word the sample's contexts never use gets the largest weight, `unseen`."""

    unseen: float

    def __missing__(self, word: str) -> float:
        return self.unseen


NOTHING: FrozenSet[str] = frozenset()


def weighted_share(items: Iterable[str], weights: Weights, found: AbstractSet[str],
                    partly: AbstractSet[str] = NOTHING, partial: float = QUESTION_CREDIT) -> float:
    """Weighted share of `items` found: full credit for those in `found`, `partial` for those only
    in `partly`; 1.0 for no items. (Sums run in the items' order, so scores never move by a bit.)"""
    get, unseen = weights.get, weights.unseen
    total = got = 0.0
    for w in items:
        wt = get(w, unseen)
        total += wt
        if w in found:
            got += wt
        elif w in partly:
            got += wt * partial
    return got / total if total else 1.0


def shares_in(items: Iterable[str], weights: Weights, first: AbstractSet[str],
               second: AbstractSet[str]) -> Tuple[float, float]:
    """`weighted_share(items, weights, first)` and the same for `second`, in one pass."""
    get, unseen = weights.get, weights.unseen
    total = got_first = got_second = 0.0
    for w in items:
        wt = get(w, unseen)
        total += wt
        if w in first:
            got_first += wt
        if w in second:
            got_second += wt
    return (got_first / total, got_second / total) if total else (1.0, 1.0)


def quote(items: Iterable[str], limit: int = 4, show: Callable[[str], str] = str) -> str:
    """The first `limit` distinct items, quoted, each as `show` writes it, and how many more."""
    items = list(dict.fromkeys(items))
    shown = ", ".join(f"'{show(i)}'" for i in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def distinct_names(found: Iterable[Tuple[str, FrozenSet[str]]]) -> List[str]:
    """Name spans as the text writes them, once per name (spans with the same words are one name)."""
    first: Dict[FrozenSet[str], str] = {}
    for span, words_ in found:
        first.setdefault(words_, span)
    return list(first.values())


def rounded(value: float) -> float:
    """A heuristic's score: clamped to [0, 1], to 4 places."""
    return round(min(1.0, max(0.0, value)), 4)


# --- the answer's shape -------------------------------------------------------------------

BARE_SPAN_WORDS = 4


def is_bare_span(answer: str) -> bool:
    """A short answer that is a phrase, not a sentence ("Paris", "the Octopus card")."""
    return not answer.rstrip().endswith((".", "!", "?", "؟")) and at_most_words(answer, BARE_SPAN_WORDS)


def scan_from(first: str, pattern: str) -> "re.Pattern[str]":
    """Compile `pattern`, every match of which starts with one of the characters `first`: a leading
    lookahead on them lets the regex engine skip to candidates (same matches, found faster)."""
    return re.compile(f"(?=[{first}])(?:{pattern})")


# Answers that decline to answer. Matched on the normalised text of short answers only, so a long
# answer that says "I don't know the exact date, but ..." is not treated as evasive.
_EVASIVE = scan_from("inuل", normalize(
    r"\b(?:i have no comment|no comment|i (?:do not|don't|dont) know|i'm not sure|i am not sure|not sure|"
    r"i (?:can not|cannot|can't) (?:answer|say|help|tell)|unknown|no idea|i have no idea|"
    r"i (?:do not|don't) have (?:an? )?(?:answer|opinion|information)|n/?a)\b"
    r"|لا تعليق|لا اعرف|لا أعرف|لا ادري|لا أدري|لست متأكد|لا يمكنني الإجابة|لا استطيع الإجابة|لا أستطيع الإجابة"))
EVASIVE_MAX_WORDS = 12


def is_evasive(answer: str) -> bool:
    """True for a short answer that declines to answer ("I have no comment", "لا أعرف")."""
    return len(normalized_words(answer)) <= EVASIVE_MAX_WORDS and bool(_EVASIVE.search(normalize(answer)))


# Question openers whose answer has a known shape. "Yes/no" questions open with an auxiliary verb.
_YES_NO_OPENERS = frozenset(normalize(w) for w in """is are was were am do does did can could will would should
has have had may might must shall هل""".split())
_YES_NO_ANSWERS = frozenset(normalize(w) for w in "yes no yeah nope نعم لا كلا".split())
# The matches of r"\b(?:how (?:many|...)|what (?:year|...)|when)\b|كم|متى" and of r"\b(?:who|whom|where|
# which)\b|\bwhat(?:'s| is| are)? ...|من هو|من هي|اين|أين", written so that every alternative opens with a
# letter: the regex engine then scans for those letters instead of trying each alternative at each
# position. "w(?<!\ww)" is "\bw": the character before the "w" is not a word character.
_ASKS_NUMBER = re.compile(normalize(r"h(?<!\wh)ow (?:many|much|old|long|far|tall|big|often)\b"
                                    r"|w(?<!\ww)(?:hat (?:year|percentage|proportion|number)|hen)\b|كم|متى"))
_ASKS_NAME = re.compile(normalize(r"w(?<!\ww)(?:(?:ho|hom|here|hich)\b|hat(?:'s| is| are)? (?:a |an |the )?"
                                  r"(?:country|city|countries|cities|place|state|language|name|company)\b)"
                                  r"|من هو|من هي|اين|أين"))
# Only the words go through normalize(): it lower-cases, which would turn \W into \w.
_ASKS_REASON = re.compile(r"^\W*why\b|" + normalize("لماذا"))
_OPENS_WITH_WHY = re.compile(r"\W*why\b")
_WHY_AR = normalize("لماذا")


def _asks_reason(q: str) -> bool:
    """`_ASKS_REASON.search(q)`: its "^" branch can only match at the start, its other is a plain
    substring, and neither needs the engine to try every position of the question."""
    return bool(_OPENS_WITH_WHY.match(q)) or _WHY_AR in q
_GIVES_REASON = re.compile(r"^\W*(?:because|due to|since|as a result)\b|^\W*(?:" + normalize("لان|لأن|بسبب") + ")")
_NUMBER_WORDS = frozenset("""one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty
hundred hundreds thousand thousands million millions billion half dozen""".split())
def is_yes_no_question(question: str) -> bool:
    """True when a sentence of the question opens with an auxiliary verb ("Is it...", "Did they..."),
    also after a leading phrase set off by a comma ("In the U.S., is it legal to...")."""
    for sent in analyse(question).raw or [question]:  # the question's sentences, already split
        for clause in (sent, sent.split(",", 1)[1] if "," in sent else ""):
            first = words(normalize(clause))[:1]
            if first and first[0] in _YES_NO_OPENERS:
                return True
    return False


def answer_type_match(question: str, answer: str) -> int:
    """+1 when the answer has the shape the question asks for (yes/no, a number, a name, a reason),
    -1 when a yes/no answer meets a question that is not a yes/no question, else 0."""
    q, a = normalize(question), normalize(answer)
    q_words, a_words = normalized_words(question), normalized_words(answer)
    if not q_words or not a_words:
        return 0
    if a_words[0] in _YES_NO_ANSWERS and len(a_words) <= BARE_SPAN_WORDS or a_words[0] in ("yes", "نعم"):
        return 1 if is_yes_no_question(question) else -1
    # The answer's analysis has a number exactly when the answer has a digit, as numbers(a) does.
    if _ASKS_NUMBER.search(q) and (analyse(answer).numbers or _NUMBER_WORDS.intersection(a_words)):
        return 1
    if _asks_reason(q) and _GIVES_REASON.search(a):
        return 1
    if _ASKS_NAME.search(q) and (len(a_words) <= BARE_SPAN_WORDS or analyse(answer).entities):
        return 1
    return 0


def clear_caches() -> None:
    """Forget cached text analyses and word weights (benchmarks call this to time a cold start)."""
    text.clear_caches()
    analyse_contexts.cache_clear()
