"""Evaluate page (AppTest): an Excel workbook is uploaded, its sheet found (a Sheet select to change it), its
human headers mapped, its passages split and scored; an unread look-alike column gets a yellow box."""
from pathlib import Path

import pytest

from apptest import no_exception, open_app, shown_report

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TIMEOUT = 30
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def upload(at, name, data=None, mime=XLSX):
    at.radio(key="eval_source").set_value("Upload a file").run()
    at.file_uploader(key="upload_file").set_value((name, data if data is not None else (FIXTURES / name).read_bytes(),
                                                   mime))
    return at.run()


def sheet_select(at):
    return next(s for s in at.selectbox if s.label == "Sheet")



# The three samples of the spreadsheet fixtures: (id, contexts, reference) once scored.
SHEET_SAMPLES = [("q1", 2, "30 days from purchase."), ("q2", 1, None), ("q3", 2, "30 يومًا.")]


def results_of(app):
    """Run the uploaded file offline; the results the Report shows."""
    app.button(key="btn_run").click().run()
    no_exception(app)
    return shown_report(app).results


def scored(app):
    """Run the uploaded file offline; each shown sample's id, number of contexts and reference."""
    return [(r.sample.sample_id, len(r.sample.contexts), r.sample.ground_truth) for r in results_of(app)]

def test_an_uploaded_workbook_is_read_from_its_samples_sheet_and_scored(history):
    app = upload(open_app(TIMEOUT), "excel_two_sheets.xlsx")
    no_exception(app)
    assert not app.error, [e.value for e in app.error]
    infos = [i.value for i in app.info]
    assert any(v.startswith("Excel workbook: sheet 'Samples' read") for v in infos), infos
    assert any("2 cells with an empty line between passages (in the first rows) split into 4 contexts" in v
               for v in infos), infos
    select = sheet_select(app)
    assert (select.options, select.value) == (["About", "Samples"], "Samples")
    assert scored(app) == SHEET_SAMPLES


def test_choosing_a_sheet_without_the_columns_asks_for_a_mapping(history):
    app = upload(open_app(TIMEOUT), "excel_two_sheets.xlsx")
    sheet_select(app).set_value("About").run()
    no_exception(app)
    errors = [e.value for e in app.error]
    assert any("sheet 'About', line 1: no question column and no answer column" in e for e in errors), errors


def test_a_password_protected_workbook_is_refused_in_a_red_box(history):
    app = upload(open_app(TIMEOUT), "excel_password.xlsx")
    no_exception(app)
    assert any("is password-protected (encrypted)" in e.value for e in app.error)


def test_an_unread_look_alike_column_gets_a_yellow_box(history):
    data = b"Question,Answer,Golden reply\nWhat is 2+2?,4,4\n"
    app = upload(open_app(TIMEOUT), "g.csv", data, "text/csv")
    no_exception(app)
    warnings = [w.value for w in app.warning]
    assert any("column 'Golden reply' looks like a reference answer but is not read" in w
               and "choose 'Golden reply' for ground_truth under Column mapping" in w for w in warnings), warnings


def test_the_report_offers_an_excel_download_beside_the_others(history):
    app = upload(open_app(TIMEOUT), "excel_two_sheets.xlsx")
    app.button(key="btn_run").click().run()
    app.switch_page("pages/report.py").run()
    no_exception(app)
    labels = [d.proto.label for d in app.get("download_button")]
    assert {"Download CSV", "Download Excel", "Download Parquet"} <= set(labels), labels


# Haystack's detailed report reads predicted_answer as the answer; DSPy's results score the program's answer.
@pytest.mark.parametrize("fixture, recognised", [("haystack_detailed.csv", "Haystack evaluation report recognised."),
                                                 ("dspy_results.csv", "DSPy recognised.")])
def test_an_uploaded_tool_result_scores_the_pipelines_answer_against_the_reference(history, fixture, recognised):
    app = upload(open_app(TIMEOUT), fixture, mime="text/csv")
    no_exception(app)
    assert any(i.value.startswith(recognised) for i in app.info)
    app.button(key="btn_run").click().run()
    no_exception(app)
    samples = [r.sample for r in shown_report(app).results]
    assert [(s.answer, s.ground_truth) for s in samples] == [
        ("30 days", "30 days"), ("Yes, in 5 to 7 days.", "Yes"), ("30 يومًا", "30 يومًا")]


def test_an_uploaded_llamaindex_dataset_is_recognised_without_look_alike_warnings(history):
    app = upload(open_app(TIMEOUT), "llamaindex_rag_dataset.json", mime="application/json")
    no_exception(app)
    assert any(i.value.startswith("LlamaIndex recognised. LabelledRagDataset examples") for i in app.info)
    assert not [w.value for w in app.warning if "reference_contexts" in w.value]
    assert any("3 examples, none has a model answer" in e.value and "call my pipeline" in e.value for e in app.error)


def test_uploaded_mlflow_traces_keep_their_contexts_and_references(history):
    app = upload(open_app(TIMEOUT), "mlflow_genai_traces.json", mime="application/json")
    no_exception(app)
    assert any(i.value.startswith("MLflow traces recognised.") for i in app.info)
    samples = {r.sample.question: r.sample for r in results_of(app)}
    assert len(samples["How long is the kettle warranty?"].contexts) == 2
    assert samples["How long is the kettle warranty?"].ground_truth == "Two years."


