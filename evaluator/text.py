"""Language detection, tokenisation and light text analysis shared by the heuristics, prompts and cost estimates.

English and Arabic are first-class: both have stop words, sentence splitting and a light stemmer;
Arabic text is normalised (alef forms, taa marbuta, alef maqsura, diacritics, tatweel) and loses
the article "ال" and common one-letter clitics before comparison, so "والكتاب" matches "كتاب".
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import FrozenSet, List, NamedTuple, Tuple

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


# --- Arabic normalisation -------------------------------------------------------------------

# Harakat, tanween, shadda, sukun, superscript alef and Quranic marks carry no lexical identity here.
_AR_DIACRITICS = re.compile(r"[\u0610-\u061A\u064B-\u065F\u0670\u06D6-\u06ED\u0640]")  # incl. tatweel U+0640
_AR_LETTERS = str.maketrans({
    "أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا",  # alef forms
    "ة": "ه",  # taa marbuta is written as haa by many writers
    "ى": "ي",  # alef maqsura vs yaa
    "ؤ": "و", "ئ": "ي",
    "٠": "0", "١": "1", "٢": "2", "٣": "3", "٤": "4", "٥": "5", "٦": "6", "٧": "7", "٨": "8", "٩": "9",
    "۰": "0", "۱": "1", "۲": "2", "۳": "3", "۴": "4", "۵": "5", "۶": "6", "۷": "7", "۸": "8", "۹": "9",
})
# Article with its common proclitics (wa-, fa-, bi-, ka-, li-); "لل" is li- + al- with the alef dropped.
_AR_ARTICLE = ("وال", "فال", "بال", "كال", "ال", "لل")
_AR_PROCLITICS = "وفبلك"
_AR_SUFFIXES = ("هما", "كما", "ات", "ون", "ين", "ها", "هم", "هن", "كم", "نا", "ان", "يه", "ه", "ي")


def normalize_arabic(text: str) -> str:
    """Unify alef forms, taa marbuta, alef maqsura and Arabic-Indic digits; drop diacritics and tatweel."""
    return _AR_DIACRITICS.sub("", text).translate(_AR_LETTERS)


def strip_arabic_clitics(word: str) -> str:
    """Remove the article "ال" (with a leading و/ف/ب/ك/ل) or a single proclitic, keeping a stem of ≥ 2 letters."""
    for prefix in _AR_ARTICLE:
        if word.startswith(prefix) and len(word) - len(prefix) >= 2:
            return word[len(prefix):]
    # A lone proclitic only on longer words: short words like "بين" or "كان" start with these letters.
    if len(word) >= 5 and word[0] in _AR_PROCLITICS:
        return word[1:]
    return word


def _stem_arabic(word: str) -> str:
    word = strip_arabic_clitics(word)
    for suffix in _AR_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


# --- English light stemming -----------------------------------------------------------------

_EN_SUFFIXES = (("ies", "y"), ("sses", "ss"), ("ing", ""), ("edly", ""), ("ed", ""), ("ly", ""),
                ("es", ""), ("s", ""))


def _stem_english(word: str) -> str:
    """A deliberately light stemmer: plural, -ing, -ed, -ly, and a final silent e, so that "names",
    "named" and "name" meet, as do "running" and "run", "cities" and "city"."""
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix, repl in _EN_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                break
            if suffix == "es" and not word.endswith(("ches", "shes", "xes", "sses", "zes")):
                word = word[:-1]  # "names" → "name", "boxes" → "box"
                break
            word = word[: -len(suffix)] + repl
            if suffix in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # "running" → "run"
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Light stem of one lower-cased, normalised token (Arabic or English by its script)."""
    return _stem_arabic(word) if _ARABIC.search(word) else _stem_english(word)


# --- Stop words -----------------------------------------------------------------------------

STOP_WORDS_EN: FrozenSet[str] = frozenset("""
a about above after again against all also am an and any are aren as at be because been before being
below between both but by can cannot could couldn did didn do does doesn doing don down during each few
for from further had hadn has hasn have haven having he her here hers herself him himself his how i if
in into is isn it its itself just let me more most much must mustn my myself no nor not now of off on
once only or other ought our ours ourselves out over own same shall shan she should shouldn so some such
than that the their theirs them themselves then there these they this those through to too under until
up upon very was wasn we were weren what when where which while who whom whose why will with won would
wouldn you your yours yourself yourselves s t d ll m re ve y also yes yeah oh well really actually
one ones thing things get got make made may might like just even still yet ever many n
something anything everything someone anyone everyone know think guess sure mean
""".split())

