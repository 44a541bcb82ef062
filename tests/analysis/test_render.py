"""No renderer can take a process down (issue 49): a run whose names, note, category and judge reasoning hold
U+0001 and U+FFFE is drawn by every chart, PDF, HTML and compare export of the real CLI, each exiting 0 or 2
(never 134, a SIGABRT); a renderer child that crashes, runs out of memory or of time is a RenderError and the
caller lives on; bidi controls reach no file or listing; notes refuse control characters by name."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.analysis import render
from evaluator.analysis.render import Limits, RenderJob
from evaluator.errors import RenderError
from evaluator.safetext import BIDI_CONTROLS
from evaluator.store.history import RunStore
from planted_run import EVIL, PROJECT, REVERSED, save_planted_run

pytestmark = pytest.mark.slow
SPEC = {"data": {"values": [{"a": "x", "b": 1}]}, "mark": "bar",
        "encoding": {"x": {"field": "a", "type": "nominal"}, "y": {"field": "b", "type": "quantitative"}}}
SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "sample.jsonl"
UNDRAWABLE = ("\x01", "\ufffe", *BIDI_CONTROLS)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """(history, run id, baseline run id): two planted runs in one project, for charts, trend and compare."""
    folder = tmp_path_factory.mktemp("planted")
    history = folder / "history.sqlite3"
    base = save_planted_run(history, folder)
    return history, save_planted_run(history, folder), base


def ragmeter(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The real command line in its own process, so an abort would show as its exit status."""
    return subprocess.run([sys.executable, "-m", "evaluator", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def commands(history: Path, run_id: str, base: str):
    h = ("--history", str(history))
    for chart in ("means", "distributions", "by-category"):
        for ext in ("png", "svg", "pdf"):
            yield f"{chart}.{ext}", ("runs", *h, "--run", run_id, "--chart", chart, "-o", f"{chart}.{ext}")
    yield "trend.svg", ("runs", *h, "--project", PROJECT, "--chart", "trend", "-o", "trend.svg")
    for ext in ("pdf", "html", "xlsx"):
        yield f"run.{ext}", ("export", run_id, *h, "-o", f"run.{ext}")
    yield "compare.html", ("compare", base, run_id, *h, "--format", "html", "-o", "compare.html")
    yield "compare.svg", ("compare", base, run_id, *h, "--chart", "compare", "-o", "compare.svg")


def test_every_chart_pdf_html_and_compare_export_of_a_planted_run_is_written(planted, tmp_path, monkeypatch):
    # In this process: were the renderer still inside it, its abort would end the test run itself.
    from evaluator.cli import main

    history, run_id, base = planted
    monkeypatch.chdir(tmp_path)
    for name, args in commands(history, run_id, base):
        assert main(list(args)) == 0, name
        data = (tmp_path / name).read_bytes()
        assert data[:4] in (b"%PDF", b"\x89PNG", b"<svg", b"<!DO", b"PK\x03\x04"), name
        if name.endswith((".svg", ".html")):
            text = data.decode("utf-8")
            assert not [c for c in UNDRAWABLE if c in text], f"{name} holds a raw control or bidi character"
    assert "\ufffd" in (tmp_path / "means.svg").read_text(encoding="utf-8")  # the caption shows where one was


def test_the_chart_that_exited_134_is_written_by_the_real_command(planted, tmp_path):
    history, run_id, _ = planted
    done = ragmeter("runs", "--history", str(history), "--run", run_id, "--chart", "means", "-o", "means.png",
                    cwd=tmp_path)
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-600:]}"
    assert (tmp_path / "means.png").read_bytes().startswith(b"\x89PNG")


