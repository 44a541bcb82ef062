"""The offline heuristics on hand-written cases, one behaviour each, and the seed's Jaccard set."""

import pytest

from evaluator.metrics.heuristic_sets import DEFAULT_HEURISTICS, HEURISTIC_SETS, context_relevances, heuristic_score
from evaluator.metrics.answer_relevancy import hedge_share
from evaluator.metrics.context_precision import soft_average_precision
from evaluator.metrics.heuristics import (
    HeuristicScore,
    answer_type_match,
    is_evasive,
    is_yes_no_question,
)
from evaluator.model import METRICS, EvalSample
from evaluator.metrics.parsing import average_precision

FRANCE = "France is a country in Western Europe. Its capital and largest city is Paris, home to the Louvre."
SKI = "A ski is a narrow strip of material worn underfoot to glide over snow."
BAKERY = "The bakery on Mill Street sells sourdough bread every morning."


def score(metric, question="", answer="", contexts=(), reference=None, lang="en", kind=DEFAULT_HEURISTICS):
    return heuristic_score(metric, EvalSample(question, answer, list(contexts), reference), lang, kind)


# --- contract -----------------------------------------------------------------------------

def test_default_set_is_ragmeter_and_both_sets_cover_every_metric():
    assert DEFAULT_HEURISTICS == "ragmeter"
    for table in HEURISTIC_SETS.values():
        assert set(table) == set(METRICS)


def test_unknown_set_names_the_choices():
    with pytest.raises(ValueError, match="jaccard"):
        score("faithfulness", "q", "a", ["c"], kind="nope")


@pytest.mark.parametrize("metric", METRICS)
def test_every_score_is_in_range_with_plain_reasoning(metric):
    h = score(metric, "What is the capital of France?", "Paris is the capital.", [FRANCE, SKI], "Paris")
    assert isinstance(h, HeuristicScore)
    assert 0.0 <= h.score <= 1.0
    assert h.reasoning and "{" not in h.reasoning


# --- the seed's Jaccard set reproduces known values ---------------------------------------

@pytest.mark.parametrize("metric, sample, value, reasoning", [
    ("faithfulness", EvalSample("q", "the cat sat", ["the cat ran"]), 0.5,
     "Jaccard token overlap of answer and contexts: 0.500."),
    ("answer_relevancy", EvalSample("what is a cat", "a cat is an animal", []), 0.5,
     "Jaccard token overlap of question and answer: 0.500."),
    ("context_precision", EvalSample("red apple", "", ["red apple", "green pear"]), 0.5,
     "Mean Jaccard overlap of question and each context: 0.500."),
    ("context_recall", EvalSample("q", "", ["one two three"], "one two"), 0.6667,
     "Jaccard token overlap of reference and contexts: 0.667."),
    ("answer_correctness", EvalSample("q", "blue sky", [], "grey sky"), 0.3333,
     "Jaccard token overlap of answer and reference: 0.333."),
])
def test_jaccard_set_reproduces_the_seed(metric, sample, value, reasoning):
    h = heuristic_score(metric, sample, "en", "jaccard")
    assert h == HeuristicScore(value, reasoning)


# --- faithfulness -------------------------------------------------------------------------

def test_bare_correct_span_is_supported():
    h = score("faithfulness", "What is the capital of France?", "Paris", [FRANCE])
    assert h.score >= 0.9
    assert "1/1" in h.reasoning


def test_bare_span_leans_on_question_words_but_a_sentence_does_not():
    contexts = ["The Louvre opened in 1793."]
    span = score("faithfulness", "When did the Louvre museum open?", "museum 1793", contexts)
    sentence = score("faithfulness", "When did the Louvre museum open?", "The museum opened in 1793.", contexts)
    assert span.score > sentence.score