def test_an_uploaded_mlflow_dataset_is_recognised_and_asks_for_a_pipeline(history):
    app = upload(open_app(TIMEOUT), "mlflow_genai_dataset.json", mime="application/json")
    no_exception(app)
    assert any(i.value.startswith("MLflow evaluation dataset recognised.") for i in app.info)
    assert any(i.value == "3 records." for i in app.info), [i.value for i in app.info]


@pytest.mark.parametrize("name, mime", [("phoenix_dataset.csv", "text/csv"), ("phoenix_examples.json", "application/json")])
def test_an_uploaded_phoenix_dataset_reads_output_as_the_reference(history, name, mime):
    app = upload(open_app(TIMEOUT), name, mime=mime)
    no_exception(app)
    assert any(i.value.startswith("Phoenix dataset recognised.") and "not a model's answer" in i.value for i in app.info)


def test_an_uploaded_llamaindex_query_response_dataset_is_recognised(history):
    app = upload(open_app(TIMEOUT), "llamaindex_query_responses.json", mime="application/json")
    no_exception(app)
    assert any(i.value.startswith("LlamaIndex recognised. QueryResponseDataset") for i in app.info)


@pytest.mark.parametrize("name", ["excel_locale.csv", "sheets_human.csv"])
def test_uploaded_spreadsheet_csvs_map_their_human_headers(history, name):
    app = upload(open_app(TIMEOUT), name, mime="text/csv")
    no_exception(app)
    assert not app.error, [e.value for e in app.error]
    app.button(key="btn_run").click().run()
    no_exception(app)
    samples = [r.sample for r in shown_report(app).results]
    assert [(s.sample_id, s.ground_truth) for s in samples] == [
        ("q1", "30 days from purchase."), ("q2", None), ("q3", "30 يومًا.")]


# -- round 4: what the CLI reads, the uploader takes; its refusals are the CLI's words -------------------------
def test_the_uploader_takes_every_file_the_cli_reads_and_sets_no_mime_filter(history):
    app = open_app(TIMEOUT)
    app.radio(key="eval_source").set_value("Upload a file").run()
    uploader = app.file_uploader(key="upload_file")
    assert list(uploader.proto.type) == []  # no filter: the reader's refusal names the fix, not a MIME type
    assert all(f".{t}" in uploader.proto.label or t.upper() in uploader.proto.label for t in ("ods", "txt", "gz", "zip"))


@pytest.mark.parametrize("name, mime, note", [
    ("sheets_two_sheets.ods", "application/vnd.oasis.opendocument.spreadsheet",
     "OpenDocument spreadsheet: sheet 'Samples' read"),
    ("excel_unicode_text.txt", "text/plain", "Source chunks: 2 cells with an empty line between passages"),
    ("excel_group_header.xlsx", XLSX, "Header on rows 1 and 2 (merged cells) read as one"),
])
def test_an_uploaded_saved_sheet_previews_and_scores(history, name, mime, note):
    app = upload(open_app(TIMEOUT), name, mime=mime)
    no_exception(app)
    assert not app.error, [e.value for e in app.error]
    assert any(i.value.startswith(note) for i in app.info), [i.value for i in app.info]
    assert scored(app) == SHEET_SAMPLES


def test_an_uploaded_gzip_is_unpacked_and_scored(history):
    app = upload(open_app(TIMEOUT), "sample.jsonl.gz", mime="application/gzip")
    no_exception(app)
    assert any(i.value.startswith("gzip file: unpacked to ") for i in app.info)
    assert len(results_of(app)) == 28


@pytest.mark.parametrize("name, data, said", [
    ("notes.docx", b"PK\x03\x04", "Cannot use this file. notes.docx: unknown file type '.docx'; ragmeter reads datasets "
                                  "as .csv"),
    ("rows.jsonl.gz", b'{"question": "q", "answer": "a"}\n',
     "rows.jsonl.gz: is named .gz but is not a gzip file (it does not start with gzip's signature); it looks like "
     "an uncompressed file: remove .gz from its name"),
])
def test_an_upload_that_cannot_be_read_is_refused_in_the_clis_words(history, name, data, said):
    app = upload(open_app(TIMEOUT), name, data, mime="application/octet-stream")
    no_exception(app)
    errors = [e.value for e in app.error]
    assert any(said in e for e in errors), errors
    assert not any("application/" in e for e in errors)


def test_a_recognised_formats_unread_columns_get_a_yellow_box(history):
    data = (b'question,answer,contexts,ground_truths,latency_ms,run_tag\n'
            b'What is 2+2?,4,"[""two plus two is four""]","[""4""]",310,nightly\n')
    app = upload(open_app(TIMEOUT), "ragas_v0.csv", data, "text/csv")
    no_exception(app)
    warnings = [w.value for w in app.warning]
    assert ("ragas 0.0.x: 2 columns not read as any field, kept as metadata where filled: 'latency_ms', 'run_tag'; "
            "to score one as a field, choose the column for FIELD under Column mapping.") in warnings, warnings
