"""Traces and experiments written by other tools (tests/fixtures, see its README): each file through
the library, the CLI, and (tests/app/test_app_formats.py) a dashboard upload."""
import json
from pathlib import Path

import pytest

from evaluator import load_dataset
from evaluator.cli.command import main
from evaluator.errors import DatasetError
from evaluator.io.datasets import inspect_dataset

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
KETTLE, KETTLE_ANSWER = "How long is the kettle warranty?", "Two years, against manufacturing defects."
ARABIC, ARABIC_ANSWER = "ما هي مدة ضمان الغلاية؟", "مدة الضمان سنتان."
CARDS, CARDS_ANSWER = "Which cards are accepted?", "Visa and Mastercard."
SPANS = [(KETTLE, KETTLE_ANSWER, 2), (ARABIC, ARABIC_ANSWER, 1),
         ("What is the weather in Oslo today?", "It is 4 degrees and raining in Oslo.", 0), (CARDS, CARDS_ANSWER, 1)]
EXPERIMENT = [(KETTLE, KETTLE_ANSWER, 2), (ARABIC, ARABIC_ANSWER, 1), (CARDS, CARDS_ANSWER, 1)]
ONE_CONTEXT = [(KETTLE, KETTLE_ANSWER, 1), (ARABIC, ARABIC_ANSWER, 1), (CARDS, CARDS_ANSWER, 1)]
DATASET = [(KETTLE, "", 0), (ARABIC, "", 0), (CARDS, "", 0)]  # questions and references only

# file -> (tool named in the note, expected (question, answer, number of contexts) per sample)
WITH_ANSWERS = {
    "spans_readable.json": ("OpenInference spans", SPANS),
    "spans_otlp.jsonl": ("OTLP/JSON", SPANS),
    "spans_phoenix.csv": ("Phoenix span export", SPANS),
    "spans_phoenix.jsonl": ("Phoenix span export", SPANS),
    "spans_phoenix.parquet": ("Phoenix span export", SPANS),
    "spans_genai.jsonl": ("OTLP/JSON", [("Can I return an opened kettle?", "Yes, within 14 days.", 0)]),
    "langsmith_experiment.csv": ("LangSmith experiment", EXPERIMENT),
    "langsmith_experiment.jsonl": ("LangSmith experiment", EXPERIMENT),
    "mlflow_results.jsonl": ("MLflow evaluation results", EXPERIMENT),
    "mlflow_eval_data.jsonl": ("MLflow evaluation data", [(q, a, 0) for q, a, _ in EXPERIMENT]),
    "promptfoo_results.json": ("promptfoo results", ONE_CONTEXT),
    "promptfoo_results.jsonl": ("promptfoo results", ONE_CONTEXT),
    "promptfoo_results.csv": ("promptfoo CSV", ONE_CONTEXT),
}
WITHOUT_ANSWERS = {
    "langsmith_examples.jsonl": "LangSmith examples",
    "langfuse_items.jsonl": "Langfuse dataset items",
    "langfuse_items_page.json": "Langfuse dataset items",
}


def _needs_parquet(name):
    if name.endswith(".parquet"):
        pytest.importorskip("pyarrow")


def shape(samples):
    return [(s.question, s.answer, len(s.contexts)) for s in samples]


@pytest.mark.parametrize("name", sorted(WITH_ANSWERS))
def test_library_reads_each_tool_file(name):
    _needs_parquet(name)
    tool, expected = WITH_ANSWERS[name]
    notes = []
    samples = load_dataset(FIXTURES / name, notes=notes)
    assert shape(samples) == expected
    assert tool in notes[0] and "recognised" in notes[0]


@pytest.mark.parametrize("name", sorted(WITHOUT_ANSWERS))
def test_datasets_without_answers_give_questions_and_references(name):
    notes = []
    samples = load_dataset(FIXTURES / name, needs_answer=False, notes=notes)
    assert shape(samples) == DATASET
    assert [s.ground_truth for s in samples] == ["Two years.", "سنتان.", None]  # the third has no reference
    assert WITHOUT_ANSWERS[name] in notes[0] and "target" in notes[0]