# Normalised forms (see normalize_arabic): pronouns, particles, prepositions, auxiliaries.
STOP_WORDS_AR: FrozenSet[str] = frozenset(normalize_arabic(w) for w in """
في من على الى إلى عن مع هذا هذه ذلك تلك هؤلاء اولئك الذي التي الذين اللذان اللتان اللواتي ما ماذا
لماذا متى اين أين كيف كم هل لا لم لن ليس ليست إن ان أن إنّ كان كانت يكون تكون كانوا قد لقد و او أو
ثم بل لكن لكن حتى اذا إذا لو كل بعض غير بين عند عندما هو هي هم هن انا أنا نحن انت أنت انتم أنتم
هما له لها لهم به بها بهم فيه فيها منه منها عليه عليها الا إلا أي اي ايضا أيضا جدا فقط كذلك هناك هنا
ذات الى وهو وهي وقد وكان وكانت ولا وما وفي ومن وعلى يا نعم حول خلال بعد قبل منذ تم التى الذى
""".split())

STOP_WORDS: FrozenSet[str] = STOP_WORDS_EN | STOP_WORDS_AR

# Negation, on normalised text: English words and "n't", Arabic particles (لا لم لن ليس غير بدون).
_NEGATION = re.compile(r"\b(?:no|not|never|nothing|none|nobody|neither|nor|cannot|nowhere|without)\b|n['’]t\b"
                       r"|(?<!\w)(?:لا|لم|لن|ليس|ليست|ليسوا|غير|بدون)(?!\w)")


def is_negated(text: str) -> bool:
    """True when the text contains a negation ("not", "don't", "never", "لا", "ليس")."""
    return bool(_NEGATION.search(normalize(text)))


_YES = frozenset(normalize_arabic(w) for w in "yes yeah yep نعم بلى".split())
_NO = frozenset(normalize_arabic(w) for w in "no nope لا كلا".split())


def stance(text: str) -> int:
    """+1 when the text opens with "yes" (or "نعم"), -1 when it opens with "no" (or "لا", "كلا"), else 0.

    "No, no test can do that" opens with a no: the leading word decides, whatever follows.
    """
    first = _WORD.findall(normalize(text))[:1]
    return (1 if first[0] in _YES else -1 if first[0] in _NO else 0) if first else 0


def polarity(text: str) -> int:
    """+1 (affirms) or -1 (denies): a leading yes/no decides (see `stance`), else any negation denies."""
    return stance(text) or (-1 if is_negated(text) else 1)


def is_stop_word(token: str) -> bool:
    """True for English or (normalised) Arabic function words."""
    return token in STOP_WORDS


# --- Tokens, sentences, numbers, entities ---------------------------------------------------

def normalize(text: str) -> str:
    """Lower-case, Arabic normalisation, and thousands separators removed from numbers ("1,200" → "1200")."""
    return _THOUSANDS.sub("", normalize_arabic((text or "").lower()))


_THOUSANDS = re.compile(r"(?<=\d)[,٬](?=\d{3}\b)")


def tokens(text: str) -> List[str]:
    """Normalised word tokens of any script (stop words kept, not stemmed)."""
    return _WORD.findall(normalize(text))


def content_words(text: str) -> List[str]:
    """Stemmed tokens that are not stop words, in order (duplicates kept)."""
    return _content(tokens(text))


def _content(toks: List[str]) -> List[str]:
    out = []
    for tok in toks:
        if tok in STOP_WORDS:
            continue
        tok = stem(tok)
        if tok and tok not in STOP_WORDS:
            out.append(tok)
    return out


# Sentence ends: . ! ? and the Arabic question mark and full stop, or a line break; also a period
# glued to the next sentence ("in 2009.The card"), as scraped text often looks like that. A period
# after a single capital ("J. Smith") or a title ("Dr.") does not end a sentence (see _ends_here).
_SENTENCE_END = re.compile(r"[.!?؟۔]+[\"')\]]*(?=\s|$)|(?<=[a-z0-9]{2})\.(?=[A-Z][a-z])|\n+")
_NOT_AN_END = re.compile(r"(?:\b[A-Z]|\b(?:Dr|Mr|Mrs|Ms|St|Jr|Sr|vs|No|etc))\.$")


