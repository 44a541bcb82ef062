"""Evaluate page (AppTest): uploads of other tools' traces and experiments are recognised, said so in the
preview, and scored as one sample per trace / result."""
from pathlib import Path

import pytest

from apptest import no_exception, open_app, shown_report

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TIMEOUT = 30
KETTLE, ARABIC, CARDS = "How long is the kettle warranty?", "ما هي مدة ضمان الغلاية؟", "Which cards are accepted?"
# file -> (the tool the preview names, expected (question, answer, number of contexts) per sample)
UPLOADS = {
    "spans_otlp.jsonl": ("OpenInference spans (OTLP/JSON)", [
        (KETTLE, "Two years, against manufacturing defects.", 2), (ARABIC, "مدة الضمان سنتان.", 1),
        ("What is the weather in Oslo today?", "It is 4 degrees and raining in Oslo.", 0),
        (CARDS, "Visa and Mastercard.", 1)]),
    "langsmith_experiment.csv": ("LangSmith experiment", [
        (KETTLE, "Two years, against manufacturing defects.", 2), (ARABIC, "مدة الضمان سنتان.", 1),
        (CARDS, "Visa and Mastercard.", 1)]),
    "mlflow_results.jsonl": ("MLflow evaluation results", [
        (KETTLE, "Two years, against manufacturing defects.", 2), (ARABIC, "مدة الضمان سنتان.", 1),
        (CARDS, "Visa and Mastercard.", 1)]),
    "inspect_log.eval": ("inspect_ai eval log", [  # a zip archive, read from the upload's bytes
        (KETTLE, "Two years, against manufacturing defects.", 2), (ARABIC, "مدة الضمان سنتان.", 1),
        (CARDS, "Visa only.", 1)]),
    "deepeval_test_run.json": ("deepeval test run", [
        (KETTLE, "Two years, against manufacturing defects.", 2), (ARABIC, "مدة الضمان سنتان.", 1),
        (CARDS, "Visa and Mastercard.", 1)]),
    "langfuse_traces.jsonl": ("Langfuse traces", [  # the reranker's one passage, not the retriever's two
        (KETTLE, "Two years, against manufacturing defects.", 1), (CARDS, "Visa and Mastercard.", 1),
        (ARABIC, "مدة الضمان سنتان.", 1), ("What is the weather in Oslo today?", "It is 4 degrees and raining in Oslo.", 0)]),
    "promptfoo_results.csv": ("promptfoo CSV", [
        (KETTLE, "Two years, against manufacturing defects.", 1), (ARABIC, "مدة الضمان سنتان.", 1),
        (CARDS, "Visa and Mastercard.", 1)]),
}


def upload(at, name):
    at.radio(key="eval_source").set_value("Upload a file").run()
    mime = "text/csv" if name.endswith(".csv") else "application/zip" if name.endswith(".eval") else "application/json"
    at.file_uploader(key="upload_file").set_value((name, (FIXTURES / name).read_bytes(), mime))
    return at.run()


@pytest.mark.parametrize("name", sorted(UPLOADS))
def test_upload_of_another_tools_file_is_recognised_and_scored(name, history):
    tool, expected = UPLOADS[name]
    app = upload(open_app(TIMEOUT), name)
    no_exception(app)
    infos = [i.value for i in app.info]
    assert any(v.startswith(f"{tool} recognised") for v in infos), infos
    app.button(key="btn_run").click().run()
    no_exception(app)
    samples = [r.sample for r in shown_report(app).results]
    assert [(s.question, s.answer, len(s.contexts)) for s in samples] == expected


def test_upload_of_spans_with_skips_names_them_in_the_preview(history):
    app = upload(open_app(TIMEOUT), "spans_bad.jsonl")
    no_exception(app)
    assert any("2 skipped" in i.value and "no root span" in i.value for i in app.info)


def test_other_tools_grades_show_beside_our_scores_in_the_report(history):
    app = upload(open_app(TIMEOUT), "deepeval_test_run.json")
    app.button(key="btn_run").click().run()
    no_exception(app)
    app.switch_page("pages/report.py").run()
    no_exception(app)
    table = next(d.value for d in app.dataframe if "faithfulness" in getattr(d.value, "columns", ()))
    columns = list(table.columns)
    assert columns.index("external_deepeval_faithfulness") > columns.index("faithfulness")
    assert list(table["external_deepeval_faithfulness"]) == [1.0, 1.0, 0.5]
    assert any("vs external_deepeval_faithfulness" in str(d.value) for d in app.dataframe)  # the agreement panel
