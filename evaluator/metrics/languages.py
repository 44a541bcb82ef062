"""Which language a row is written in, and whether ragmeter has prompts and heuristics of its own for it.

Scoring knows two languages (`SCORED`: English and Arabic, see text.py and metrics/prompts.py). A row
in another language is scored with the English prompts and heuristics, and says so: `language_note`
gives the sentence kept per row (sample.metadata[NOTE_KEY]) and `EvalReport.language_note()` counts them
for the run's header.

Identification is by function words (articles, pronouns, auxiliaries: the words every sentence of a
language uses and others do not) plus a few letters only one language writes; Arabic by its script.
It reads the question and the answer, the first `READ_CHARS` characters of each, so it costs little
beside scoring. Too few words to tell is English, as before.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Dict, FrozenSet, Optional

from ..model import LANGUAGE_NOTE_KEY

SCORED = ("en", "ar")  # languages with their own prompts and heuristics
NOTE_KEY = LANGUAGE_NOTE_KEY  # sample.metadata key of the per-row note (model.py counts them for the header)
READ_CHARS = 400  # enough words to tell, and little beside a row's offline scoring
MIN_HITS = 2  # function words needed before a language other than English is named

NAMES = {"en": "English", "ar": "Arabic", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian",
         "pt": "Portuguese", "nl": "Dutch"}

_FUNCTION_WORDS: Dict[str, FrozenSet[str]] = {
    "en": frozenset("the and is are was were of to in it that for with on this what how which be have has "
                    "not you do does can will an".split()),
    "de": frozenset("der die das und ist nicht ein eine einen zu den von mit sich des auf für im dem wie was "
                    "wird sind auch es ich sie wir ihr aber oder wenn kann nach bei werden hat".split()),
    "fr": frozenset("le les et est des une du que qui pas pour dans sur au aux avec ce cette il elle sont vous "
                    "nous ne je mais ou peut être avez êtes quel quelle".split()),
    "es": frozenset("el los las y es que un una por con para no se del al lo como más está son su sus pero "
                    "puede qué cuál cuándo dónde usted".split()),
    "it": frozenset("il gli lo della delle che non per con sono è una uno del nel alla anche come più ma "
                    "questo quale".split()),
    "pt": frozenset("o os as e é que não um uma por com para do da dos das no na se mais mas como são "
                    "você qual".split()),
    "nl": frozenset("de het een en is van niet dat op te zijn met voor er maar ook als wat hoe kan".split()),
}
# Letters only one of these languages writes: each counts as a function word.
_LETTERS = {"de": re.compile("[äöüß]"), "es": re.compile("[ñ¿¡]"), "fr": re.compile("[çœèêëîïûù]"),
            "pt": re.compile("[ãõ]")}
_ARABIC = re.compile(r"[\u0600-\u06FF]")
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def identify(*texts: Optional[str]) -> str:
    """The language code of `texts` together: 'ar' for Arabic script, else the language whose function
    words (and letters) they use most, 'en' when none is clearly used."""
    text = " ".join((t or "")[:READ_CHARS] for t in texts)
    if not text.isascii() and _ARABIC.search(text):
        return "ar"
    tokens = _WORD.findall(text.lower())
    hits = {code: sum(1 for w in tokens if w in words) for code, words in _FUNCTION_WORDS.items()}
    if not text.isascii():
        for code, letters in _LETTERS.items():
            hits[code] += len(letters.findall(text.lower()))
    best = max(hits, key=lambda code: (hits[code], code == "en"))
    return best if best != "en" and hits[best] >= MIN_HITS and hits[best] > hits["en"] else "en"


def language_note(code: str) -> Optional[str]:
    """The per-row note for a row in `code`: None for a language scoring has its own prompts for."""
    if code in SCORED:
        return None
    name = NAMES.get(code, code)
    return f"Written in {name}: scored with the English prompts and heuristics (ragmeter has no {name} ones)."


def noted(sample: Any, setting: str) -> Any:
    """`sample` with its language note in metadata when it is written in a language scoring has no prompts
    for (a copy; the sample itself when there is nothing to say). `setting` "ar" forces Arabic: no note."""
    note = None if setting == "ar" else language_note(identify(sample.question, sample.answer))
    if note is None and NOTE_KEY not in sample.metadata:
        return sample
    metadata = {k: v for k, v in sample.metadata.items() if k != NOTE_KEY}
    if note is not None:
        metadata[NOTE_KEY] = note
    return replace(sample, metadata=metadata)

