"""`--chart`: every chart written by the CLI carries its provenance (dataset and version, rows scored, judge,
date, run id, ragmeter version), read back from the real SVG text and the real PDF's text (pypdf)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from pypdf import PdfReader

from evaluator import EvalSample, Run, RunConfig, RunStore
from evaluator.analysis.provenance import OFFLINE, file_name
from evaluator.cli import main

METRICS = ["faithfulness", "answer_relevancy"]


def stored(n: int = 6, dataset: str = "support faq.jsonl", **config) -> str:
    rows = [EvalSample(f"What does policy {i} say?", f"Policy {i} says yes.", [f"Policy {i}: it says yes."],
                       sample_id=f"q-{i}", category="billing" if i % 2 else "refunds") for i in range(n)]
    run = Run.new(RunConfig(metrics=METRICS, **config), rows, dataset_name=dataset, store=RunStore(), project="faq")
    run.start().join()
    assert run.status == "finished", run.error
    return run.run_id


def svg_text(path: Path) -> str:
    """The words an SVG shows: its <text> elements' contents, unescaped."""
    import html

    return " ".join(html.unescape(t) for t in re.findall(r"<text[^>]*>(.*?)</text>", path.read_text(), re.S))


@pytest.fixture
def run_id():
    return stored()


def test_an_svg_of_the_means_says_dataset_rows_judge_and_run(run_id, tmp_path, capsys):
    out = tmp_path / "means.svg"
    assert main(["runs", "--run", run_id, "--chart", "means", "-o", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    text = svg_text(out)
    version = RunStore().get_run(run_id).settings["dataset_version"]
    for said in ("support faq.jsonl", f"version {version}", "6/6 rows scored", f"judge: {OFFLINE} (heuristics: default)",
                 f"run {run_id}", "ragmeter ", "faithfulness"):
        assert said in text, said


def test_the_pdf_of_a_chart_has_the_same_caption_as_text(run_id, tmp_path):
    out = tmp_path / "means.pdf"
    assert main(["runs", "--run", run_id, "--chart", "means", "-o", str(out)]) == 0
    text = " ".join(page.extract_text() for page in PdfReader(out).pages)
    assert "support faq.jsonl" in text and "6/6 rows scored" in text and run_id in text and "offline lexical" in text


@pytest.mark.parametrize("chart", ["distributions", "by-category"])
def test_every_run_chart_is_written_with_its_caption(run_id, chart, tmp_path):
    out = tmp_path / f"{chart}.png"
    assert main(["runs", "--run", run_id, "--chart", chart, "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = tmp_path / f"{chart}.svg"
    assert main(["runs", "--run", run_id, "--chart", chart, "-o", str(svg)]) == 0
    assert f"run {run_id}" in svg_text(svg)


def test_without_o_the_file_is_named_after_dataset_run_and_chart(run_id, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["runs", "--run", run_id, "--chart", "means"]) == 0
    assert (tmp_path / f"ragmeter-support-faq-{run_id}-means.svg").exists()
    assert file_name("../../etc/x.csv", "r1", "means", "png") == "ragmeter-x-r1-means.png"  # never a path


def test_a_trend_of_a_project_marks_the_run_whose_scorer_changed(tmp_path):
    first, second = stored(), stored(heuristics="jaccard")
    RunStore().rename_run(first, "<b>baseline</b> \u202eمقارنة")  # a name with HTML and RTL characters
    out = tmp_path / "trend.svg"
    assert main(["runs", "--project", "faq", "--chart", "trend", "-o", str(out)]) == 0
    text = svg_text(out)
    assert "project faq: 2 finished runs" in text and f"run {second}" in text
    assert "faithfulness" in text and "answer_relevancy" in text
    assert "strokeDash" in out.read_text() or "stroke-dasharray" in out.read_text()  # the change is marked
    # The runs in order, named (not wall-clock dates), one series per scorer with a legend.
    assert "runs, oldest first" in text and "#1 <b>baseline</b> مقارنة" in text and "#2 " in text
    assert "<b>" not in out.read_text()  # the name is text in the SVG, escaped, never markup
    assert "scored by" in text and "offline heuristics (default)" in text and "offline heuristics (jaccard)" in text


def many_metric_runs(n_runs: int) -> None:
    """`n_runs` runs of every default metric (8 panels), scorers alternating, in project faq."""
    rows = [EvalSample(f"What does policy {i} say?", f"Policy {i} says yes.", [f"Policy {i}: it says yes."],
                       ground_truth=f"Policy {i} says yes.", sample_id=f"q-{i}", expected_docs=["Policy"],
                       expected_answer_keywords=["yes"]) for i in range(4)]
    for i in range(n_runs):
        run = Run.new(RunConfig(heuristics="jaccard" if i % 2 else "ragmeter"), rows, dataset_name="faq.jsonl",
                      store=RunStore(), project="faq")
        run.start().join()


def test_the_trend_png_is_at_most_1600_px_tall_and_run_names_its_project(tmp_path):
    from evaluator.analysis.charts import png_size

    many_metric_runs(6)
    newest = RunStore().list_runs()[0].run_id
    out = tmp_path / "trend.png"
    assert main(["runs", "--run", newest, "--chart", "trend", "-o", str(out)]) == 0  # the run's project: faq
    width, height = png_size(out.read_bytes())
    assert height <= 1600 and width > 600, (width, height)
    svg = tmp_path / "trend.svg"
    assert main(["runs", "--run", newest, "--chart", "trend", "-o", str(svg)]) == 0
    assert "project faq: 6 finished runs" in svg_text(svg)


def test_a_compare_chart_names_both_runs_and_warns_of_different_scorers(tmp_path):
    base, new = stored(), stored(heuristics="jaccard")
    out = tmp_path / "compare.svg"
    assert main(["compare", base, new, "--chart", "compare", "-o", str(out)]) == 0
    text = svg_text(out)
    assert f"run {new}" in text and f"baseline run {base}" in text and "(candidate)" in text
    assert "not comparable: scored by different heuristics (default vs jaccard)" in text
    assert "candidate − baseline (95% CI)" in text


@pytest.mark.parametrize("argv, said", [
    (["runs", "--chart", "means"], "--chart means needs the run"),
    (["runs", "--chart", "trend"], "--chart trend needs --project (or --run RUN_ID"),
    (["runs", "--project", "nobody", "--chart", "trend"], "has no finished run"),
    (["runs", "--run", "nope", "--chart", "means"], "nope"),
])
def test_a_chart_that_cannot_be_drawn_says_why_with_exit_2(argv, said, capsys):
    assert main(argv) == 2
    assert said in capsys.readouterr().err


def test_an_unknown_extension_is_refused_before_anything_is_written(run_id, tmp_path, capsys):
    assert main(["runs", "--run", run_id, "--chart", "means", "-o", str(tmp_path / "means.gif")]) == 2
    assert "a chart is written as .png, .svg or .pdf" in capsys.readouterr().err
    assert not (tmp_path / "means.gif").exists()