def test_invented_number_lowers_faithfulness():
    honest = score("faithfulness", "When did it open?", "The Louvre opened in 1793.", ["The Louvre opened in 1793."])
    invented = score("faithfulness", "When did it open?", "The Louvre opened in 1887.", ["The Louvre opened in 1793."])
    assert honest.score > 0.9
    assert invented.score < 0.6
    assert "'1887'" in invented.reasoning


def test_invented_name_lowers_faithfulness():
    honest = score("faithfulness", "Who sells bread?", "The bakery on Mill Street sells bread.", [BAKERY])
    invented = score("faithfulness", "Who sells bread?", "Tom Hardwick sells bread on Mill Street.", [BAKERY])
    assert honest.score > invented.score + 0.3
    assert "'Tom Hardwick'" in invented.reasoning  # the name as written


# --- reasoning shows what the user wrote ----------------------------------------------------

@pytest.mark.parametrize("metric, expected", [
    ("faithfulness", "unsupported: 'customer', 'responses', 'take', 'time'"),
    ("answer_relevancy", "('customer', 'responses', 'take' and 1 more)"),
    ("context_recall", "reference words not retrieved: 'customer', 'responses', 'take', 'time'"),
])
def test_reasoning_quotes_words_as_written_not_their_stems(metric, expected):
    # Words are matched on their stems ("respons", "tak", "tim") but shown as the text wrote them.
    answer = "Customer responses take some time."
    h = score(metric, "How fast is support?", answer, [SKI], reference=answer)
    assert expected in h.reasoning
    assert "'respons'" not in h.reasoning and "'tim'" not in h.reasoning


def test_negating_the_context_lowers_faithfulness():
    kept = score("faithfulness", "q", "The bakery sells sourdough bread every morning.", [BAKERY])
    flipped = score("faithfulness", "q", "The bakery does not sell sourdough bread every morning.", [BAKERY])
    assert kept.score > flipped.score
    assert "negate" in flipped.reasoning


def test_hallucinated_sentence_scores_below_the_correct_span():
    right = score("faithfulness", "Which city is the capital of France?", "Paris", [FRANCE])
    wrong = score("faithfulness", "Which city is the capital of France?",
                  "Lyon became the capital of France in 1950.", [FRANCE])
    assert right.score > wrong.score


def test_sentence_about_the_speaker_lowers_faithfulness():
    context = "The lighthouse on the northern cape was built in 1901 and guided ships past the reef."
    question = "Tell me about the lighthouse."
    plain = score("faithfulness", question, "The lighthouse was built in 1901.", [context])
    personal = score("faithfulness", question, "The lighthouse was built in 1901. I love visiting it.", [context])
    assert personal.score < plain.score * 0.7
    assert "speaker or listener" in personal.reasoning


def test_pronoun_the_context_also_uses_is_not_penalised():
    context = "You can renew a library card online. You need the card number."
    h = score("faithfulness", "How do I renew my card?", "You can renew the library card online.", [context])
    assert h.score >= 0.9
    assert "speaker or listener" not in h.reasoning


# --- answer relevancy ---------------------------------------------------------------------

@pytest.mark.parametrize("answer", ["I have no comment.", "I don't know", "no comment", "لا تعليق", "لا أعرف"])
def test_evasive_answers_score_low(answer):
    assert is_evasive(answer)
    h = score("answer_relevancy", "What is the capital of France?", answer)
    assert h.score <= 0.1
    assert "evasive" in h.reasoning


def test_long_answer_mentioning_not_knowing_is_not_evasive():
    assert not is_evasive("I don't know the exact year, but the bridge was built in the early 1900s by the city "
                          "council after a long public debate about its cost.")


def test_empty_answer_scores_zero_relevancy():
    assert score("answer_relevancy", "What is the capital of France?", "   ").score == 0.0


def test_off_topic_answer_scores_below_on_topic():
    question = "What is the capital of France?"
    on = score("answer_relevancy", question, "The capital of France is Paris.")
    off = score("answer_relevancy", question, "Sourdough bread needs a long fermentation.")
    assert on.score > off.score + 0.3


