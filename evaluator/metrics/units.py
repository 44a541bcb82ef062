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
# (pattern, replacement), applied in order; the symbol forms need a number before them.
_RULES: List[Tuple["re.Pattern[str]", str]] = [(re.compile(p, re.IGNORECASE), r) for p, r in (
    (_NUM + r"(?:°\s*C|℃|deg(?:rees?)?\.?\s*C)(?!\w)", r"\1 degrees celsius"),
    (_NUM + r"(?:°\s*F|℉|deg(?:rees?)?\.?\s*F)(?!\w)", r"\1 degrees fahrenheit"),
    (_NUM + r"degrees?\s+centigrade\b", r"\1 degrees celsius"),
    (_NUM + r"°", r"\1 degrees "),
    (_NUM + r"(?:%|per\s*cent\b)", r"\1 percent"),
    (_NUM + r"(?:km/h|kph|kmh)\b", r"\1 kilometres per hour"),
    (_NUM + r"mph\b", r"\1 miles per hour"),
    (_NUM + r"km\b", r"\1 kilometres"),
    (_NUM + r"cm\b", r"\1 centimetres"),
    (_NUM + r"mm\b", r"\1 millimetres"),
    (_NUM + r"kg\b", r"\1 kilograms"),
    (_NUM + r"ml\b", r"\1 millilitres"),
    (r"\$\s*(\d(?:[\d,.]*\d)?)", r"\1 dollars"),
    (r"€\s*(\d(?:[\d,.]*\d)?)", r"\1 euros"),
    (r"£\s*(\d(?:[\d,.]*\d)?)", r"\1 pounds"),
    (_NUM + r"(?:USD|US dollars)\b", r"\1 dollars"),
    (_NUM + r"(?:EUR)\b", r"\1 euros"),
    (r"\b(kilo|centi|milli)?met(?:er|re)s?\b", r"\1metres"),
    (r"\b(milli)?lit(?:er|re)s?\b", r"\1litres"),
)]
# Any of these in a text means a rule may apply; most texts have none and are returned as they are.
_TRIGGER = re.compile(r"[°℃℉%$€£]|\d\s*(?:k|c|m|deg|per|usd|eur)|met(?:er|re)|lit(?:er|re)|centigrade",
                      re.IGNORECASE)


def spell_units(text: str) -> str:
    """`text` with units after numbers and currency symbols spelled out; the same object when none."""
    if not text:
        return text
    spelled = _spelled(text)
    return text if spelled == text else spelled


@lru_cache(maxsize=8192)  # a sample's five metrics read the same texts: spell each once
def _spelled(text: str) -> str:
    if not _TRIGGER.search(text):
        return text
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


def with_units_spelled(sample: EvalSample) -> EvalSample:
    """The sample as the heuristics should read it (the same object when nothing changes)."""
    question, answer = spell_units(sample.question), spell_units(sample.answer)
    contexts = [spell_units(c) for c in sample.contexts]
    reference = spell_units(sample.ground_truth) if sample.ground_truth else sample.ground_truth
    changed = (question is not sample.question or answer is not sample.answer or reference is not sample.ground_truth
               or any(a is not b for a, b in zip(contexts, sample.contexts)))
    if not changed:
        return sample
    return replace(sample, question=question, answer=answer, contexts=contexts, ground_truth=reference)
