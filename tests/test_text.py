"""Tokenisation, normalisation, stop words, sentences, numbers and names for English and Arabic."""
import pytest

from evaluator.text import (
    analyse,
    content_words,
    detect_language,
    entities,
    is_negated,
    is_stop_word,
    normalize,
    normalize_arabic,
    normalized_words,
    numbers,
    polarity,
    sentences,
    stance,
    stem,
    strip_arabic_clitics,
    tokens,
    words,
)


def test_words_keeps_the_seed_tokeniser():
    assert words("Hello, World! مرحبا بالعالم") == ["hello", "world", "مرحبا", "بالعالم"]


@pytest.mark.parametrize("raw, expected", [
    ("أحمد", "احمد"),  # hamza-on-alef
    ("إسلام", "اسلام"),  # hamza-under-alef
    ("آمن", "امن"),  # madda
    ("مدرسة", "مدرسه"),  # taa marbuta
    ("مستشفى", "مستشفي"),  # alef maqsura
    ("كَتَبَ", "كتب"),  # diacritics
    ("جـــميل", "جميل"),  # tatweel
    ("٢٠٢٤", "2024"),  # Arabic-Indic digits
])
def test_normalize_arabic(raw, expected):
    assert normalize_arabic(raw) == expected


@pytest.mark.parametrize("word, expected", [
    ("الكتاب", "كتاب"),
    ("والكتاب", "كتاب"),
    ("بالقلم", "قلم"),
    ("للطالب", "طالب"),
    ("وسيارة", "سيارة"),  # lone proclitic on a long word
    ("بين", "بين"),  # a short word that merely starts with a clitic letter is left alone
])
def test_strip_arabic_clitics(word, expected):
    assert strip_arabic_clitics(word) == expected


def test_arabic_forms_of_one_word_share_a_stem():
    forms = ["المدرسة", "والمدرسه", "بالمدرسة", "مدرسة"]
    assert len({stem(normalize_arabic(f)) for f in forms}) == 1


@pytest.mark.parametrize("word, expected", [
    ("cities", "city"), ("played", "play"), ("boxes", "box"), ("running", "run"),
    ("class", "class"), ("bus", "bus"), ("1987", "1987"),
])
def test_light_english_stemming(word, expected):
    assert stem(word) == expected


def test_inflections_of_one_word_share_a_stem():
    assert stem("names") == stem("named") == stem("name")
    assert stem("runs") == stem("running") == stem("run")


@pytest.mark.parametrize("word", ["the", "and", "was", "في", "من", "هذا", "إلى", "الذي"])
def test_stop_words_in_both_languages(word):
    assert is_stop_word(normalize_arabic(word))


def test_content_words_drop_stop_words_and_stem():
    assert content_words("The cities were named after the kings") == ["city", stem("name"), "king"]
    assert content_words("ذهب الطالب إلى المدرسة في الصباح") == ["ذهب", "طالب", "مدرس", "صباح"]


def test_tokens_remove_thousands_separators():
    assert tokens("It cost 1,200 dollars") == ["it", "cost", "1200", "dollars"]


def test_sentences_english_keeps_abbreviations_and_decimals_together():
    text = "Dr. J. Smith paid 3.5 million. Then he left! Did he? Yes"
    assert sentences(text) == ["Dr. J. Smith paid 3.5 million.", "Then he left!", "Did he?", "Yes"]


def test_sentences_split_glued_scraped_text():
    assert sentences("It opened in August 2009.The second card came later.") == [
        "It opened in August 2009.", "The second card came later."]


def test_sentences_arabic():
    assert sentences("هل زرت القاهرة؟ نعم زرتها العام الماضي. كانت رائعة!") == [
        "هل زرت القاهرة؟", "نعم زرتها العام الماضي.", "كانت رائعة!"]


def test_numbers_western_and_arabic_indic():
    assert numbers("Founded in 1,694 and rebuilt in ١٩٤٥ at 3.5 km") == ["1694", "1945", "3.5"]


def test_entities_skip_sentence_initial_stop_words():
    assert entities("The Bank of England opened in London. Paris is far, said Marie Curie.") == [
        "Bank of England", "London", "Paris", "Marie Curie"]


@pytest.mark.parametrize("text, negated", [
    ("They do not sing", True), ("They don't sing", True), ("Nothing happens", True),
    ("They sing", False), ("لا يغني", True), ("ليس صحيحا", True), ("يغني كثيرا", False),
])
def test_negation(text, negated):
    assert is_negated(text) is negated


def test_analyse_collects_sentences_numbers_questions_and_negation():
    a = analyse("Paris has 2 million people. Is it not big?")
    assert a.sentences == (frozenset({"paris", "2", "million", stem("people")}), frozenset({"big"}))
    assert a.numbers == frozenset({"2"})
    assert a.asks == (False, True)
    assert a.negated == (False, True)
    assert a.entities == (frozenset({"paris"}),)


