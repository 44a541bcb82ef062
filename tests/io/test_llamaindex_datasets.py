"""LlamaIndex LabelledRagDataset.save_json (llama-index-core 0.13.6, tests/fixtures/writers/llamaindex_writer.py):
query and reference_answer read, reference_contexts kept aside with the reason, no answers: a target answers."""
from pathlib import Path

import pytest

from evaluator.cli.command import main
from evaluator.errors import DatasetError
from evaluator.io.datasets import CLI, inspect_dataset, load_dataset

DATASET = Path(__file__).resolve().parents[1] / "fixtures" / "llamaindex_rag_dataset.json"


def test_examples_are_questions_with_references_and_the_note_says_what_was_kept_aside():
    notes, warnings = [], []
    samples = load_dataset(DATASET, notes=notes, warnings=warnings, needs_answer=False)
    assert [(s.question, s.ground_truth, s.contexts) for s in samples] == [
        ("How long is the refund window?", "30 days from purchase.", []), ("Do you ship to Canada?", "Yes.", []),
        ("ما هي مدة الاسترداد؟", "30 يومًا.", [])]
    assert samples[1].metadata["query_by"] == '{"model_name": "gpt-4o-mini", "type": "ai"}'
    assert notes[0].startswith("LlamaIndex recognised. LabelledRagDataset examples: query as question, "
                               "reference_answer as ground_truth; kept as metadata, not scored: reference_contexts")
    assert warnings == []  # reference_contexts is explained in the note, not warned about


def test_without_a_target_the_error_says_to_give_one(capsys):
    with pytest.raises(DatasetError, match=r"3 examples, none has a model answer \(a test set\): give a target that answers each question: --target"):
        load_dataset(DATASET, surface=CLI)
    assert inspect_dataset(DATASET).missing == ["answer"]


def test_the_cli_scores_it_with_a_target_answering_each_question(capsys, tmp_path):
    code = main(["evaluate", str(DATASET), "--target", "evaluator.demo.pipeline:rag_answer", "--offline",
                 "--no-history", "-q"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 0 and err[-1] == "ragmeter: ok: 3 samples scored", err[-3:]
    assert any(line.startswith("ragmeter: note: LlamaIndex recognised.") for line in err)


def test_a_query_response_dataset_is_questions_with_reference_responses():
    notes = []
    samples = load_dataset(DATASET.parent / "llamaindex_query_responses.json", notes=notes, needs_answer=False)
    assert [(s.sample_id, s.question, s.ground_truth) for s in samples] == [
        ("0", "How long is the refund window?", "30 days from purchase."), ("1", "Do you ship to Canada?", "Yes."),
        ("2", "ما هي مدة الاسترداد؟", "30 يومًا.")]
    assert notes[0].startswith("LlamaIndex recognised. QueryResponseDataset: each query id's query as question")
    with pytest.raises(DatasetError, match="give a target"):
        load_dataset(DATASET.parent / "llamaindex_query_responses.json", surface=CLI)
