"""Language detection, tokenisation and light text analysis shared by the heuristics, prompts and cost estimates.

English and Arabic are first-class: both have stop words, sentence splitting and a light stemmer;
Arabic text is normalised (alef forms, taa marbuta, alef maqsura, diacritics, tatweel) and loses
the article "ال" and common one-letter clitics before comparison, so "والكتاب" matches "كتاب".
"""
from __future__ import annotations

import re
from functools import lru_cache
from itertools import islice
from typing import FrozenSet, Iterable, List, NamedTuple, Sequence, Tuple

# Per-text caches (analyse, normalize, entities) let the five metrics of one sample share one
# tokenisation, and texts that recur within a few dozen samples (a shared context, a question asked
# twice) reuse it. Not thousands: a bigger cache mostly keeps texts that never come back, and the
# garbage collector walks every cached set on each pass over older objects (8,192 analyses cost a
# fifth of the offline CPU time in bench/offline_speed.py; 64 entries cost more than 256 there,
# because the bench's references recur every 28 samples).
TEXT_CACHE_SIZE = 256

_ARABIC = re.compile(r"[\u0600-\u06FF]")
# Words are runs of letters/digits (any script); keeps Arabic words whole.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def detect_language(*texts: str) -> str:
    """'ar' when any character falls in the Arabic block U+0600–U+06FF, else 'en'."""
    # ASCII text (a flag read in constant time) cannot hold an Arabic character: no regex scan.
    return "ar" if any(t and not t.isascii() and _ARABIC.search(t) for t in texts) else "en"


def resolve_language(language: str, *texts: str) -> str:
    """Turn the user's setting ('ar', 'en', 'auto') into the language of one sample."""
    if language == "auto":
        return detect_language(*texts)
    if language not in ("ar", "en"):
        raise ValueError(f"language must be 'ar', 'en' or 'auto', not {language!r}")
    return language


def words(text: str) -> List[str]:
    """Lower-cased word tokens, any script."""
    return _words_of((text or "").lower())


# In ASCII text a word is a run of [A-Za-z0-9]: mapping every other character to a space and
# splitting gives the same tokens as `_WORD` about twice as fast.
_ASCII_SEPARATORS = "".join(c if c.isalnum() else " " for c in map(chr, range(128)))


def _words_of(text: str) -> List[str]:
    """`_WORD.findall(text)`, fast for ASCII text."""
    return text.translate(_ASCII_SEPARATORS).split() if text.isascii() else _WORD.findall(text)


def normalized_words(text: str) -> Tuple[str, ...]:
    """`words(normalize(text))`, read from the text's cached analysis when the text is ASCII."""
    if (text or "").isascii():  # see _ASCII_SHORTCUT
        return analyse(text).written
    return _normalized_words(text)


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _normalized_words(text: str) -> Tuple[str, ...]:
    return tuple(words(normalize(text)))


def at_most_words(text: str, limit: int) -> bool:
    """`len(words(text)) <= limit`, reading the text no further than the word after the limit."""
    return len(list(islice(_WORD.finditer((text or "").lower()), limit + 1))) <= limit


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
    return text.translate(_AR_TABLE)


# `_AR_DIACRITICS.sub("", text).translate(_AR_LETTERS)` in one pass: a list indexed by code point
# (None deletes). Every character either rule touches lies below U+0700, and translate leaves a
# character past the list's end as it is; a list lookup never raises, where a dict lookup raises
# (and swallows) a KeyError for each character the dict lacks.
_AR_TABLE = [None if _AR_DIACRITICS.match(chr(i)) else _AR_LETTERS.get(i, chr(i)) for i in range(0x700)]


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
    return _stem_arabic(word) if not word.isascii() and _ARABIC.search(word) else _stem_english(word)


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

# Arabic writes many function words as clitics: the article ال (after و ف ب ك ل, or as لل) and
# attached pronouns. Only the unambiguous ones count: a lone و/ب/ل also begins many plain words
# (وقت، بيت، لون), and a final ه is usually a taa marbuta once normalised (غلاية → غلايه).
_AR_PRONOUN_SUFFIXES = tuple(normalize_arabic(w) for w in ("هما", "كما", "ها", "هم", "هن", "كم"))
_AR_CONJUNCTIONS = "وف"


