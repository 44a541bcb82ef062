"""Lexical heuristics: the offline judge, and the 30% stabiliser blended with every LLM score.

Each heuristic is a pure function (sample, lang) -> HeuristicScore. They live in named sets so
that a set can be measured alone (bench/validity.py) and the seed's Jaccard set can still be
selected to reproduce the seed's numbers.

The "ragmeter" set compares *content words* (stop words dropped, lightly stemmed, Arabic
normalised; see evaluator.text) rather than raw tokens, and asks each metric's own question:
- faithfulness: how much of what the answer says can be found in the contexts, sentence by
  sentence, with numbers and names that appear nowhere in them, and sentences about the speaker
  or listener ("I love it", "you should") that no context speaks in, penalised;
- answer relevancy: the backbone is how much of the question the answer takes up (an answer
  sharing no word with it scores the same whatever its length); modifiers: it must add content of
  its own, stay on the question sentence by sentence, and not evade ("I have no comment") or hedge
  ("the documents do not say"); the answer's shape (yes/no, a number, a name, a reason) breaks ties;
- context precision: rank-aware average precision over per-context relevance to the question
  (and the reference, when there is one);
- context recall: how much of each reference sentence the contexts contain;
- answer correctness: token F1 and reference coverage, a leading yes/no counting as a word, with
  unsupported specifics and a flipped polarity (a leading yes against a no, or one side negating
  and the other not) penalised.
Word weights are IDF-like, computed from the sample's own texts only, so a word every context
repeats counts less than a rare one.
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
    named_entities,
    normalize,
    normalized_words,
    polarity,
    stance,
    words,
)


@dataclass(frozen=True)
class HeuristicScore:
    score: float
    reasoning: str


Heuristic = Callable[[EvalSample, str], HeuristicScore]


# --- the seed's Jaccard set (kept exactly, to reproduce the seed's numbers) -----------------

def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 0.0


def _jaccard_score(left: str, right: str, what: str) -> HeuristicScore:
    value = round(jaccard(words(left), words(right)), 4)
    return HeuristicScore(value, f"Jaccard token overlap of {what}: {value:.3f}.")


def _seed_faithfulness(s: EvalSample, lang: str) -> HeuristicScore:
    return _jaccard_score(s.answer, " ".join(s.contexts), "answer and contexts")


def _seed_relevancy(s: EvalSample, lang: str) -> HeuristicScore:
    return _jaccard_score(s.question, s.answer, "question and answer")


def _seed_precision(s: EvalSample, lang: str) -> HeuristicScore:
    if not s.contexts:
        return HeuristicScore(0.0, "No contexts retrieved.")
    values = [jaccard(words(s.question), words(c)) for c in s.contexts]
    value = round(sum(values) / len(values), 4)
    return HeuristicScore(value, f"Mean Jaccard overlap of question and each context: {value:.3f}.")


def _seed_recall(s: EvalSample, lang: str) -> HeuristicScore:
    return _jaccard_score(s.ground_truth or "", " ".join(s.contexts), "reference and contexts")


def _seed_correctness(s: EvalSample, lang: str) -> HeuristicScore:
    return _jaccard_score(s.answer, s.ground_truth or "", "answer and reference")


JACCARD: Dict[str, Heuristic] = {
    "faithfulness": _seed_faithfulness,
    "answer_relevancy": _seed_relevancy,
    "context_precision": _seed_precision,
    "context_recall": _seed_recall,
    "answer_correctness": _seed_correctness,
}


# --- shared pieces of the ragmeter set -----------------------------------------------------

# Words from the question support an answer at part strength: a bare span ("Paris") restates the
# question's subject implicitly, but the question is not evidence.
QUESTION_CREDIT = 0.5


# Pronouns of one grammatical person count as one: a context that says "you" licenses "your".
_PERSON_OF = {text.normalize_arabic(w): person for person, ws in (
    ("first singular", "i me my mine myself أنا انا"), ("first plural", "we us our ours ourselves نحن"),
    ("second", "you your yours yourself yourselves أنت انت أنتم انتم أنتما أنتن")) for w in ws.split()}


def _persons(pronouns: FrozenSet[str]) -> FrozenSet[str]:
    """The grammatical persons a set of pronouns speaks in."""
    return frozenset(_PERSON_OF.get(w, w) for w in pronouns)


@dataclass(frozen=True)
class _Contexts:
    """What the metrics read about one sample's retrieved contexts, put together once per sample."""

    analyses: Tuple[Analysis, ...]
    vocab: FrozenSet[str]  # every content word of every context
    numbers: FrozenSet[str]
    persons: FrozenSet[str]  # the first/second-person pronouns any context uses
    sentences: Tuple[Tuple[FrozenSet[str], bool], ...]  # every context sentence: content words, negated?
    weights: "_Weights"


