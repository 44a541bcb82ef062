"""DSPy Evaluate results (dspy 3.4.1, save_as_json / save_as_csv, tests/fixtures/writers/dspy_writer.py): the
program's pred_answer is the answer, the devset's example_answer the reference, the metric an external grade."""
from pathlib import Path

import pytest

from evaluator.cli.command import main
from evaluator.io.datasets import load_dataset

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NOTE = ("DSPy recognised. DSPy Evaluate results: pred_answer (the program's) as answer, example_answer (the devset's "
        "gold) as ground_truth; the metric (answer_exact_match) kept as external_dspy_<metric>; kept as metadata: "
        "reasoning.")


@pytest.mark.parametrize("name", ["dspy_results.json", "dspy_results.csv"])
def test_the_programs_answer_is_scored_against_the_gold_answer(name):
    notes, warnings = [], []
    samples = load_dataset(FIXTURES / name, notes=notes, warnings=warnings)
    assert [(s.answer, s.ground_truth) for s in samples] == [
        ("30 days", "30 days"), ("Yes, in 5 to 7 days.", "Yes"), ("30 يومًا", "30 يومًا")]
    assert samples[0].contexts == ["Refund policy: refunds are accepted within 30 days of purchase."]
    assert [s.metadata["external_scores"]["external_dspy_answer_exact_match"] for s in samples] == [1.0, 0.0, 1.0]
    assert samples[1].metadata["reasoning"] == "The shipping page lists Canada."
    assert notes[0] == NOTE and warnings == []


def test_the_cli_scores_dspy_results(capsys):
    code = main(["evaluate", str(FIXTURES / "dspy_results.json"), "--offline", "--no-history", "-q"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 0 and err[-1] == "ragmeter: ok: 3 samples scored" and f"ragmeter: note: {NOTE}" in err
