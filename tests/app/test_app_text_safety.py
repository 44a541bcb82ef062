"""Evaluate page (AppTest): an upload with lone surrogates and NULs previews, loads and runs."""
from apptest import no_exception, open_app, shown_report
from evaluator.store.history import RunStore

BROKEN_JSONL = (b'{"question": "Q1?", "answer": "A \\ud800 one.", "contexts": ["ctx one"]}\n'
                b'{"question": "Q2?", "answer": "A two.", "contexts": ["ctx \\u0000 two"]}\n')


def test_an_upload_with_lone_surrogates_previews_and_runs(history):
    app = open_app(30)
    app.radio(key="eval_source").set_value("Upload a file").run()
    app.file_uploader(key="upload_file").set_value(("broken.jsonl", BROKEN_JSONL, "application/json"))
    app.run()
    no_exception(app)  # main: StreamlitDataframeConversionError in the preview
    assert not app.error, [e.value for e in app.error]
    assert app.session_state["dataset"].samples[0].answer == "A \ufffd one."
    app.button(key="btn_run").click().run()
    no_exception(app)
    report = shown_report(app)
    assert len(report.results) == 2
    (run,) = RunStore(history).list_runs()
    assert run.n_done == 2
    stored = RunStore(history).load_report(run.run_id).results
    assert stored[1].sample.metadata["text_repairs"] == ["contexts: 1 NUL character replaced with U+FFFD"]