@lru_cache(maxsize=64)  # one entry a sample: small, like the text caches (see text.TEXT_CACHE_SIZE)
def _contexts(texts: Tuple[str, ...]) -> _Contexts:
    """The contexts' analyses, their unions and word weights (cached: four metrics read them)."""
    ctxs = tuple(map(analyse, texts))
    return _Contexts(
        ctxs, frozenset().union(*(c.vocab for c in ctxs)), frozenset().union(*(c.numbers for c in ctxs)),
        frozenset().union(*(p for c in ctxs for p in c.persons)),
        tuple((sent, neg) for c in ctxs for sent, neg in zip(c.sentences, c.negated)), _idf(ctxs))


def _idf(texts: Sequence[Analysis]) -> "_Weights":
    """IDF-like weight from the sample's own sentences: a word in most of them weighs little."""
    docs = [s for t in texts for s in t.sentences] or [frozenset()]
    df = Counter(chain.from_iterable(docs))
    by_count = _idf_values(len(docs))
    weights = _Weights(zip(df.keys(), map(by_count.__getitem__, df.values())))
    weights.unseen = by_count[0]
    return weights


@lru_cache(maxsize=1024)
def _idf_values(n: int) -> Tuple[float, ...]:
    """The weight of a word found in 0, 1, ..., n of n sentences (one table per sentence count)."""
    return tuple(1.0 + math.log((n + 1) / (count + 1)) for count in range(n + 1))


class _Weights(dict):
    """Word -> weight; a word the sample's contexts never use gets the largest weight, `unseen`."""

    unseen: float

    def __missing__(self, word: str) -> float:
        return self.unseen


_NOTHING: FrozenSet[str] = frozenset()


def _weighted_share(items: Iterable[str], weights: _Weights, found: AbstractSet[str],
                    partly: AbstractSet[str] = _NOTHING, partial: float = QUESTION_CREDIT) -> float:
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


def _shares_in(items: Iterable[str], weights: _Weights, first: AbstractSet[str],
               second: AbstractSet[str]) -> Tuple[float, float]:
    """`_weighted_share(items, weights, first)` and the same for `second`, in one pass."""
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