def test_echo_of_the_question_scores_below_an_answer():
    question = "What do bakers add to sourdough?"
    echo = score("answer_relevancy", question, "bakers add to sourdough")
    answer = score("answer_relevancy", question, "Bakers add a starter culture to sourdough.")
    assert answer.score > echo.score


def test_hedging_long_answer_scores_below_a_direct_one():
    question = "How many bridges cross the river in the old town?"
    direct = score("answer_relevancy", question, "Seven bridges cross the river in the old town. "
                                                 "The oldest is the stone bridge near the market.")
    hedged = score("answer_relevancy", question, "The provided documents do not mention how many bridges cross "
                                                 "the river. No information about the old town is given.")
    assert direct.score > hedged.score


def test_relevancy_off_topic_answers_tie_whatever_their_length():
    question = "What is the capital of France?"
    short = score("answer_relevancy", question, "Sourdough rises.")
    long = score("answer_relevancy", question, "Sourdough bread rises slowly because wild yeast and lactic "
                                               "bacteria ferment the dough overnight in a cool kitchen.")
    assert short.score == long.score


def test_relevancy_prefers_the_focused_answer_among_equal_coverage():
    question = "What colour are the ferry's sails?"
    focused = score("answer_relevancy", question, "The ferry's sails are red.")
    drifting = score("answer_relevancy", question, "The ferry's sails are red. Tickets cost more on weekends, "
                                                   "and the harbour cafe sells fresh pastries every morning.")
    assert focused.score > drifting.score


def test_hedge_copied_from_the_question_is_not_a_hedge():
    question = "Which soup on the menu does not contain onions?"
    answer = "The tomato soup does not contain onions."
    assert hedge_share(answer, question) == 0.0
    assert hedge_share(answer) == 1.0  # without the question, the phrase reads as a disclaimer
    assert score("answer_relevancy", question, answer).score >= 0.7


@pytest.mark.parametrize("answer", ["I couldn't find any information about the opening hours.",
                                    "There is no relevant document about the opening hours."])
def test_disclaimer_phrasings_count_as_hedges(answer):
    assert hedge_share(answer, "When does the museum open?") == 1.0


@pytest.mark.parametrize("question, expected", [
    ("Is the museum open?", True),
    ("In the old town, is parking free?", True),  # a leading phrase set off by a comma
    ("The bridge is old. Was it ever rebuilt?", True),  # the second sentence asks
    ("Where is the museum?", False),
    ("In the old town, where is parking free?", False),
])
def test_is_yes_no_question(question, expected):
    assert is_yes_no_question(question) is expected


@pytest.mark.parametrize("question, answer, expected", [
    ("Is Paris in France?", "Yes.", 1),
    ("In the old town, is parking free?", "Yes, on Sundays.", 1),
    ("Where is the Louvre?", "No.", -1),
    ("How many bridges are there?", "Seven", 1),
    ("Why does bread rise?", "Because yeast makes gas.", 1),
    ("Which city is the capital?", "Paris", 1),
    ("What does yeast do?", "It eats sugar and makes gas.", 0),
])
def test_answer_type_match(question, answer, expected):
    assert answer_type_match(question, answer) == expected


# --- context precision --------------------------------------------------------------------

def test_relevant_first_ranks_above_relevant_last():
    question = "What is the capital of France?"
    first = score("context_precision", question, "", [FRANCE, SKI, BAKERY])
    last = score("context_precision", question, "", [SKI, BAKERY, FRANCE])
    assert first.score > last.score
    assert "rank" in first.reasoning


def test_no_relevant_context_scores_low():
    assert score("context_precision", "What is the capital of France?", "", [SKI, BAKERY]).score < 0.2