def test_detect_language():
    assert detect_language("What is this?") == "en"
    assert detect_language("What is", "ما هذا؟") == "ar"


@pytest.mark.parametrize("text, expected_stance, expected_polarity", [
    ("Yes.", 1, 1),
    ("No, no single test can tell.", -1, -1),  # the leading word decides, whatever follows
    ("No. Every tree is a plant.", -1, -1),
    ("Nothing happens at all.", 0, -1),  # no leading yes/no: a negation denies
    ("Bread rises because of yeast.", 0, 1),
    ("Nobody knows yet.", 0, -1),
    ("نعم، هذا صحيح", 1, 1),
    ("لا، ليس كذلك", -1, -1),
])
def test_stance_and_polarity(text, expected_stance, expected_polarity):
    assert stance(text) == expected_stance
    assert polarity(text) == expected_polarity


def test_analyse_records_first_and_second_person_pronouns_per_sentence():
    a = analyse("I love long walks. The river is cold. Have you tried it?")
    assert a.persons == (frozenset({"i"}), frozenset(), frozenset({"you"}))
    assert analyse("أنا أحب القهوة.").persons == (frozenset({"انا"}),)


def test_as_written_gives_the_first_spelling_of_a_stem_in_the_text():
    a = analyse("Customer responses take time. The response came.")
    assert a.as_written("respons") == "responses"
    assert a.as_written("tim") == "time"
    assert a.as_written("absent") == "absent"  # not in the text: the word itself


def test_as_written_keeps_arabic_spelling_before_normalisation():
    a = analyse("ذهبت إلى المدرسة.")
    assert a.as_written(stem(normalize_arabic("المدرسة"))) == "المدرسة"  # not the normalised "المدرسه"


@pytest.mark.parametrize("text", [
    "The fee is 1,200 dollars. It isn't refundable!",  # thousands separator, "n't"
    "It opened in 2009.The card works.",  # a period glued to the next sentence
    "Dr. J. Smith said no.\n\nNext line",  # titles and initials do not end sentences
    "مرحبا بالعالم. لا شيء",
    "",
])
def test_normalized_words_are_the_words_of_the_normalised_text(text):
    # ASCII text takes a shortcut through the cached analysis; it must agree with the long way.
    assert normalized_words(text) == tuple(words(normalize(text)))


def test_token_estimate_counts_arabic_denser_and_never_below_one_per_word():
    from evaluator.text import estimate_tokens

    assert estimate_tokens("x" * 40) == 10
    assert estimate_tokens("ب" * 40) == 16  # Arabic splits finer in BPE vocabularies
    assert estimate_tokens("a b c d e f") == 6  # short words: one token each at least


# --- fast paths agree with the rules they replace (the offline scores depend on it) ------------

def test_normalize_arabic_table_applies_the_diacritic_and_letter_rules_to_every_character():
    import re

    from evaluator.text import _AR_DIACRITICS, _AR_LETTERS

    def by_the_rules(text):
        return _AR_DIACRITICS.sub("", text).translate(_AR_LETTERS)

    for code in range(0x3000):  # every character below U+0700 the table holds, and beyond its end
        text = "ب" + chr(code) + "x"
        assert normalize_arabic(text) == by_the_rules(text), hex(code)
    assert re.search("[\u064B-\u065F]", normalize_arabic("كَتَبَ")) is None


@pytest.mark.parametrize("text, negated", [
    ("it is not here", True), ("no_thing here", False), ("nobody came", True), ("he didn't", True),
    ("he didn’t", True), ("know nothing", True), ("snot and canon", False), ("cannot", True),
    ("without it", True), ("withouts", False), ("لا أعرف", True), ("لاعب ماهر", False),
    ("ليست هنا", True), ("بدونه", False), ("غير واضح", True), ("", False), ("x_not", False),
])
def test_negation_search_with_letter_first_alternatives_agrees_with_the_reference(text, negated):
    from evaluator.text import _NEGATION, _NEGATION_FOUND

    normal = normalize(text)
    assert bool(_NEGATION_FOUND.search(normal)) is bool(_NEGATION.search(normal)) is negated
    assert is_negated(text) is negated


@pytest.mark.parametrize("text, expected", [
    ("Stir well. ... Serve hot.", ["Stir well.", "Serve hot."]),  # a part of dots only is dropped
    ('Mix. "(2) Serve now."', ["Mix.", '"(2) Serve now."']),  # opens with punctuation, holds words
    ("Done! ?! _ . Next one?", ["Done!", "Next one?"]),  # an underscore is not a word character
    ("قف. … انتهى.", ["قف.", "… انتهى."]),
])
def test_sentences_keeps_exactly_the_parts_with_a_letter_or_digit(text, expected):
    assert sentences(text) == expected
