"""MLflow GenAI traces (mlflow-skinny 3.17.2: mlflow.genai.evaluate, then search_traces(...).to_json(orient="records"),
tests/fixtures/writers/mlflow_traces_writer.py): the contexts in response.retrieved_context and the expected_response
expectation are read, not dropped, and the note says where each field came from."""
from pathlib import Path

from evaluator.cli.command import main
from evaluator.io.datasets import load_dataset

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "mlflow_genai_traces.json"


def test_contexts_and_the_reference_come_from_the_response_and_the_expectations():
    notes = []
    samples = {s.question: s for s in load_dataset(TRACES, notes=notes)}
    kettle = samples["How long is the kettle warranty?"]
    assert kettle.answer == "Two years, against manufacturing defects." and kettle.ground_truth == "Two years."
    assert kettle.contexts == ["Warranty: kettles are covered for two years against manufacturing defects.",
                               "Shipping: orders over $40 ship free."]
    assert kettle.retrieval_ids == ["kb/0", "kb/1"] and kettle.sample_id.startswith("tr-")
    assert samples["ما هي مدة ضمان الغلاية؟"].ground_truth == "سنتان."
    assert samples["Which cards are accepted?"].ground_truth is None  # no expectation for this one
    assert kettle.metadata["external_scores"] == {"external_mlflow_correctness": 1.0}
    assert "spans" not in kettle.metadata and "trace_metadata" not in kettle.metadata
    assert notes[0].startswith("MLflow traces recognised. MLflow GenAI traces (search_traces)") and notes[-1] == "3 traces."


def test_the_cli_scores_every_metric_from_the_traces(capsys, tmp_path):
    import json

    code = main(["evaluate", str(TRACES), "--offline", "--no-history", "-q", "-o", str(tmp_path / "r.json")])
    assert code == 0
    scored = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["mean_scores"]
    assert all(scored[m] is not None for m in ("faithfulness", "answer_relevancy", "context_precision",
                                                 "context_recall", "answer_correctness")), scored