def test_reference_raises_the_relevance_of_the_context_holding_it():
    sample = EvalSample("Where is the famous museum?", "", [FRANCE, SKI], "Louvre in Paris")
    with_ref = context_relevances(sample)
    without = context_relevances(EvalSample(sample.question, "", sample.contexts))
    assert with_ref[0] > without[0]
    assert with_ref[0] > with_ref[1]


def test_soft_average_precision_equals_ap_on_binary_verdicts():
    for verdicts in ([1, 0, 1], [0, 0, 1], [1, 1, 0, 0], [0, 0, 0]):
        assert soft_average_precision(verdicts) == pytest.approx(average_precision([bool(v) for v in verdicts]))


# --- context recall -----------------------------------------------------------------------

def test_recall_with_half_the_reference_retrieved_is_about_half():
    reference = "The Louvre is in Paris. The bakery bakes sourdough bread."
    contexts = ["The Louvre museum is in Paris.", SKI]
    h = score("context_recall", "Tell me about the town", "", contexts, reference)
    assert 0.35 <= h.score <= 0.65
    assert "1/2 reference sentences" in h.reasoning


def test_recall_with_everything_retrieved_is_high_and_nothing_is_low():
    reference = "The Louvre is in Paris. The bakery bakes sourdough bread."
    full = score("context_recall", "q", "", ["The Louvre is in Paris.", "A bakery bakes sourdough bread."], reference)
    none = score("context_recall", "q", "", [SKI], reference)
    assert full.score >= 0.9
    assert none.score <= 0.1


def test_bare_span_reference_is_looked_for_with_the_question():
    question = "Which museum in Paris holds the Mona Lisa?"
    found = score("context_recall", question, "", ["The Louvre in Paris holds the Mona Lisa."], "the Louvre")
    missing = score("context_recall", question, "", [SKI], "the Louvre")
    assert found.score > 0.8 > missing.score


# --- answer correctness -------------------------------------------------------------------

@pytest.mark.parametrize("question, reference, better, worse, why", [
    ("What happens if you cut a sourdough starter in half?", "Both halves keep fermenting if you feed them.",
     "Each half keeps fermenting as long as it is fed.", "The starter dies immediately.", ""),
    ("Do skis need wax?", "Skis do not need wax to glide.", "No, skis glide without wax.", "Skis need wax to glide.",
     "negates"),  # a polarity flip is penalised, and the reasoning says so
])
def test_correctness_a_matching_answer_beats_a_different_one(question, reference, better, worse, why):
    right = score("answer_correctness", question, better, reference=reference)
    wrong = score("answer_correctness", question, worse, reference=reference)
    assert right.score > wrong.score
    assert why in wrong.reasoning


@pytest.mark.parametrize("answer", ["Yes.", "Yes, it does."])
def test_correctness_bare_yes_agreeing_with_the_reference_is_high(answer):
    question = "Does the ferry run on Sundays?"
    reference = "Yes, the ferry runs on Sundays."
    assert score("answer_correctness", question, answer, reference=reference).score >= 0.9


def test_correctness_leading_no_against_a_yes_reference_is_low():
    question = "Does the ferry run on Sundays?"
    reference = "Yes, the ferry runs on Sundays."
    agree = score("answer_correctness", question, "Yes, the ferry runs on Sundays.", reference=reference)
    # Same words, opposite stance: the leading "No" decides, though the rest repeats the reference.
    deny = score("answer_correctness", question, "No, the ferry runs on Sundays only in summer.", reference=reference)
    assert deny.score <= 0.5 < agree.score
    assert "negates" in deny.reasoning


def test_correctness_exact_answer_is_high():
    assert score("answer_correctness", "Which city?", "Paris", reference="Paris").score >= 0.9


# --- Arabic -------------------------------------------------------------------------------

AR_CONTEXT = "القاهرة هي عاصمة مصر وأكبر مدنها، ويعبرها نهر النيل."


