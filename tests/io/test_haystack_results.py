"""Haystack's EvaluationRunResult.detailed_report() CSV (haystack-ai 3.4.1, tests/fixtures/writers/haystack_writer.py):
predicted_answer is the answer, answer the reference, Haystack's scores kept as external grades, said in the note."""
from pathlib import Path

from evaluator.cli.command import main
from evaluator.io.datasets import load_dataset

REPORT = Path(__file__).resolve().parents[1] / "fixtures" / "haystack_detailed.csv"
NOTE = ("Haystack evaluation report recognised. EvaluationRunResult.detailed_report(): question as question, "
        "predicted_answer as answer, answer as ground_truth, contexts as contexts, query_id as sample_id; Haystack's "
        "scores (reciprocal_rank, doc_recall, exact_match) kept as external_haystack_<evaluator>; not read: none.")


def test_the_pipelines_reply_is_the_answer_and_haystacks_answer_the_reference():
    notes = []
    samples = load_dataset(REPORT, notes=notes)
    assert [(s.sample_id, s.answer, s.ground_truth) for s in samples] == [
        ("1", "30 days", "30 days"), ("2", "Yes, in 5 to 7 days.", "Yes"), ("3", "30 يومًا", "30 يومًا")]
    assert samples[0].contexts == ["Refunds are accepted within 30 days of purchase.", "Shipping takes 5 to 7 days."]
    assert samples[1].metadata["external_scores"] == {"external_haystack_reciprocal_rank": 1.0,
                                                      "external_haystack_doc_recall": 1.0,
                                                      "external_haystack_exact_match": 0.0}
    assert notes[0] == NOTE


def test_the_cli_scores_the_report_and_says_how_it_read_it(capsys):
    code = main(["evaluate", str(REPORT), "--offline", "--no-history", "-q"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 0 and err[-1] == "ragmeter: ok: 3 samples scored"
    assert f"ragmeter: note: {NOTE}" in err
