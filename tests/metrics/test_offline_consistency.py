"""Offline scores that agree with themselves (issue 41, item 4): a context holding the reference is
relevant, relevant-first beats relevant-last, Arabic proclitics on numbers are words apart, reasoning
quotes Arabic as written, and an instruction is scored on its content."""
import json
from pathlib import Path

import pytest

from evaluator import EvalSample, OfflineJudge, RAGEvaluator
from evaluator.metrics.context_precision import _precision
from evaluator.metrics.context_recall import CONTEXT_RECALL
from evaluator.metrics.faithfulness import _faithfulness
from evaluator.scoring.progress import Progress
from evaluator.text import analyse, tokens

SAMPLE_FILE = Path(__file__).resolve().parents[2] / "sample_data" / "sample.jsonl"
JUNK = "Shipping: orders leave our warehouse in Leeds within two business days."


def bundled(sample_id):
    for line in SAMPLE_FILE.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["sample_id"] == sample_id:
            return EvalSample(row["question"], row["answer"], row["contexts"], ground_truth=row.get("ground_truth"))
    raise KeyError(sample_id)


def test_a_context_holding_the_reference_word_for_word_is_relevant():
    """en-08: context_recall said 'found in the contexts' while context_precision said 0.007."""
    sample = bundled("en-08")
    scores = RAGEvaluator(OfflineJudge()).evaluate(sample).scores
    assert scores["context_recall"].score == 1.0
    assert scores["context_precision"].score > 0.9


def test_relevant_first_scores_higher_than_relevant_last():
    sample = bundled("en-08")
    first = EvalSample(sample.question, sample.answer, [sample.contexts[0], JUNK], ground_truth=sample.ground_truth)
    last = EvalSample(sample.question, sample.answer, [JUNK, sample.contexts[0]], ground_truth=sample.ground_truth)
    assert _precision(first, "en").score > 0.9 > 0.6 > _precision(last, "en").score


@pytest.mark.parametrize("written, expected", [
    ("خلال و1 يوم", ["خلال", "و", "1", "يوم"]),
    ("بال2015", ["بال", "2015"]),
    ("ل٣ أيام", ["ل", "3", "ايام"]),
    ("وقت", ["وقت"]),  # a word that starts with و stays whole
])
def test_arabic_proclitics_and_the_numbers_written_onto_them_are_words_apart(written, expected):
    assert tokens(written) == expected


def test_a_number_with_a_proclitic_counts_as_retrieved():
    glued = EvalSample("كم المدة؟", "المدة و1 يوم", ["الخطة تمنح و1 يوم للتجربة"], ground_truth="المدة و1 يوم")
    spaced = EvalSample("كم المدة؟", "المدة و 1 يوم", ["الخطة تمنح و 1 يوم للتجربة"], ground_truth="المدة و 1 يوم")
    assert CONTEXT_RECALL.heuristic(glued, "ar", "ragmeter").score == CONTEXT_RECALL.heuristic(spaced, "ar", "ragmeter").score


def test_reasoning_quotes_arabic_words_as_the_text_writes_them():
    analysis = analyse("يتم التحديث تلقائيًا كل أسبوع.")
    assert "تلقائيًا" in analysis.written
    sample = EvalSample("متى يتم التحديث؟", "يتم التحديث تلقائيًا كل أسبوع.", ["يجري النسخ الاحتياطي كل يوم."])
    reasoning = _faithfulness(sample, "ar").reasoning
    assert "تلقائيًا" in reasoning and "تلقاييا" not in reasoning


@pytest.mark.parametrize("answer", [
    "Ask for your refund within 14 days of purchase and your annual plan is refunded in full.",
    "Request a refund within 14 days of purchase: annual plans are refunded in full.",
])
def test_an_instruction_supported_by_its_context_is_scored_on_its_content(answer):
    ctx = ["Refund policy: Annual plans are refunded in full if requested within 14 days of purchase."]
    assert _faithfulness(EvalSample("Can I get a refund?", answer, ctx), "en").score >= 0.9


def test_chit_chat_about_the_listener_is_still_penalised():
    ctx = ["Refund policy: Annual plans are refunded in full if requested within 14 days of purchase."]
    assert _faithfulness(EvalSample("Can I get a refund?", "I love hiking with you.", ctx), "en").score < 0.2


def test_the_progress_line_says_eta_unknown_until_a_row_finishes():
    assert Progress._line(0, 6, None, 240.7).endswith("ETA unknown")
    assert Progress._line(2, 6, None, 100.0).endswith("ETA 200.0s")