def test_arabic_bare_span_is_supported_despite_article_and_taa_marbuta():
    h = score("faithfulness", "ما هي عاصمة مصر؟", "القاهره", [AR_CONTEXT], lang="ar")
    assert h.score >= 0.9


def test_arabic_invented_number_lowers_faithfulness():
    honest = score("faithfulness", "ما هي عاصمة مصر؟", "عاصمة مصر هي القاهرة.", [AR_CONTEXT], lang="ar")
    invented = score("faithfulness", "ما هي عاصمة مصر؟", "أصبحت القاهرة عاصمة مصر عام ١٩٥٢.", [AR_CONTEXT], lang="ar")
    assert honest.score > invented.score
    assert "1952" in invented.reasoning


def test_arabic_relevancy_on_topic_beats_off_topic_and_evasive():
    question = "ما هي عاصمة مصر؟"
    on = score("answer_relevancy", question, "عاصمة مصر هي القاهرة.", lang="ar")
    off = score("answer_relevancy", question, "الخبز الطازج لذيذ في الصباح.", lang="ar")
    evasive = score("answer_relevancy", question, "لا أعرف", lang="ar")
    assert on.score > off.score > evasive.score


def test_arabic_context_precision_ranks_relevant_first_higher():
    question = "ما هي عاصمة مصر؟"
    other = "التزلج رياضة شتوية تمارس على الثلج."
    first = score("context_precision", question, "", [AR_CONTEXT, other], lang="ar")
    last = score("context_precision", question, "", [other, AR_CONTEXT], lang="ar")
    assert first.score > last.score


# --- speed --------------------------------------------------------------------------------

def test_a_pronoun_of_the_same_person_as_the_contexts_is_not_penalised():
    ctx = ["Billing help: if you cancel, you keep access until the end of the month."]
    own_words = EvalSample("What happens if I cancel?", "If you cancel, your access lasts until the month ends.", ctx)
    about_me = EvalSample("What happens if I cancel?", "If you cancel, I keep access until the month ends.", ctx)
    fair = heuristic_score("faithfulness", own_words, "en")
    assert "speaker or listener" not in fair.reasoning
    assert "speaker or listener" in heuristic_score("faithfulness", about_me, "en").reasoning


# The question-shape patterns are written letter-first for speed; these are their plain forms.
_PLAIN_ASKS_NUMBER = (r"\b(?:how (?:many|much|old|long|far|tall|big|often)|what (?:year|percentage|proportion|number)"
                      r"|when)\b|كم|متى")
_PLAIN_ASKS_NAME = (r"\b(?:who|whom|where|which)\b|\bwhat(?:'s| is| are)? (?:a |an |the )?"
                    r"(?:country|city|countries|cities|place|state|language|name|company)\b|من هو|من هي|اين|أين")


@pytest.mark.parametrize("question", [
    "How many moons does Mars have?", "Somehow, how much is it?", "showhow many", "In what year did it open?",
    "When was it built?", "whence and whenever", "Who wrote it?", "whoever wins", "What's the name of the river?",
    "What is a city with two names?", "Which one?", "swhich_one", "كم عمره؟", "متى بدأت؟", "من هو الكاتب؟", "أين تقع؟",
    "Why is the sky blue?", "  ...why not", "لماذا حدث ذلك؟", "whyever", "", "_why",
])
def test_question_shape_patterns_match_where_their_plain_forms_match(question):
    import re

    from evaluator.metrics.heuristics import _ASKS_NAME, _ASKS_NUMBER, _ASKS_REASON, _asks_reason
    from evaluator.text import normalize

    q = normalize(question)
    for fast, plain in ((_ASKS_NUMBER, _PLAIN_ASKS_NUMBER), (_ASKS_NAME, _PLAIN_ASKS_NAME)):
        found, expected = fast.search(q), re.compile(normalize(plain)).search(q)
        assert (found and found.span()) == (expected and expected.span())
    assert _asks_reason(q) is bool(_ASKS_REASON.search(q))