@pytest.mark.parametrize("name", sorted(WITHOUT_ANSWERS))
def test_datasets_without_answers_say_so_when_answers_are_needed(name):
    notes = []
    with pytest.raises(DatasetError, match=r"(items|examples), none has a model answer \(a test set\)"):
        load_dataset(FIXTURES / name, notes=notes)
    assert "hold no answers from your app" in notes[0]


@pytest.mark.parametrize("name", ["spans_otlp.jsonl", "spans_readable.json", "spans_phoenix.csv"])
def test_traces_keep_ids_tools_and_retrieval_metadata(name):
    kettle, _, weather, _ = load_dataset(FIXTURES / name)
    assert len(kettle.sample_id) == 32 and all(c in "0123456789abcdef" for c in kettle.sample_id)
    assert kettle.retrieval_ids == ["kb-1", "kb-7"]  # ranked ids: what hit@k, mrr and ndcg@k read
    assert json.loads(kettle.metadata["retrieval_scores"]) == [0.91, 0.42]
    assert kettle.contexts[0].startswith("Warranty: kettles")
    assert [(c["name"], c["arguments"], c["output"]) for c in weather.tool_calls] == [
        ("get_weather", {"city": "Oslo"}, "4C, rain")]  # the LLM's request and the TOOL span are one call


def test_genai_trace_reads_tool_spans():
    (sample,) = load_dataset(FIXTURES / "spans_genai.jsonl")
    assert [(c["name"], c["arguments"]) for c in sample.tool_calls] == [("lookup_policy", {"topic": "returns"})]


@pytest.mark.parametrize("name,grades", [
    ("langsmith_experiment.csv", [{"external_langsmith_correctness": 1.0}, {"external_langsmith_correctness": 1.0},
                                  {"external_langsmith_correctness": 0.0}]),
    ("mlflow_results.jsonl", [{"external_mlflow_correctness": 1.0}, {"external_mlflow_correctness": 1.0},
                              {"external_mlflow_correctness": 0.0}]),
    ("promptfoo_results.json", [{"external_promptfoo_context_faithfulness": 1.0},
                                {"external_promptfoo_context_faithfulness": 1.0},
                                {"external_promptfoo_context_faithfulness": 0.2}]),
])
def test_their_graders_scores_are_external_grades_not_human_labels(name, grades):
    samples = load_dataset(FIXTURES / name)
    got = [{k: v for k, v in s.metadata["external_scores"].items() if "conciseness" not in k} for s in samples]
    assert got == grades
    assert all("human_labels" not in s.metadata for s in samples)  # a grader is not a person


def test_a_score_of_no_metric_of_ours_is_kept_as_an_external_grade():
    first = load_dataset(FIXTURES / "langsmith_experiment.jsonl")[0]
    assert first.metadata["external_scores"]["external_langsmith_conciseness"] == 3.0  # LangSmith's 1–10 scale


@pytest.mark.parametrize("name", ["promptfoo_results.csv", "promptfoo_results.json"])
def test_promptfoo_verdict_is_a_column_never_part_of_the_answer(name):
    samples = load_dataset(FIXTURES / name)
    assert all("[PASS]" not in s.answer and "Reason" not in s.answer for s in samples)
    assert [s.metadata["promptfoo_pass"] for s in samples] == ["true", "true", "false"]
    assert samples[2].metadata["promptfoo_reason"] == "Output lacks the card names"


# --- bad input: a named skip per row, counted, nothing else lost ---------------------------------