def sentences(text: str) -> List[str]:
    """Split English or Arabic text into sentences (non-empty, stripped)."""
    parts, start = [], 0
    text = text or ""
    for m in _SENTENCE_END.finditer(text):
        if text[m.start()] == "." and _NOT_AN_END.search(text, max(0, m.start() - 4), m.start() + 1):
            continue
        parts.append(text[start:m.end()])
        start = m.end()
    parts.append(text[start:])
    return [p.strip() for p in parts if _WORD.search(p)]


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def numbers(text: str) -> List[str]:
    """Numbers written with digits (Western or Arabic-Indic), thousands separators removed."""
    return _NUMBER.findall(normalize(text))


# A run of capitalised words (allowing "of", "de", "the" inside), e.g. "Bank of England".
_ENTITY = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of|de|the|von|van|al|bin)?\s*[A-Z][\w'’-]*)*")


def entities(text: str) -> List[str]:
    """Capitalised name spans not at a sentence start (English only; Arabic has no capitals).

    A capitalised first word is kept only when it is not a stop word ("The" is not a name, "Paris" is).
    """
    found = []
    for sent in sentences(text):
        for m in _ENTITY.finditer(sent):
            span = m.group()
            if m.start() == 0 and span.split()[0].lower() in STOP_WORDS:
                span = " ".join(span.split()[1:])
            if span:
                found.append(span)
    return found


# First- and second-person pronouns: a sentence using them speaks of the speaker or the listener
# ("I love hiking", "you should try it"), which retrieved passages rarely support.
PERSONAL_PRONOUNS: FrozenSet[str] = frozenset(normalize_arabic(w) for w in """
i me my mine myself we us our ours ourselves you your yours yourself yourselves
أنا انا نحن أنت انت أنتم انتم أنتما أنتن
""".split())


class Analysis(NamedTuple):
    """What the heuristics need to know about one text (see `analyse`)."""

    text: str
    words: Tuple[str, ...]  # content words, in order
    vocab: FrozenSet[str]  # the set of content words
    sentences: Tuple[FrozenSet[str], ...]  # content words of each sentence
    numbers: FrozenSet[str]
    negated: Tuple[bool, ...]  # per sentence: does it contain a negation ("not", "never", "لا")?
    asks: Tuple[bool, ...]  # per sentence: is it a question (ends with "?" or "؟")?
    normalized: Tuple[str, ...]  # each sentence lower-cased and normalised (see `normalize`)
    persons: Tuple[FrozenSet[str], ...]  # per sentence: its first/second-person pronouns ("i", "you")

    @property
    def entities(self) -> Tuple[FrozenSet[str], ...]:
        """Each name span as a set of content words (computed on first use, cached per text)."""
        return entity_sets(self.text)


@lru_cache(maxsize=8192)
def analyse(text: str) -> Analysis:
    """Content words, per-sentence content words and numbers of a text, cached per text.

    The five metrics of one sample read the same contexts several times; the cache makes that one
    tokenisation. Entities, which only answers, questions and references need, come on demand.
    """
    sents = sentences(text)
    normal = [normalize(x) for x in sents]  # once per sentence: tokens, negation and numbers read it
    toks = [_WORD.findall(x) for x in normal]
    per_sentence = [_content(t) for t in toks]
    words_ = tuple(w for sent in per_sentence for w in sent)
    negated = tuple(bool(_NEGATION.search(x)) for x in normal)
    asks = tuple(x.rstrip("\"')] ").endswith(("?", "؟")) for x in sents)
    nums = frozenset(n for x in normal for n in _NUMBER.findall(x))
    persons = tuple(PERSONAL_PRONOUNS.intersection(t) for t in toks)
    return Analysis(text, words_, frozenset(words_), tuple(frozenset(x) for x in per_sentence),
                    nums, negated, asks, tuple(normal), persons)


@lru_cache(maxsize=8192)
def entity_sets(text: str) -> Tuple[FrozenSet[str], ...]:
    """The text's name spans (see `entities`), each as a set of content words."""
    return tuple(e for e in (frozenset(content_words(x)) for x in entities(text)) if e)


def clear_caches() -> None:
    """Forget cached analyses (benchmarks call this to time a cold start)."""
    for cached in (analyse, entity_sets, stem):
        cached.cache_clear()
