"""MLflow GenAI evaluation datasets (mlflow-skinny 3.17.2, EvaluationDataset.to_df().to_json(orient="records"),
tests/fixtures/writers/mlflow_dataset_writer.py): every record counted right, ids kept, no answers: a target."""
from pathlib import Path

import pytest

from evaluator.cli.command import main
from evaluator.errors import DatasetError
from evaluator.io.datasets import CLI, load_dataset

DATASET = Path(__file__).resolve().parents[1] / "fixtures" / "mlflow_genai_dataset.json"


def test_records_are_questions_with_references_and_their_ids():
    notes = []
    samples = load_dataset(DATASET, notes=notes, needs_answer=False)
    assert sorted((s.question, s.ground_truth) for s in samples) == sorted([
        ("How long is the kettle warranty?", "Two years."), ("ما هي مدة ضمان الغلاية؟", "سنتان."),
        ("Which cards are accepted?", "Visa and Mastercard.")])
    assert all(s.sample_id.startswith("dr-") for s in samples)
    assert notes[0].startswith("MLflow evaluation dataset recognised.") and notes[-1] == "3 records."


def test_without_a_target_the_error_says_what_the_file_is_with_its_count():
    notes = []
    with pytest.raises(DatasetError, match="3 records, none has a model answer.*give a target that answers each "
                                           "question: --target"):
        load_dataset(DATASET, notes=notes, surface=CLI)
    assert notes[-1] == "3 records."  # the whole file, never "1 record." for a file of 3


def test_the_cli_scores_the_dataset_with_a_target(capsys):
    code = main(["evaluate", str(DATASET), "--target", "evaluator.demo.pipeline:rag_answer", "--offline",
                 "--no-history", "-q"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 0 and err[-1] == "ragmeter: ok: 3 samples scored"
    assert not any("warning" in line for line in err)  # dataset_record_id is read as the sample id