def carries_function_word(token: str) -> bool:
    """True for a function word (a stop word) or, in Arabic, a word carrying one as a clitic:
    "الكتاب", "بالبطاقة", "للطلب" (the article), "كتابها", "عليهم" (a pronoun), "وهو" (and + a stop word)."""
    if token in STOP_WORDS:
        return True
    if token.isascii() or not _ARABIC.search(token):
        return False
    if strip_arabic_clitics(token) != token and token.startswith(_AR_ARTICLE):
        return True
    if token[0] in _AR_CONJUNCTIONS and len(token) > 2 and (token[1:] in STOP_WORDS or token[1:].startswith(_AR_ARTICLE)):
        return True
    return len(token) >= 4 and token.endswith(_AR_PRONOUN_SUFFIXES)

# Negation, on normalised text: English words and "n't", Arabic particles (لا لم لن ليس غير بدون).
# The leading lookahead names every letter a match can start with, so the regex engine skips ahead
# to those letters instead of trying each position (same matches, found faster).
_NEGATION = re.compile(r"(?=[ncwلغب])(?:\b(?:no|not|never|nothing|none|nobody|neither|nor|cannot|nowhere|without)\b"
                       r"|n['’]t\b|(?<!\w)(?:لا|لم|لن|ليس|ليست|ليسوا|غير|بدون)(?!\w))")
# Where a negation is found (`_NEGATION.search(...)` is only ever read as true or false): the same
# alternatives, each opening with its first letter so that the engine scans for those letters
# ("n(?<!\wn)" is "\bn", the character before the "n" is not a word character).
_NEGATION_FOUND = re.compile(r"n(?<!\wn)(?:o|ot|ever|othing|one|obody|either|or|owhere)\b|c(?<!\wc)annot\b"
                             r"|w(?<!\ww)ithout\b|n['’]t\b|ل(?<!\wل)(?:ا|م|ن|يس|يست|يسوا)(?!\w)"
                             r"|غ(?<!\wغ)ير(?!\w)|ب(?<!\wب)دون(?!\w)")
# A `_NEGATION` match is one of these words as a whole token, or contains "n't": a sentence with
# neither cannot match, so `analyse` skips the regex for it.
_NEGATION_WORDS = frozenset("no not never nothing none nobody neither nor cannot nowhere without "
                            "لا لم لن ليس ليست ليسوا غير بدون".split())


def _negates(normal: str, toks: Sequence[str]) -> bool:
    """`_NEGATION.search(normal)`, with the regex run only when a token or "n't" could match it."""
    if _NEGATION_WORDS.isdisjoint(toks) and "n't" not in normal and "n’t" not in normal:
        return False
    return bool(_NEGATION_FOUND.search(normal))


def is_negated(text: str) -> bool:
    """True when the text contains a negation ("not", "don't", "never", "لا", "ليس")."""
    if (text or "").isascii():  # see _ASCII_SHORTCUT
        return any(analyse(text).negated)
    return bool(_NEGATION_FOUND.search(normalize(text)))


# _ASCII_SHORTCUT: in ASCII text, lower-casing and removing thousands separators act the same on
# the whole text as on each sentence, and sentences split only at characters that are not part of
# a word. So the whole text's words are its sentences' words in order, and a negation is found in
# the text exactly when one is found in a sentence: the text's (cached) analysis answers both.


_YES = frozenset(normalize_arabic(w) for w in "yes yeah yep نعم بلى".split())
_NO = frozenset(normalize_arabic(w) for w in "no nope لا كلا".split())


def stance(text: str) -> int:
    """+1 when the text opens with "yes" (or "نعم"), -1 when it opens with "no" (or "لا", "كلا"), else 0.

    "No, no test can do that" opens with a no: the leading word decides, whatever follows.
    """
    first = _first_word(text)
    return (1 if first in _YES else -1 if first in _NO else 0) if first else 0


def _first_word(text: str) -> str:
    """The first word of the normalised text, or ""."""
    if (text or "").isascii():  # see _ASCII_SHORTCUT
        written = analyse(text).written
        return written[0] if written else ""
    first = _WORD.search(normalize(text))
    return first[0] if first else ""


def polarity(text: str) -> int:
    """+1 (affirms) or -1 (denies): a leading yes/no decides (see `stance`), else any negation denies."""
    return stance(text) or (-1 if is_negated(text) else 1)


def is_stop_word(token: str) -> bool:
    """True for English or (normalised) Arabic function words."""
    return token in STOP_WORDS