def test_spans_without_root_or_output_are_skipped_by_name():
    notes = []
    (sample,) = load_dataset(FIXTURES / "spans_bad.jsonl", notes=notes)
    assert (sample.question, sample.answer, len(sample.contexts)) == ("Do you ship to Norway?",
                                                                       "Yes, in five working days.", 1)
    summary = notes[-1]
    assert summary.startswith("3 traces, 1 with retrieval; 2 skipped")
    assert "has no output.value (no answer)" in summary
    assert "trace 00000000000000000000000000000abc: no root span" in summary


def test_a_file_whose_every_trace_is_skipped_says_why(tmp_path):
    line = next(l for l in (FIXTURES / "spans_bad.jsonl").read_text().splitlines())
    rows = json.loads(line)
    spans = rows["resourceSpans"][0]["scopeSpans"][0]["spans"]
    rows["resourceSpans"][0]["scopeSpans"][0]["spans"] = [s for s in spans if s.get("parentSpanId")]
    path = tmp_path / "noroot.jsonl"
    path.write_text(json.dumps(rows) + "\n")
    with pytest.raises(DatasetError, match="has no usable rows: .* no root span"):
        load_dataset(path)


def test_langsmith_rows_whose_run_failed_are_skipped_by_name():
    notes = []
    samples = load_dataset(FIXTURES / "langsmith_experiment_errors.csv", notes=notes)
    assert shape(samples) == EXPERIMENT[:2]
    assert notes[-1] == ("3 runs; 1 skipped (line 4 (example 00000000-0000-0000-0000-000000000003): "
                         "the run failed: RuntimeError('retriever timed out')).")


def test_archived_langfuse_items_are_skipped_by_name():
    notes = []
    load_dataset(FIXTURES / "langfuse_items.jsonl", needs_answer=False, notes=notes)
    assert notes[-1] == "4 items; 1 skipped (item item-old: archived in Langfuse)."


# --- the preview -----------------------------------------------------------------------------------

def test_preview_shows_one_row_per_trace_and_the_tally():
    pre = inspect_dataset(FIXTURES / "spans_otlp.jsonl")
    assert pre.row_count == 4 and pre.missing == []
    assert pre.rows[0]["question"] == KETTLE
    assert any(n.startswith("OpenInference spans (OTLP/JSON) recognised") for n in pre.notes)
    assert "4 traces, 3 with retrieval, 1 with tool calls." in pre.notes


# --- through the CLI -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(WITH_ANSWERS))
def test_cli_evaluates_each_tool_file(name, tmp_path, capsys):
    _needs_parquet(name)
    tool, expected = WITH_ANSWERS[name]
    out = tmp_path / "report.json"
    assert main(["evaluate", str(FIXTURES / name), "--offline", "-q", "--no-history", "-o", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["num_samples"] == len(expected)
    assert [(r["question"], r["answer"], len(r["contexts"])) for r in report["records"]] == expected
    err = capsys.readouterr().err
    assert "ragmeter: note: " in err and f"{tool}" in err and "recognised" in err


@pytest.mark.parametrize("name", sorted(WITHOUT_ANSWERS))
def test_cli_answers_datasets_with_a_target(name, tmp_path, capsys):
    out = tmp_path / "report.json"
    code = main(["evaluate", str(FIXTURES / name), "--target", "evaluator.demo:rag_answer", "--offline", "-q",
                 "--no-history", "-o", str(out)])
    assert code == 0
    records = json.loads(out.read_text())["records"]
    assert [r["question"] for r in records] == [q for q, _, _ in DATASET]
    assert all(r["answer"] for r in records)  # the target answered each question
    assert f"ragmeter: note: {WITHOUT_ANSWERS[name]} recognised" in capsys.readouterr().err


def test_cli_names_the_skipped_traces(tmp_path, capsys):
    out = tmp_path / "report.json"
    assert main(["evaluate", str(FIXTURES / "spans_bad.jsonl"), "--offline", "-q", "--no-history", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "ragmeter: note: 3 traces, 1 with retrieval; 2 skipped" in err
    assert json.loads(out.read_text())["num_samples"] == 1