def _quote(items: Iterable[str], limit: int = 4, show: Callable[[str], str] = str) -> str:
    """The first `limit` distinct items, quoted, each as `show` writes it, and how many more."""
    items = list(dict.fromkeys(items))
    shown = ", ".join(f"'{show(i)}'" for i in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _names(found: Iterable[Tuple[str, FrozenSet[str]]]) -> List[str]:
    """Name spans as the text writes them, once per name (spans with the same words are one name)."""
    first: Dict[FrozenSet[str], str] = {}
    for span, words_ in found:
        first.setdefault(words_, span)
    return list(first.values())


def _round(value: float) -> float:
    return round(min(1.0, max(0.0, value)), 4)


# --- faithfulness -------------------------------------------------------------------------

# Each number or name the contexts never mention multiplies the score by this.
SPECIFIC_PENALTY = 0.6
SENTENCE_WEIGHT = 0.5  # sentence-level support vs. support anywhere in the contexts
BARE_SPAN_WORDS = 4


def is_bare_span(answer: str) -> bool:
    """A short answer that is a phrase, not a sentence ("Paris", "the Octopus card")."""
    return not answer.rstrip().endswith((".", "!", "?", "؟")) and at_most_words(answer, BARE_SPAN_WORDS)


def _faithfulness(s: EvalSample, lang: str) -> HeuristicScore:
    answer, question = analyse(s.answer), analyse(s.question)
    ctx = _contexts(tuple(s.contexts))
    vocab, weights = ctx.vocab, ctx.weights
    if not answer.words:
        return HeuristicScore(1.0, "The answer makes no content claim (no content words) to check against the contexts.")
    # Only a bare span leans on the question; a full sentence must stand on the contexts alone.
    implicit = question.vocab if is_bare_span(s.answer) else _NOTHING
    overall = _weighted_share(answer.words, weights, vocab, implicit)
    sentence_score, flips = _sentence_support(answer, ctx.sentences, implicit, weights)
    base = SENTENCE_WEIGHT * sentence_score + (1.0 - SENTENCE_WEIGHT) * overall
    bad_numbers = sorted(answer.numbers - ctx.numbers)
    names = named_entities(s.answer)
    known = vocab | question.vocab if names else vocab  # the union only when there is a name to check
    bad_names = [(span, e) for span, e in names if not e <= known]
    # Sentences about the speaker or the listener ("I love hiking"), not about the passages:
    # they use a first/second-person pronoun that no context uses.
    # (A sentence with no pronoun has no person to miss: the set difference is read only for the others.)
    personal = sum(1 for p in answer.persons if p and _persons(p) - _persons(ctx.persons))
    score = base * SPECIFIC_PENALTY ** (len(bad_numbers) + len(bad_names) + personal)
    absent = [w for w in answer.words if w not in vocab]
    unsupported = [w for w in absent if w not in implicit] if implicit else absent
    why = f"{len(answer.words) - len(absent)}/{len(answer.words)} answer content words appear in the contexts"
    if unsupported:
        why += f"; unsupported: {_quote(unsupported, show=answer.as_written)}"
    if bad_numbers or bad_names:
        why += f"; numbers/names found nowhere in the contexts: {_quote(bad_numbers + _names(bad_names))}"
    why += f"; answer sentences supported by their best context sentence: {sentence_score:.2f}"
    if flips:
        why += f"; {flips} sentence(s) negate what the context says, or the reverse"
    if personal:
        why += f"; {personal} sentence(s) speak of the speaker or listener (I, you), which the contexts never do"
    return HeuristicScore(_round(score), why + ".")


# A question in the answer asserts nothing the contexts could support; a sentence whose polarity
# differs from its best-matching context sentence ("do not sing" vs "sing") likely contradicts it.
ASKING_CREDIT = 0.5
FLIP_CREDIT = 0.5


def _sentence_support(answer: Analysis, ctx_sents: Sequence[Tuple[FrozenSet[str], bool]],
                      question: FrozenSet[str], weights: _Weights) -> Tuple[float, int]:
    """Mean support of the answer's sentences (weighted by their content words), and how many
    sentences flip the polarity of their best-matching context sentence."""
    total = got = 0.0
    flips = 0
    for sent, neg, asks in zip(answer.sentences, answer.negated, answer.asks):
        if not sent:
            continue
        best, best_neg = _best_context_sentence(sent, neg, ctx_sents, question, weights)
        if best_neg != neg:
            best *= FLIP_CREDIT
            flips += 1
        if asks:
            best *= ASKING_CREDIT
        total += len(sent)
        got += len(sent) * best
    return (got / total if total else 1.0), flips


def _best_context_sentence(sent: FrozenSet[str], neg: bool, ctx_sents: Sequence[Tuple[FrozenSet[str], bool]],
                           question: FrozenSet[str], weights: _Weights) -> Tuple[float, bool]:
    """The weighted share of `sent` found in its best-matching context sentence (see
    `_weighted_share`; question words at part credit), and whether that sentence negates.

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


# --- answer relevancy ---------------------------------------------------------------------

def _scan_from(first: str, pattern: str) -> "re.Pattern[str]":
    """Compile `pattern`, every match of which starts with one of the characters `first`: a leading
    lookahead on them lets the regex engine skip to candidates (same matches, found faster)."""
    return re.compile(f"(?=[{first}])(?:{pattern})")


# Answers that decline to answer. Matched on the normalised text of short answers only, so a long
# answer that says "I don't know the exact date, but ..." is not treated as evasive.
_EVASIVE = _scan_from("inuل", normalize(
    r"\b(?:i have no comment|no comment|i (?:do not|don't|dont) know|i'm not sure|i am not sure|not sure|"
    r"i (?:can not|cannot|can't) (?:answer|say|help|tell)|unknown|no idea|i have no idea|"
    r"i (?:do not|don't) have (?:an? )?(?:answer|opinion|information)|n/?a)\b"
    r"|لا تعليق|لا اعرف|لا أعرف|لا ادري|لا أدري|لست متأكد|لا يمكنني الإجابة|لا استطيع الإجابة|لا أستطيع الإجابة"))
EVASIVE_MAX_WORDS = 12


def is_evasive(answer: str) -> bool:
    """True for a short answer that declines to answer ("I have no comment", "لا أعرف")."""
    return len(normalized_words(answer)) <= EVASIVE_MAX_WORDS and bool(_EVASIVE.search(normalize(answer)))


# Hedges and disclaimers: a sentence that says the answer is not known or not found answers nothing.
_HEDGE = _scan_from("ncudspiلغ", normalize(
    r"\b(?:no (?:relevant )?(?:information|mention|data|answer|documents?|sources?)|"
    r"not (?:provided|mentioned|specified|stated|clear|known|sure)|"
    r"(?:could|can) ?not (?:find|determine|be determined|answer)|(?:can't|couldn't) (?:find|determine|answer)|"
    r"unable to|(?:does|do|did) not (?:provide|mention|specify|say|state|contain|include)|unknown|no comment|"
    r"(?:search results|provided (?:documents?|context|passages?|search results|sources))|i (?:do not|don't) know)\b"
    r"|لا توجد معلومات|لم يتم ذكر|غير معروف|غير واضح|لا أعرف|لا اعرف|لا تعليق"))

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
    why += f"; {len(new)} new content words" + (f" ({_quote(sorted(new), 3, answer.as_written)})" if new else "")
    if shared and focus < 1.0:
        why += f"; {focus:.0%} of its content is in sentences that take up the question"
    if shape:
        why += "; the answer has the shape the question asks for" if shape > 0 else \
            "; a yes/no answer to a question that is not a yes/no question"
    if hedged:
        why += f"; {hedged:.0%} of its sentences hedge or say the answer is not known"
    return HeuristicScore(_round(score), why + ".")


# --- context precision --------------------------------------------------------------------

def context_relevances(s: EvalSample, lang: str = "en", kind: str = "ragmeter") -> List[float]:
    """Relevance in [0, 1] of each retrieved context to the question (and reference, when given)."""
    if kind == "jaccard":
        return [jaccard(words(s.question), words(c)) for c in s.contexts]
    question = analyse(s.question)
    reference = analyse(s.ground_truth or "")
    ctx = _contexts(tuple(s.contexts))
    return [_relevance(c, question, reference, ctx.weights) for c in ctx.analyses]


def _relevance(ctx: Analysis, question: Analysis, reference: Analysis, weights: _Weights) -> float:
    """Weighted question coverage, in the whole context and in its lead sentence (which names what
    the passage is about), plus the share of the reference found in it."""
    lead = ctx.sentences[0] if ctx.sentences else frozenset()
    if not question.vocab:
        whole = topic = 0.0
    else:
        whole, topic = _shares_in(question.vocab, weights, ctx.vocab, lead)
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
    return HeuristicScore(_round(score), f"Relevance of each context to the {what}{how}, in rank order: "
                                         f"{shown}; rank-aware average precision {score:.2f}.")


def _precision(s: EvalSample, lang: str) -> HeuristicScore:
    return precision_from(s, context_relevances, lang)


# --- context recall -----------------------------------------------------------------------

def _recall(s: EvalSample, lang: str) -> HeuristicScore:
    reference, question = analyse(s.ground_truth or ""), analyse(s.question)
    ctx = _contexts(tuple(s.contexts))
    vocab, weights = ctx.vocab, ctx.weights
    statements = _reference_statements(reference, question)
    if not statements:
        return HeuristicScore(0.0, "Neither the reference nor the question has content words to look for.")
    shares, keys_found, keys_total = [], 0, 0
    for words_, keys in statements:
        coverage = _weighted_share(words_, weights, vocab)
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
    why += f"; reference words not retrieved: {_quote(missing, show=reference.as_written)}." if missing else "."
    return HeuristicScore(_round(score), why)


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


# --- answer correctness -------------------------------------------------------------------

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
    bad = _names(bad_names) + bad_numbers
    penalty = EXTRA_SPECIFIC_PENALTY ** (len(bad_names) + len(bad_numbers))
    score = (0.3 + 0.7 * score) * (POLARITY_FLIP_PENALTY if flipped else 1.0) * penalty
    why = f"token F1 {f1:.2f} and reference coverage {recall:.2f} beyond the question's words"
    if flipped:
        why += "; one side negates what the other asserts"
    if bad:
        why += f"; names/numbers not in the reference: {_quote(bad)}"
    return HeuristicScore(_round(score), why + ".")


def _stance_word(text_: str) -> FrozenSet[str]:
    """{"yes"} or {"no"} for a text that opens with one (see evaluator.text.stance), else nothing."""
    value = stance(text_)
    return frozenset(["yes" if value > 0 else "no"]) if value else frozenset()


RAGMETER: Dict[str, Heuristic] = {
    "faithfulness": _faithfulness,
    "answer_relevancy": _relevancy,
    "context_precision": _precision,
    "context_recall": _recall,
    "answer_correctness": _correctness,
}


def clear_caches() -> None:
    """Forget cached text analyses and word weights (benchmarks call this to time a cold start)."""
    text.clear_caches()
    _contexts.cache_clear()
