"""Files other tools wrote (issue 48, round 4): deepeval 4 sourced passages and partial test runs, TruLens
records with their feedback, and the other tools' exports. Each fixture was written by the tool itself
(tests/fixtures/README.md); each field is asserted where its tool put it."""
import json
from pathlib import Path

import pytest

from evaluator import load_dataset
from evaluator.cli.command import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
KETTLE, ARABIC, CARDS = "How long is the kettle warranty?", "ما هي مدة ضمان الغلاية؟", "Which cards are accepted?"
WARRANTY = "Warranty: kettles are covered for two years against manufacturing defects."
SHIPPING = "Shipping: orders over $40 ship free."
PAYMENTS = "Payments: we take Visa and Mastercard; cash is refused at the counter."
ARABIC_WARRANTY = "الضمان: الغلايات مضمونة لمدة سنتين ضد عيوب التصنيع."


# --- deepeval 4 ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["deepeval_sources.csv", "deepeval_sources.jsonl", "deepeval_sources.json"])
def test_deepeval_sourced_passages_are_text_with_their_source_as_id(name):
    notes, warnings = [], []
    kettle, arabic, cards = load_dataset(FIXTURES / name, notes=notes, warnings=warnings)
    assert kettle.contexts == [WARRANTY, SHIPPING] and kettle.retrieval_ids == ["docs/warranty.md", "docs/shipping.md"]
    assert arabic.contexts == [ARABIC_WARRANTY] and arabic.retrieval_ids == ["docs/ar/الضمان.md"]
    assert cards.contexts == [PAYMENTS]  # a plain passage beside the sourced ones
    assert not any("deepeval_source" in c for s in (kettle, arabic, cards) for c in s.contexts)
    assert (kettle.question, kettle.answer, kettle.ground_truth) == (
        KETTLE, "Two years, against manufacturing defects.", "Two years.")
    assert "Kettles: two-year warranty." in kettle.metadata["context"]  # deepeval's ideal passages: metadata
    assert "read as TEXT, with PATH as their retrieval id" in notes[0]
    assert "context is deepeval's ideal passages" in notes[0] and "Kept as metadata, not scored: context, " in notes[0]
    assert not [w for w in warnings if "'context'" in w]  # never suggested as the retrieved contexts


def test_deepeval_goldens_context_is_not_read_as_retrieved():
    golden, = load_dataset(FIXTURES / "deepeval_goldens.csv", needs_answer=False)
    assert golden.contexts == [] and "Cover: manufacturing defects only." in golden.metadata["context"]


def test_a_deepeval_test_run_with_a_case_without_answer_loads_the_rest_and_names_it():
    notes = []
    kettle, arabic = load_dataset(FIXTURES / "deepeval_test_run_partial.json", notes=notes)
    assert [(s.sample_id, s.answer) for s in (kettle, arabic)] == [("kettle", "Two years."),
                                                                   ("arabic", "مدة الضمان سنتان.")]
    assert kettle.contexts == [WARRANTY] and kettle.metadata["external_scores"] == {"external_deepeval_faithfulness": 1.0}
    assert notes[-1] == ("3 test cases; 1 skipped (test case cards: no actualOutput: deepeval ran it without an "
                         "answer).")


def test_the_cli_scores_the_partial_test_run_and_says_which_case_it_left(capsys):
    assert main(["evaluate", str(FIXTURES / "deepeval_test_run_partial.json"), "--offline", "-q", "--no-history"]) == 0
    err = capsys.readouterr().err
    assert "test case cards: no actualOutput" in err and "2 samples scored" in err