# --- Tokens, sentences, numbers, entities ---------------------------------------------------

@lru_cache(maxsize=TEXT_CACHE_SIZE)
def normalize(text: str) -> str:
    """Lower-case, Arabic normalisation, and thousands separators removed from numbers ("1,200" → "1200").

    Cached: the heuristics of one sample normalise its answer and question several times.
    """
    return _normalize(text)


def _normalize(text: str) -> str:
    text = (text or "").lower()
    if text.isascii():  # Arabic normalisation only touches non-ASCII letters; "," is the only separator
        return _THOUSANDS.sub("", text) if "," in text else text
    text = split_clitic_digits(normalize_arabic(text))
    return _THOUSANDS.sub("", text) if "," in text or "٬" in text else text


# A proclitic (و ف ب ك ل, with or without the article ال, or لل) written onto a number: "و1", "بال2015".
# The number is a word of its own ("و1" and "و 1" say the same); words are left whole ("وقت" stays).
_AR_CLITIC_DIGIT = re.compile(r"(?<![^\W\d_])((?:[وف]?[بكل]?ال|[وف]?لل|[وف]?[بكل]|[وف]))(?=\d)")


def split_clitic_digits(text: str) -> str:
    """Arabic text with a space between a proclitic and the number it is written onto."""
    return _AR_CLITIC_DIGIT.sub(r"\1 ", text) if _AR_CLITIC_DIGIT.search(text) else text


# The lookbehind sits after the separator so that the engine scans for "," quickly (same matches).
_THOUSANDS = re.compile(r"[,٬](?<=\d[,٬])(?=\d{3}\b)")
_ASCII_THOUSANDS = re.compile(r",(?<=\d,)(?=\d{3}\b)")  # the same in ASCII text, found faster


def tokens(text: str) -> List[str]:
    """Normalised word tokens of any script (stop words kept, not stemmed)."""
    return _words_of(normalize(text))


def content_words(text: str) -> List[str]:
    """Stemmed tokens that are not stop words, in order (duplicates kept)."""
    return _content(tokens(text))


def _content(toks: Iterable[str]) -> List[str]:
    return [w for w in map(_CONTENT_WORDS.__getitem__, toks) if w]


def content_word(token: str) -> str:
    """The stem of a normalised token, or "" for a stop word (before or after stemming)."""
    return _CONTENT_WORDS[token]


