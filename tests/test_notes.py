"""Notes on runs and samples: `ragmeter note`, the size limit, text kept as data in the HTML and PDF exports,
the role check in team mode, and the Report (AppTest) showing and adding them."""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from pypdf import PdfReader

from evaluator import EvalSample, Run, RunConfig, RunStore
from evaluator.cli import main
from evaluator.config import RolesConfig
from evaluator.errors import NotAllowed
from evaluator.report.downloads import RunFiles
from evaluator.scoring import summaries
from evaluator.service import may_note, run_notes, save_note
from evaluator.store.notes import MAX_CHARS
from evaluator.team.access import Access

HOSTILE = "<script>alert(1)</script> **bold** [link](https://evil.example) @everyone"


@pytest.fixture
def run_id():
    rows = [EvalSample(f"What does policy {i} say?", f"Policy {i} says yes.", [f"Policy {i}: it says yes."],
                       sample_id=f"q-{i}") for i in range(3)]
    run = Run.new(RunConfig(metrics=["faithfulness"]), rows, dataset_name="faq.jsonl", store=RunStore())
    run.start().join()
    return run.run_id


def test_a_note_on_the_run_and_on_a_sample_by_id_or_row(run_id, capsys, monkeypatch):
    monkeypatch.setenv("RAGMETER_USER", "dana")
    assert main(["note", run_id, "Looks right to me."]) == 0
    assert main(["note", run_id, "--sample", "q-1", "This answer hedges."]) == 0
    assert main(["note", run_id, "--sample", "#3", "Third row."]) == 0
    assert "noted on sample #3 (q-2)" in capsys.readouterr().out
    notes = run_notes(RunStore(), run_id)
    assert [(n.author, n.on, n.text) for n in notes] == [
        ("dana", "the run", "Looks right to me."), ("dana", "sample #2 (q-1)", "This answer hedges."),
        ("dana", "sample #3 (q-2)", "Third row.")]
    assert main(["note", run_id]) == 0
    listed = capsys.readouterr().out
    assert "dana  on sample #2 (q-1):" in listed and "    This answer hedges." in listed


@pytest.mark.parametrize("argv, said", [
    (["--sample", "nope", "x"], "has no sample 'nope'"),
    (["   "], "the note is empty"),
    (["x" * (1 << 20)], f"a note is at most {MAX_CHARS:,} characters; this one has 1,048,576"),
    (["--bogus"], "unrecognized arguments: --bogus"),
])
def test_a_bad_note_is_refused_with_exit_2_and_nothing_saved(run_id, argv, said, capsys):
    assert main(["note", run_id, *argv]) == 2
    assert said in capsys.readouterr().err
    assert run_notes(RunStore(), run_id) == []


def test_a_megabyte_file_is_refused_without_reading_it_whole(run_id, tmp_path, capsys):
    big = tmp_path / "note.txt"
    big.write_text("y" * (1 << 20), encoding="utf-8")
    assert main(["note", run_id, "--file", str(big)]) == 2
    assert f"at most {MAX_CHARS:,} characters" in capsys.readouterr().err
    assert main(["note", "nope", "x"]) == 2  # an unknown run


def test_notes_are_text_in_the_html_and_pdf_exports(run_id):
    store = RunStore()
    save_note(store, run_id, HOSTILE, access=Access(None), author="dana")
    info = store.get_run(run_id)
    files = RunFiles(info.dataset_name, summaries.stored(store, run_id), info.settings, store=store, run_id=run_id,
                     date=info.created_at)
    html = files.html()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt; **bold**" in html
    assert '<a href="https://evil.example"' not in html
    text = PdfReader(io.BytesIO(files.pdf())).pages[0].extract_text()
    assert "Notes" in text and "<script>alert(1)</script> **bold**" in text and "dana" in text


@pytest.mark.parametrize("user, roles, allowed", [
    ("eve@example.com", RolesConfig(viewers=("*",), evaluators=("eve@example.com",)), True),
    ("vic@example.com", RolesConfig(viewers=("*",), evaluators=("eve@example.com",)), False),
    (None, RolesConfig(viewers=("*",)), False),
])
def test_team_mode_notes_need_the_evaluator_role(run_id, user, roles, allowed):
    access = Access(user, roles, team=True)
    assert may_note(access) is allowed
    if allowed:
        assert save_note(RunStore(), run_id, "ok", access=access).author == user
    else:
        with pytest.raises(NotAllowed, match="may not write notes"):
            save_note(RunStore(), run_id, "no", access=access)
        assert run_notes(RunStore(), run_id) == []


def test_deleting_a_run_deletes_its_notes(run_id):
    store = RunStore()
    save_note(store, run_id, "gone soon", access=Access(None), author="dana")
    store.delete_run(run_id)
    assert store.query("SELECT COUNT(*) FROM notes WHERE run_id = ?", (run_id,)) == [(0,)]


def test_the_report_shows_notes_as_text_and_adds_one(run_id):
    from streamlit.testing.v1 import AppTest

    save_note(RunStore(), run_id, HOSTILE, access=Access(None), author="dana")
    app = str(Path(__file__).resolve().parents[1] / "app.py")
    at = AppTest.from_file(app, default_timeout=60)
    at.query_params["run"] = run_id
    at.run()
    at.switch_page("pages/report.py")
    at.query_params["run"] = run_id
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert HOSTILE in [t.value for t in at.text]  # st.text: never Markdown or HTML
    assert not any("<script>" in m.value for m in at.markdown)
    at.text_area(key="rep_note_text").input("Second look: fine.")
    at.text_input(key="rep_note_sample").input("q-0")
    at.button[[b.label for b in at.button].index("Save note")].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Second look: fine." in [t.value for t in at.text]
    shown = [re.sub(r"\\(.)", r"\1", c.value) for c in at.caption]  # the caption's Markdown escapes undone
    assert any("on sample #1 (q-0)" in c for c in shown), shown