def test_the_excel_export_and_the_runs_listing_hold_no_control_or_bidi_character(planted, tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    history, run_id, _ = planted
    assert ragmeter("export", run_id, "--history", str(history), "-o", "run.xlsx", cwd=tmp_path).returncode == 0
    book = openpyxl.load_workbook(tmp_path / "run.xlsx", read_only=True)
    cells = [str(c) for ws in book.worksheets for row in ws.iter_rows(values_only=True) for c in row if c]
    assert any("gpj.evil" in c for c in cells)  # the dataset's name is there, in the order it was written
    assert not [c for c in cells if any(ch in c for ch in UNDRAWABLE)]
    listing = ragmeter("runs", "--history", str(history), cwd=tmp_path)
    assert listing.returncode == 0 and "gpj.evil" in listing.stdout
    assert not [c for c in UNDRAWABLE + ("\x1b", "\r") if c in listing.stdout]


def test_names_and_judge_reasoning_are_cleaned_where_they_enter(tmp_path):
    history = tmp_path / "history.sqlite3"
    run_id = save_planted_run(history, tmp_path, raw=False)
    store = RunStore(history)
    info = store.get_run(run_id)
    assert info.dataset_name == "evilgpj.evil.jsonl" and info.project == PROJECT
    reasons = [s.reasoning for _, r in store.iter_results(run_id) for s in r.scores.values()]
    assert reasons and all("weak answer" in r and not set(EVIL) & set(r) for r in reasons), reasons
    store.rename_run(run_id, f"mine{EVIL}{REVERSED}\nx")
    assert store.get_run(run_id).name == "minegpj.evil x"


@pytest.mark.parametrize("text, said", [
    ("ok\x01", "the note holds U+0001 (a control character) at position 3: remove it"),
    ("nul \x00 byte", "the note holds U+0000 (a control character) at position 5: remove it"),
    ("\ufffe", "the note holds U+FFFE (a noncharacter) at position 1: remove it"),
])
def test_a_note_with_a_control_character_is_refused_by_name(planted, tmp_path, text, said):
    history, run_id, _ = planted
    (tmp_path / "note.txt").write_text(text, encoding="utf-8")
    done = ragmeter("note", run_id, "--history", str(history), "--file", str(tmp_path / "note.txt"), cwd=tmp_path)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    ok = ragmeter("note", run_id, "--history", str(history), "ممتاز\tgood\nsecond line", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr


def test_a_renderer_that_aborts_is_an_error_and_the_caller_lives_on():
    pid = os.getpid()
    with pytest.raises(RenderError, match=r"chart \(SVG\) was not made: the renderer crashed \(SIGABRT"):
        render.render_all([RenderJob("svg", SPEC)], command=[sys.executable, "-c", "import os; os.abort()"])
    assert os.getpid() == pid and render.render(RenderJob("svg", SPEC)).startswith(b"<svg")


def test_the_real_renderer_crash_on_an_undrawable_label_costs_one_file_only():
    # vl-convert itself, handed U+0001 unsanitised in a child: it aborts there, and only there.
    crash = ("import vl_convert as v; v.vegalite_to_svg({'data': {'values': [{'a': 'x\\x01'}]}, 'mark': 'text', "
             "'encoding': {'text': {'field': 'a'}}})")
    with pytest.raises(RenderError) as caught:
        render.render_all([RenderJob("pdf", SPEC, what="PDF summary")], command=[sys.executable, "-c", crash])
    assert "PDF summary (PDF) was not made: the renderer crashed (SIGABRT" in str(caught.value)
    assert "Traceback" not in str(caught.value)


def test_the_same_label_through_the_one_door_is_drawn():
    spec = {**SPEC, "data": {"values": [{f"a{EVIL}": f"x{EVIL}{REVERSED}", "b": 1}]},
            "encoding": {**SPEC["encoding"], "x": {"field": f"a{EVIL}", "type": "nominal"}}, "title": f"t{EVIL}"}
    svg = render.render(RenderJob("svg", spec)).decode("utf-8")
    assert "x\ufffd\ufffdgpj.evil" in svg and not [c for c in UNDRAWABLE if c in svg]


def test_a_render_past_its_memory_or_time_is_stopped_with_the_reason():
    with pytest.raises(RenderError, match="the renderer crashed"):  # V8 cannot even start in 256 MB
        render.render(RenderJob("png", SPEC), Limits(memory_mb=256))
    with pytest.raises(RenderError, match="took longer than 1 s, so it was stopped"):
        render.render_all([RenderJob("svg", SPEC)], Limits(seconds=1),
                          command=[sys.executable, "-c", "import time; time.sleep(30)"])


def test_an_html_report_whose_renderer_fails_ships_plain_charts_and_says_why(monkeypatch):
    from evaluator import OfflineJudge, RAGEvaluator
    from evaluator.io.datasets import load_dataset
    from evaluator.report.export import html_report

    report = RAGEvaluator(OfflineJudge()).evaluate_dataset(list(load_dataset(str(SAMPLE)))[:2])
    monkeypatch.setattr(render, "CHILD", Path("/nonexistent/render_child.py"))  # the child dies at its start
    page = html_report(report)
    assert "These charts are drawn plainly: the chart (SVG) was not made: the renderer ended with exit" in page
    assert page.count("<svg") >= 2


@pytest.mark.postgres
def test_a_nul_in_a_note_is_a_validation_message_on_postgresql_too(postgres_url):
    from evaluator import EvalSample, RunConfig
    from evaluator.runs.run import Run
    from evaluator.store.notes import NoteError, add_note, notes_of

    store = RunStore(postgres_url)
    run = Run.new(RunConfig(), [EvalSample("Q?", "A.", ["A."])], dataset_name="d.jsonl", store=store).start()
    run.join()
    with pytest.raises(NoteError, match=r"^the note holds U\+0000 \(a control character\) at position 3: remove it"):
        add_note(store, run.run_id, "ab\x00c", author="eve")
    assert notes_of(store, run.run_id) == []


def test_the_dashboards_own_charts_carry_no_control_or_bidi_character():
    # The Report draws these specs in the browser (vega-embed), not through render.py.
    import json

    from evaluator.analysis import charts

    rows = [{"category": f"cat{EVIL}{REVERSED}", "metric": "faithfulness", "mean": 0.5, "n": 2}]
    spec = json.dumps(charts.category_heatmap(rows, ["faithfulness"]).to_dict(), ensure_ascii=False)
    assert "catgpj.evil" in spec.replace("\ufffd", "") and not [c for c in UNDRAWABLE if c in spec]
