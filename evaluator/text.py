"""Language detection and tokenisation shared by the heuristics, prompts and cost estimates."""
from __future__ import annotations

import re
from typing import List

_ARABIC = re.compile(r"[\u0600-\u06FF]")
# Words are runs of letters/digits (any script); keeps Arabic words whole.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def detect_language(*texts: str) -> str:
    """'ar' when any character falls in the Arabic block U+0600–U+06FF, else 'en'."""
    return "ar" if any(_ARABIC.search(t or "") for t in texts) else "en"


def resolve_language(language: str, *texts: str) -> str:
    """Turn the user's setting ('ar', 'en', 'auto') into the language of one sample."""
    if language == "auto":
        return detect_language(*texts)
    if language not in ("ar", "en"):
        raise ValueError(f"language must be 'ar', 'en' or 'auto', not {language!r}")
    return language


def words(text: str) -> List[str]:
    """Lower-cased word tokens, any script."""
    return _WORD.findall((text or "").lower())
