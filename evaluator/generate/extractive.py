"""Offline, extractive items: a sentence of a chunk with one word blanked (kind "cloze").

No model writes or checks them, so they test retrieval only (does the pipeline find the document a
sentence comes from?), never answer quality; each is labelled with OFFLINE_GENERATOR and the CLI and
page say so. The blanked word is the sentence's first number, else its longest content word.
"""
from __future__ import annotations

import re
from typing import Iterable, Optional, Tuple

from ..text import content_words, sentences, tokens
from .chunking import Chunk

MIN_WORDS = 6
BLANK = "____"
QUESTION = {"en": 'Which document says: "{sentence}"? What is the missing word?',
            "ar": 'أي وثيقة تقول: "{sentence}"؟ ما الكلمة الناقصة؟'}


def cloze(chunk: Chunk, language: str, pick: int = 0) -> Optional[Tuple[str, str, str]]:
    """(question, reference sentence, blanked word) from the chunk's `pick`-th usable sentence, or None."""
    usable = _usable(chunk)
    if not usable:
        return None
    sentence = usable[pick % len(usable)]
    word = _answer_word(sentence)
    if not word:
        return None
    blanked = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", BLANK, sentence, count=1)
    template = QUESTION["ar" if language == "ar" else "en"]
    return template.format(sentence=blanked), sentence, word


def capacity(chunks: Iterable[Chunk]) -> int:
    """How many offline items the chunks can give at most: their distinct usable sentences with a word to blank."""
    found = {s for chunk in chunks for s in _usable(chunk) if _answer_word(s)}
    return len(found)


def _usable(chunk: Chunk) -> list:
    return [s for s in sentences(chunk.text) if len(s.split()) >= MIN_WORDS and not s.startswith("#")]


def _answer_word(sentence: str) -> str:
    written = re.findall(r"[^\W_]+(?:[.,][0-9]+)?", sentence)
    for w in written:
        if any(ch.isdigit() for ch in w):
            return w
    candidates = [w for w in written if tokens(w) and content_words(w) and len(w) > 3]
    return max(candidates, key=len) if candidates else ""
