"""Arize Phoenix dataset exports (arize-phoenix 20.26.1 server, tests/fixtures/writers/phoenix_dataset_writer.py):
the CSV and the examples JSON; an example's output is the reference, never scored as the answer."""
from pathlib import Path

import pytest

from evaluator.cli.command import main
from evaluator.errors import DatasetError
from evaluator.io.datasets import CLI, load_dataset

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXPECTED = [("How long is the kettle warranty?", "Two years."), ("ما هي مدة ضمان الغلاية؟", "سنتان."),
            ("Which cards are accepted?", "Visa and Mastercard.")]


@pytest.mark.parametrize("name, read", [
    ("phoenix_dataset.csv", "question from input.question, reference from output.answer"),
    ("phoenix_examples.json", "question from input, reference from output"),
])
def test_examples_are_questions_with_references(name, read):
    notes, warnings = [], []
    samples = load_dataset(FIXTURES / name, notes=notes, warnings=warnings, needs_answer=False)
    assert [(s.question, s.ground_truth) for s in samples] == EXPECTED
    assert samples[0].sample_id == "RGF0YXNldEV4YW1wbGU6MQ==" and samples[0].answer == ""
    assert notes[0].startswith(f"Phoenix dataset recognised. Phoenix dataset examples: id as sample_id, {read} ")
    assert warnings == []
    with pytest.raises(DatasetError, match="give a target that answers each question"):
        load_dataset(FIXTURES / name, surface=CLI)


def test_the_cli_scores_a_phoenix_dataset_with_a_target(capsys):
    code = main(["evaluate", str(FIXTURES / "phoenix_dataset.csv"), "--target", "evaluator.demo.pipeline:rag_answer",
                 "--offline", "--no-history", "-q"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 0 and err[-1] == "ragmeter: ok: 3 samples scored"
    assert any(line.startswith("ragmeter: note: Phoenix dataset recognised.") for line in err)
