"""Sanity checks and unit spelling: garbage stays out of the top bands, units match their symbols."""
import random

import pytest

from evaluator.analysis.bands import EXCELLENT, GOOD, band
from pathlib import Path

from evaluator import OfflineJudge, RAGEvaluator, load_dataset
from evaluator.metrics.sanity import GARBAGE_CAP, garbage_reason
from evaluator.metrics.scoring import score_metric
from evaluator.metrics.units import spell_units
from evaluator.model import EvalSample

CONTEXT = ("The Octopus card is a reusable contactless stored value smart card for making electronic payments "
           "in online or offline systems in Hong Kong. It was launched in September 1997 to collect fares for "
           "the territory's mass transit system.")


def salad(text, n, seed):
    words = text.replace(".", "").split()
    random.Random(seed).shuffle(words)
    return " ".join(words[:n])


def salad_samples(n=20):
    return [EvalSample("When was the Octopus card launched?", salad(CONTEXT, 16, i), [CONTEXT],
                       salad(CONTEXT, 12, 100 + i), sample_id=f"w{i}") for i in range(n)]


def test_a_word_salad_file_no_longer_lands_in_excellent_or_good():
    report = RAGEvaluator(OfflineJudge()).evaluate_dataset(salad_samples())
    means = report.mean_scores()
    for metric in ("faithfulness", "answer_relevancy", "answer_correctness", "context_recall"):
        assert means[metric] <= GARBAGE_CAP, metric
    assert band(report.overall_mean()) not in (EXCELLENT, GOOD)
    assert "word salad" in report.results[0].faithfulness.reasoning


WORD_SALAD_FILE = Path(__file__).resolve().parents[1] / "fixtures" / "word_salad.csv"


def test_a_file_of_random_words_lands_in_no_top_band():
    # Every field is random words from one small pool per row (our own vocabulary), so the fields
    # share most of their words: the lexical heuristics alone read that as faithful and relevant.
    report = RAGEvaluator(OfflineJudge()).evaluate_dataset(load_dataset(WORD_SALAD_FILE))
    assert len(report.results) == 12
    for metric, mean in report.mean_scores().items():
        assert band(mean) not in (EXCELLENT, GOOD), (metric, mean)
    assert all(band(r.overall()) not in (EXCELLENT, GOOD) for r in report.results)


@pytest.mark.parametrize("text", [
    "It was launched in September 1997 to collect fares.",  # copied prose
    "The card came out in September 1997, for paying transit fares in Hong Kong.",  # paraphrase
    "Zazie Beetz appeared in several 20th Century Fox films including Deadpool 2.",  # names, few function words
    "New Zealand, Canada, the United States, the Falkland Islands, and Peru.",  # a list
    "- Hong Kong\n- Octopus card\n- September 1997\n- mass transit fares\n- smart card",
])
def test_real_answers_pass(text):
    assert garbage_reason(text, [CONTEXT], "When was the Octopus card launched?") is None


@pytest.mark.parametrize("text, why", [
    ("apple river seven blue window quickly orange mountain guitar", "no sentence structure"),
    (salad(CONTEXT, 20, 7), "contexts' words in an order"),
])
def test_garbage_is_named(text, why):
    assert why in garbage_reason(text, [CONTEXT])


@pytest.mark.parametrize("symbol, spelled", [
    ("Water boils at 100 °C.", "Water boils at 100 degrees celsius."),
    ("It was 451℉ inside.", "It was 451 degrees fahrenheit inside."),
    ("Growth of 12% a year", "Growth of 12 percent a year"),
    ("It costs $9.99", "It costs 9.99 dollars"),
    ("A 5 km run at 12 km/h", "A 5 kilometres run at 12 kilometres per hour"),
    ("Ten meters long", "Ten metres long"),
])
def test_units_are_spelled_one_way(symbol, spelled):
    assert spell_units(symbol) == spelled


def test_a_text_without_units_is_returned_as_is():
    text = "Plain words, no units at all."
    assert spell_units(text) is text


def test_100_degrees_celsius_is_supported_by_100_degrees_c_symbol():
    sample = EvalSample("At what temperature does water boil?", "Water boils at 100 degrees Celsius.",
                        ["Water boils at 100 °C at sea level."], "100 °C")
    for metric in ("faithfulness", "answer_correctness"):
        assert score_metric(metric, sample, OfflineJudge(), "en").score == 1.0, metric


@pytest.mark.parametrize("answer", ["", "   "])
@pytest.mark.parametrize("metric", ["answer_relevancy", "answer_correctness"])
def test_an_empty_answer_scores_zero_without_a_judge_call(metric, answer):
    from fakes import ScriptedJudge

    judge = ScriptedJudge('{"score": 0.6}')
    ms = score_metric(metric, EvalSample("Q?", answer, ["ctx"], "ref"), judge, "en")
    assert (ms.score, ms.skipped, judge.calls) == (0.0, False, 0)
    assert "empty" in ms.reasoning