class _ContentWords(dict):
    """Token -> `content_word`, filled on first sight. A plain dict lookup (mapped over a sentence's
    tokens in C) is the cheapest step of tokenising; the table empties when it holds `limit` tokens,
    so a long run's memory stays bounded."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def __missing__(self, token: str) -> str:
        if len(self) >= self.limit:
            self.clear()
        word = "" if token in STOP_WORDS else stem(token)
        self[token] = value = word if word and word not in STOP_WORDS else ""
        return value


_CONTENT_WORDS = _ContentWords(limit=200_000)


# Sentence ends: . ! ? and the Arabic question mark and full stop, or a line break; also a period
# glued to the next sentence ("in 2009.The card"), as scraped text often looks like that. A period
# after a single capital ("J. Smith") or a title ("Dr.") does not end a sentence (see _ends_here).
# Written as "one end character, then the rest of the branch it belongs to" (the lookbehinds name
# the character just read) so that the engine scans for [.!?؟۔\n] quickly; the matches are those of
# r"[.!?؟۔]+[\"')\]]*(?=\s|$)|(?<=[a-z0-9]{2})\.(?=[A-Z][a-z])|\n+".
_SENTENCE_END = re.compile(r"[.!?؟۔\n](?:(?<=[.!?؟۔])[.!?؟۔]*[\"')\]]*(?=\s|$)"
                           r"|(?<=[a-z0-9]{2}\.)(?=[A-Z][a-z])|(?<=\n)\n*)")
_NOT_AN_END = re.compile(r"(?:\b[A-Z]|\b(?:Dr|Mr|Mrs|Ms|St|Jr|Sr|vs|No|etc))\.$")
_ABBREVIATION_ENDS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZrstoc")


def sentences(text: str) -> List[str]:
    """Split English or Arabic text into sentences (non-empty, stripped)."""
    parts, start = [], 0
    text = text or ""
    for m in _SENTENCE_END.finditer(text):
        at, end = m.span()
        # The cheap test first: every _NOT_AN_END match ends in a capital or one of these letters.
        if text[at] == "." and at and text[at - 1] in _ABBREVIATION_ENDS \
                and _NOT_AN_END.search(text, max(0, at - 4), at + 1):
            continue
        parts.append(text[start:end])
        start = end
    parts.append(text[start:])
    # A part is kept when it holds a word character; most parts start with one, which
    # `str.isalnum` (the same test as `_WORD`'s [^\W_]) confirms without a regex search.
    return [p for p in map(str.strip, parts) if p and (p[0].isalnum() or _WORD.search(p))]


# r"\d+(?:\.\d+)?", written so that the regex engine scans quickly for a first digit (same matches).
_NUMBER = re.compile(r"\d\d*(?:\.\d+)?")
_ASCII_NUMBER = re.compile(r"[0-9][0-9]*(?:\.[0-9]+)?")  # the same in ASCII text, where \d is [0-9]


def _numbers_in(normal: str) -> List[str]:
    """`_NUMBER.findall(normal)`, with the faster pattern when the text is ASCII."""
    return (_ASCII_NUMBER if normal.isascii() else _NUMBER).findall(normal)


def numbers(text: str) -> List[str]:
    """Numbers written with digits (Western or Arabic-Indic), thousands separators removed."""
    return _numbers_in(normalize(text))


# A run of capitalised words (allowing "of", "de", "the" inside), e.g. "Bank of England".
# r"\b[A-Z][\w'’-]*(...)*" with the word boundary checked after the capital (a lookbehind), so that
# the regex engine scans for capitals quickly (same matches).
_ENTITY = re.compile(r"[A-Z](?<!\w[A-Z])[\w'’-]*(?:\s+(?:of|de|the|von|van|al|bin)?\s*[A-Z][\w'’-]*)*")


def entities(text: str) -> List[str]:
    """Capitalised name spans not at a sentence start (English only; Arabic has no capitals).

    A capitalised first word is kept only when it is not a stop word ("The" is not a name, "Paris" is).
    """
    return _entities_in(sentences(text))


# Words a sentence (or a step after "1." or ":") opens with that are capitalised for their place,
# not names: help-desk imperatives ("Open Settings", "Go to Orders", "Keep the receipt") and common
# openers. Stop words ("The", "If") are dropped the same way.
SENTENCE_OPENERS: FrozenSet[str] = frozenset("""
open go keep turn tap click press select choose pick enter type use call contact visit check try follow
add remove delete cancel update install uninstall restart reboot reset sign log create set change save
send ask wait see read find look return bring take put hold fill print email scan upload download allow
enable disable confirm verify switch move copy paste drag drop close start stop run book pay show tell
give please note remember ensure avoid never always first next finally however yes simply once
usually typically generally currently today unfortunately sorry thanks thank hello hi dear make
write reply replace charge plug unplug connect disconnect swipe scroll expand search browse order
apply register subscribe unsubscribe report share request renew activate deactivate tick uncheck step
""".split())


def _opens(sent: str, start: int) -> bool:
    """Whether a capitalised word at `start` opens the sentence or a step in it (only digits,
    bullets or punctuation before it, or a ":" just before)."""
    before = sent[:start].rstrip()
    return not any(c.isalpha() for c in before) or before.endswith(":")


def _entities_in(sents: Iterable[str]) -> List[str]:
    found = []
    for sent in sents:
        # Every match starts with a capital A-Z, which lower-casing would change: a non-ASCII
        # sentence (Arabic) that lower-casing leaves as it is has none, and skips the regex scan.
        if not sent.isascii() and sent.lower() == sent:
            continue
        for m in _ENTITY.finditer(sent):
            span = m.group()
            first = span.split()[0].lower()
            if (first in STOP_WORDS or first in SENTENCE_OPENERS) and _opens(sent, m.start()):
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
    raw: Tuple[str, ...] = ()  # each sentence as written (see `sentences`)
    stems: Tuple[str, ...] = ()  # every word's content word, "" for a stop word (see `content_word`)
    written: Tuple[str, ...] = ()  # every word as written, lower-cased, aligned with `stems`

    @property
    def entities(self) -> Tuple[FrozenSet[str], ...]:
        """Each name span as a set of content words (computed on first use, cached per text)."""
        return entity_sets(self.text)

    def as_written(self, word: str) -> str:
        """A content word (a stem: "respons") as the text first writes it ("responses"); itself if absent.

        Reasoning shows words this way, while every comparison uses the stems.
        """
        try:
            return self.written[self.stems.index(word)]
        except ValueError:
            return word


_EMPTY: FrozenSet[str] = frozenset()
_FLAG_WORDS = _NEGATION_WORDS | PERSONAL_PRONOUNS


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def analyse(text: str) -> Analysis:
    """Content words, per-sentence content words and numbers of a text, cached per text.

    The five metrics of one sample read the same contexts several times; the cache makes that one
    tokenisation. Entities, which only answers, questions and references need, come on demand.
    """
    raw = sentences(text)
    ascii_ = (text or "").isascii()
    # Plain ASCII (most text): normalising is lower-casing, and words split at non-alphanumerics.
    plain = ascii_ and not _ASCII_THOUSANDS.search(text or "")
    stem_of = _CONTENT_WORDS.__getitem__
    normal, sent_sets, negated, persons, all_stems, written, asks = [], [], [], [], [], [], []
    for sent in raw:
        asks.append(sent.rstrip("\"')] ").endswith(("?", "؟")))
        x = sent.lower() if plain else _normalize(sent)
        toks = x.translate(_ASCII_SEPARATORS).split() if plain else _words_of(x)
        stems = list(map(stem_of, toks))  # "" for a stop word
        normal.append(x)
        sent_sets.append(frozenset(filter(None, stems)))
        all_stems += stems
        written += toks if ascii_ else _as_written(sent, toks)
        if _FLAG_WORDS.isdisjoint(toks):  # the common case: neither a negation word nor "I"/"you"
            # (ASCII text has no "’": its second scan is skipped)
            negated.append(("n't" in x or (not ascii_ and "n’t" in x)) and bool(_NEGATION_FOUND.search(x)))
            persons.append(_EMPTY)
        else:
            negated.append(_negates(x, toks))
            persons.append(PERSONAL_PRONOUNS.intersection(toks))
    words_ = tuple(filter(None, all_stems))
    return Analysis(
        text, words_, frozenset(words_), sentences=tuple(sent_sets),
        numbers=frozenset(_numbers_in("\n".join(normal))),  # no number spans a line break
        negated=tuple(negated), asks=tuple(asks),
        normalized=tuple(normal), persons=tuple(persons), raw=tuple(raw), stems=tuple(all_stems),
        written=tuple(written))


# A written word: letters and digits with the Arabic marks inside it ("تلقائيًا" is one word, its tanween
# included), so reasoning quotes the word as the text writes it.
_WRITTEN_WORD = re.compile(r"[^\W_](?:[^\W_]|[\u0610-\u061A\u064B-\u065F\u0670\u06D6-\u06ED])*")


def _as_written(sentence: str, toks: List[str]) -> List[str]:
    """The sentence's words before Arabic normalisation, one per token of its normalised form
    (the normalised tokens when the two do not line up)."""
    raw = split_clitic_digits(sentence.lower())
    raw = _THOUSANDS.sub("", raw) if "," in raw or "٬" in raw else raw
    written = _WRITTEN_WORD.findall(raw)
    return written if len(written) == len(toks) else toks


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def named_entities(text: str) -> Tuple[Tuple[str, FrozenSet[str]], ...]:
    """The text's name spans (see `entities`): each as written, with its set of content words."""
    found = ((span, frozenset(content_words(span))) for span in _entities_in(analyse(text).raw))
    return tuple((span, words_) for span, words_ in found if words_)


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def entity_sets(text: str) -> Tuple[FrozenSet[str], ...]:
    """The text's name spans (see `entities`), each as a set of content words."""
    return tuple(words_ for _, words_ in named_entities(text))


def clear_caches() -> None:
    """Forget cached analyses (benchmarks call this to time a cold start)."""
    for cached in (analyse, named_entities, entity_sets, normalize, stem):
        cached.cache_clear()
    _CONTENT_WORDS.clear()


# Token estimates (pre-run costs, and servers that omit `usage`): no tokenizer files can be
# fetched at run time, so ~4 characters a token for Latin script, ~2.5 for Arabic, at least one a word.
_NONSPACE = re.compile(r"\S+")


def estimate_tokens(text: str) -> int:
    """Approximate BPE token count of `text`."""
    arabic = len(_ARABIC.findall(text))
    by_chars = (len(text) - arabic) / 4.0 + arabic / 2.5
    return max(int(round(by_chars)), len(_NONSPACE.findall(text)))
