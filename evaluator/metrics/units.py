"""Units and symbols spelled one way, so the lexical heuristics see `100 °C` and `100 degrees Celsius`
as the same words.

Only a unit right after a number is rewritten (a bare "m" or "C" elsewhere is a letter, not a
unit), and American spellings become British ones (the stemmer would keep "meter" and "metre"
apart). The judge's prompt is never rewritten: this is for the heuristics' eyes only.
"""
from __future__ import annotations

import re
from functools import lru_cache
from dataclasses import replace
from typing import List, Tuple

from ..model import EvalSample

_NUM = r"(\d(?:[\d,.]*\d)?)\s*"
_AMOUNT = r"(\d(?:[\d,.]*\d)?)"
# A unit written after a number: (its spellings, as a regex; the words it becomes; needles, see _RULES).
_UNITS = (
    ("km/h|kph|kmh", "kilometres per hour", ("km", "kph")), ("mph", "miles per hour", ("mph",)),
    ("km", "kilometres", ("km",)), ("cm", "centimetres", ("cm",)), ("mm", "millimetres", ("mm",)),
    ("kg", "kilograms", ("kg",)), ("ml", "millilitres", ("ml",)),
)
# A currency sign written before a number: (sign, the word it becomes).
_SIGNS = (("\\$", "dollars"), ("€", "euros"), ("£", "pounds"))
# (pattern, replacement, needles), applied in order; the symbol forms need a number before them. Needles:
# strings one of which a match must contain (lower-cased). In ASCII text, IGNORECASE matching is lower-case
# comparison, so a rule without any of them in the text cannot change it and is not run (most texts that pass
# _TRIGGER need one or two of the rules). The symbol rules need a non-ASCII character or a currency sign;
# ASCII text without one skips them the same way.
_RULES: List[Tuple["re.Pattern[str]", str, Tuple[str, ...]]] = [(re.compile(p, re.IGNORECASE), r, n) for p, r, n in (
    (_NUM + r"(?:°\s*C|℃|deg(?:rees?)?\.?\s*C)(?!\w)", r"\1 degrees celsius", ("deg",)),
    (_NUM + r"(?:°\s*F|℉|deg(?:rees?)?\.?\s*F)(?!\w)", r"\1 degrees fahrenheit", ("deg",)),
    (_NUM + r"degrees?\s+centigrade\b", r"\1 degrees celsius", ("centigrade",)),
    (_NUM + r"°", r"\1 degrees ", ("°",)),
    (_NUM + r"(?:%|per\s*cent\b)", r"\1 percent", ("%", "per")),
    *((_NUM + rf"(?:{unit})\b", rf"\1 {words}", needles) for unit, words, needles in _UNITS),
    *((sign + r"\s*" + _AMOUNT, rf"\1 {word}", (sign[-1],)) for sign, word in _SIGNS),
    (_NUM + r"(?:USD|US dollars)\b", r"\1 dollars", ("usd", "us dollars")),
    (_NUM + r"(?:EUR)\b", r"\1 euros", ("eur",)),
    (r"\b(kilo|centi|milli)?met(?:er|re)s?\b", r"\1metres", ("met",)),
    (r"\b(milli)?lit(?:er|re)s?\b", r"\1litres", ("lit",)),
)]
# Any of these in a text means a rule may apply; most texts have none and are returned as they are.
_TRIGGER = re.compile(r"[°℃℉%$€£]|\d\s*(?:k|c|m|deg|per|usd|eur)|met(?:er|re)|lit(?:er|re)|centigrade",
                      re.IGNORECASE)

# _TRIGGER's matches in lower-cased ASCII text, each branch opened by one character of a set so that
# the engine scans for that set quickly (in ASCII text, IGNORECASE matching is lower-case matching).
_ASCII_TRIGGER = re.compile(r"[%$0-9mlc](?:(?<=[0-9])\s*(?:[kcm]|deg|per|usd|eur)|(?<=m)et(?:er|re)"
                            r"|(?<=l)it(?:er|re)|(?<=c)entigrade|(?<=[%$]))")


def spell_units(text: str) -> str:
    """`text` with units after numbers and currency symbols spelled out; the same object when none."""
    if not text:
        return text
    spelled = _spelled(text)
    return text if spelled == text else spelled


@lru_cache(maxsize=8192)  # a sample's five metrics read the same texts: spell each once
def _spelled(text: str) -> str:
    if not text.isascii():
        if not _TRIGGER.search(text):
            return text
        for pattern, replacement, _ in _RULES:
            text = pattern.sub(replacement, text)
        return text
    lower = text.lower()
    if not _ASCII_TRIGGER.search(lower):
        return text
    for pattern, replacement, needles in _RULES:
        if any(map(lower.__contains__, needles)):
            spelled = pattern.sub(replacement, text)
            if spelled != text:
                text, lower = spelled, spelled.lower()
    return text




def with_units_spelled(sample: EvalSample) -> EvalSample:
    """The sample as the heuristics should read it (the same object when nothing changes)."""
    # The metrics of one sample ask in turn: the last answer is reused while the sample and the texts
    # it holds are the same objects (a sample edited in place between calls is spelled again).
    global _LAST
    key = (sample, sample.question, sample.answer, sample.ground_truth, *sample.contexts)
    last_key, last = _LAST
    if len(key) == len(last_key) and all(a is b for a, b in zip(key, last_key)):
        return last
    spelled = _with_units_spelled(sample)
    _LAST = (key, spelled)  # one tuple: a thread reading it sees a key with its own answer
    return spelled


_LAST: Tuple[tuple, EvalSample] = ((), EvalSample("", "", []))


def _with_units_spelled(sample: EvalSample) -> EvalSample:
    question, answer = spell_units(sample.question), spell_units(sample.answer)
    contexts = [spell_units(c) for c in sample.contexts]
    reference = spell_units(sample.ground_truth) if sample.ground_truth else sample.ground_truth
    changed = (question is not sample.question or answer is not sample.answer or reference is not sample.ground_truth
               or any(a is not b for a, b in zip(contexts, sample.contexts)))
    if not changed:
        return sample
    return replace(sample, question=question, answer=answer, contexts=contexts, ground_truth=reference)
