"""`ragmeter compare` cannot mislead: it names the baseline and the candidate in every format, and when the
runs were scored differently it says so (text, Markdown, JSON) and will not gate on them unless allowed;
user text in the Markdown comment cannot mention, autolink, reference an issue or break the table,
checked by rendering the comment and applying GitHub's own filters to what renders."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from evaluator import EvalSample, Run, RunConfig, RunStore
from evaluator.analysis.compare import compare_runs
from evaluator.analysis.compare_text import ZWJ, md, to_markdown
from evaluator.analysis.provenance import scorer_differences
from evaluator.cli import main

METRICS = ["faithfulness", "answer_relevancy"]


def rows(n: int = 8, sample_id=lambda i: f"q-{i}", question=lambda i: f"What does policy {i} say?") -> list:
    return [EvalSample(question(i), f"Policy {i} says yes.", [f"Policy {i}: it says yes."], sample_id=sample_id(i))
            for i in range(n)]


def stored(samples: list, **config) -> str:
    run = Run.new(RunConfig(metrics=METRICS, **config), samples, dataset_name="faq.jsonl", store=RunStore(),
                  project="faq")
    run.start().join()
    assert run.status == "finished", run.error
    return run.run_id


@pytest.fixture
def two_scorers():
    return stored(rows()), stored(rows(), heuristics="jaccard")


SAMPLE = str(Path(__file__).resolve().parents[1] / "sample_data" / "sample.jsonl")
VERDICT_WORD = re.compile(r"(?i)\b(better|worse|regress\w*|improve\w*)\b")


def evaluated(*flags: str) -> str:
    """The id of a run `ragmeter evaluate sample_data/sample.jsonl --offline FLAGS` saves (the test's history)."""
    before = {r.run_id for r in RunStore().list_runs()}
    assert main(["evaluate", SAMPLE, "--offline", "-q", *flags]) == 0
    [made] = [r.run_id for r in RunStore().list_runs() if r.run_id not in before]
    return made


def compared(base: str, new: str, fmt: str, capsys, *flags: str) -> str:
    assert main(["compare", base, new, "--format", fmt, *flags]) == 0
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def sample_runs(tmp_path_factory):
    """A default-heuristics run, a jaccard run and a second default run of the sample data, in one history."""
    import os

    history = str(tmp_path_factory.mktemp("sample") / "history.sqlite3")
    old = os.environ.get("RAGMETER_HISTORY")
    os.environ["RAGMETER_HISTORY"] = history
    try:
        yield history, evaluated(), evaluated("--heuristics", "jaccard"), evaluated("--name", "default again")
    finally:
        os.environ.pop("RAGMETER_HISTORY") if old is None else os.environ.update(RAGMETER_HISTORY=old)


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "html"])
def test_default_and_jaccard_runs_are_not_comparable_in_every_format(sample_runs, fmt, capsys, monkeypatch):
    history, default, jaccard, _ = sample_runs
    monkeypatch.setenv("RAGMETER_HISTORY", history)
    out = compared(default, jaccard, fmt, capsys)
    said = "not comparable: scored by different heuristics (default vs jaccard)"
    if fmt == "json":
        doc = json.loads(out)
        assert doc["comparable"] is False and doc["not_comparable_reason"] == said.split(": ", 1)[1]
        assert {m["decision"] for m in doc["metrics"]} == {"not comparable"}
        assert all(m["sequential"] is None and m["footnote"] is None for m in doc["metrics"])
        assert doc["warning"].startswith(said)
    elif fmt == "text":
        assert out.splitlines()[0].startswith(said)  # first, before any number
    elif fmt == "markdown":
        assert said.replace("(", "\\(").replace(")", "\\)") in out.split("|")[0]  # above the table
    else:
        assert said in out.split("<table>")[0]
    assert not VERDICT_WORD.search(out), VERDICT_WORD.search(out)


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "html"])
def test_two_runs_of_one_scorer_still_get_verdicts(sample_runs, fmt, capsys, monkeypatch):
    history, default, _, again = sample_runs
    monkeypatch.setenv("RAGMETER_HISTORY", history)
    out = compared(default, again, fmt, capsys)
    assert "not comparable" not in out and "no clear change" in out  # the same answers: nothing moved
    if fmt == "json":
        assert json.loads(out)["comparable"] is True


def test_allowed_verdicts_across_scorers_are_marked_and_the_gate_judges_them(sample_runs, capsys, monkeypatch):
    history, default, jaccard, _ = sample_runs
    monkeypatch.setenv("RAGMETER_HISTORY", history)
    assert main(["compare", default, jaccard, "--fail-on-regression"]) == 2  # a gate that cannot decide fails
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("ragmeter: not comparable: scored by different heuristics (default vs jaccard); "
                              "--fail-on-regression cannot judge these runs (exit 2)")
    assert main(["compare", default, jaccard, "--fail-on-regression", "--allow-different-scorers"]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("compared across scorers (--allow-different-scorers): scored by different heuristics")
    assert "worse (scorers differ)" in out and "regression: faithfulness fell" in err


def test_runs_lists_each_runs_name_and_scorer(sample_runs, capsys, monkeypatch):
    from clitext import listed_runs

    history, default, jaccard, again = sample_runs
    monkeypatch.setenv("RAGMETER_HISTORY", history)
    assert main(["runs"]) == 0
    rows = {r["RUN"]: r for r in listed_runs(capsys.readouterr().out)}
    assert rows[jaccard]["SCORER"] == "offline heuristics (jaccard)"
    assert rows[default]["SCORER"] == rows[again]["SCORER"] == "offline heuristics (default)"
    assert rows[again]["NAME"] == "default again" and rows[default]["PROJECT"] == "sample.jsonl"
    assert rows[jaccard]["NAME"].startswith("sample.jsonl · offline heuristics (jaccard) · 20")


def test_the_same_scorers_print_no_warning(capsys):
    base, new = stored(rows()), stored(rows())
    assert main(["compare", base, new, "--fail-on-regression", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["scorers_match"] is True and doc["scorer_differences"] == [] and doc["warning"] is None


@pytest.mark.parametrize("a, b, said", [
    ({"judge": "offline"}, {"judge": "openai"}, ["judge: offline (baseline) vs openai (candidate)"]),
    ({"model": "gpt-4o-mini"}, {"model": "gpt-4o"}, ["judge model: gpt-4o-mini (baseline) vs gpt-4o (candidate)"]),
    ({"base_url": "https://a.example/v1?key=SECRET"}, {"base_url": "https://b.example/v1"},
     ["judge endpoint: a.example (baseline) vs b.example (candidate)"]),  # the host only: never a query
    ({"language": "auto"}, {"language": "ar"}, ["language: auto (baseline) vs ar (candidate)"]),
    ({"judge": "openai", "temperature": 0.0, "repeats": 1}, {"judge": "openai", "temperature": 0.7, "repeats": 3},
     ["judge temperature: 0.0 (baseline) vs 0.7 (candidate)", "judge repeats: 1 (baseline) vs 3 (candidate)"]),
    ({"judge": "openai", "judge_mode": "separate"}, {"judge": "openai", "judge_mode": "grouped"},
     ["judge mode: separate (baseline) vs grouped (candidate)"]),
    # No judge on either side: how a judge would have been asked means nothing
    ({"judge": "offline", "judge_mode": "separate", "temperature": 0.0}, {"judge": "offline", "judge_mode": "auto"}, []),
    ({"heuristics": "ragmeter"}, {"heuristics": ["ragmeter"]}, []),  # the same set, written two ways
    ({"model": "x"}, {}, []),  # a run saved before the setting was recorded: unknown, not different
])
def test_each_scorer_setting_is_named_when_it_differs(a, b, said):
    assert [d.sentence() for d in scorer_differences(a, b)] == said


def test_a_different_dataset_version_is_warned_but_still_gated_on_shared_ids(capsys):
    base = stored(rows())
    new = stored(rows(n=10))  # two rows added: another version of the test set
    assert main(["compare", base, new, "--fail-on-regression"]) == 0  # compared on the 8 shared ids
    out = capsys.readouterr().out
    assert "dataset version:" in out and "compared on the sample ids both share" in out


# --- Markdown that stays data on GitHub -------------------------------------------------------------------
# GitHub's mention filter (html-pipeline MentionFilter) and issue references, applied to rendered text outside
# code and links; GFM's extended autolinks (www., scheme://, e-mail) likewise.
MENTION = re.compile(r"(?:^|[^A-Za-z0-9_])@[a-z0-9][a-z0-9-]*(?:/[a-z0-9][a-z0-9-]*)?", re.I)
ISSUE = re.compile(r"(?:^|[^A-Za-z0-9_])#\d+")
AUTOLINK = re.compile(r"(?i)(?:\b(?:https?|ftp)://|\bwww\.)[^\s<]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


class _Text(HTMLParser):
    """The rendered comment's text outside <code>, <a>, and every tag it contains."""

    def __init__(self) -> None:
        super().__init__()
        self.text, self.tags, self._inside = [], [], 0

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._inside += tag in ("code", "a")

    def handle_endtag(self, tag):
        self._inside -= tag in ("code", "a")

    def handle_data(self, data):
        if not self._inside:
            self.text.append(data)


def rendered(markdown: str) -> _Text:
    parser = _Text()
    parser.feed(MarkdownIt("commonmark").enable("table").render(markdown))
    return parser


HOSTILE = ["@everyone please look", "ping @org/team now", "see http://evil.example/x?a=1|b", "www.evil.com",
           "mail bob@example.com", "fixes #12", "a | b | c", "**x** <img src=x onerror=alert(1)>",
           "[click](https://evil.example)", "line one\nline two | and", "`tick` and ``two``", "ndcg@3 é@user"]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_cell_of_user_text_renders_inert_under_githubs_rules(hostile):
    table = "| sample | why |\n|---|---|\n" + f"| {md(hostile)} | {md(hostile)} |\n"
    page = rendered(table)
    text = "".join(page.text)
    assert "a" not in page.tags and "img" not in page.tags  # no link, no HTML
    assert page.tags.count("td") == 2  # the row still has exactly its two cells
    assert not MENTION.search(text) and not ISSUE.search(text) and not AUTOLINK.search(text), text
    # What the reader sees still says what was written (the joiner is invisible).
    shown = "".join(rendered(md(hostile)).text).replace(ZWJ, "")
    assert all(word in shown + hostile for word in hostile.split())


def test_metric_names_with_an_at_sign_are_left_as_they_read():
    assert md("ndcg@3") == "ndcg@3" and md("@everyone") == "@" + ZWJ + "everyone"
    assert md("see www.evil.com.") == "see `www.evil.com`."  # the full stop stays outside the code span


def test_hostile_sample_ids_and_reasons_stay_inert_in_the_whole_comment():
    bad = lambda i: f"@everyone {i} http://evil.example/{i} | #4{i}"  # noqa: E731
    base = stored(rows(sample_id=bad))
    new = stored(rows(sample_id=bad, question=lambda i: f"What does policy {i} say? @org/team www.x.com"),
                 heuristics="jaccard")
    comment = to_markdown(compare_runs(RunStore(), base, new), dashboard_url="https://dash.example")
    page = rendered(comment)
    text = "".join(page.text)
    assert not MENTION.search(text) and not ISSUE.search(text) and not AUTOLINK.search(text)
    links = re.findall(r'href="([^"]+)"', MarkdownIt("commonmark").enable("table").render(comment))
    assert links and all(link.startswith("https://dash.example/") for link in links)  # only our own links


def test_a_cli_run_records_the_git_commit_and_prompt_version_and_compare_lists_them(tmp_path, monkeypatch, capsys):
    import subprocess

    data = tmp_path / "faq.jsonl"
    data.write_text(json.dumps({"question": "Q?", "answer": "A yes.", "contexts": ["A yes."], "sample_id": "a"}) + "\n")
    monkeypatch.chdir(tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "faq.jsonl"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    assert main(["evaluate", str(data), "--prompt-version", "v1", "-q"]) == 0
    data.write_text(data.read_text() + "\n")  # an uncommitted change: the run says so
    assert main(["evaluate", str(data), "--prompt-version", "v2", "-q"]) == 0
    base, new = [r for r in reversed(RunStore().list_runs())]
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert base.settings["git_commit"] == head and base.settings["git_dirty"] is False
    assert new.settings["git_dirty"] is True and new.settings["prompt_version"] == "v2"
    capsys.readouterr()
    assert main(["compare", base.run_id, new.run_id, "--format", "json"]) == 0
    changes = json.loads(capsys.readouterr().out)["pipeline_changes"]
    assert {"what": "prompt version", "baseline": "v1", "candidate": "v2", "refuses_the_gate": False} in changes
    assert any(c["what"] == "uncommitted changes" for c in changes)


def test_the_html_comparison_names_both_runs_warns_and_draws_the_chart_with_its_caption(tmp_path):
    base = stored(rows(sample_id=lambda i: f"<img src=x onerror=alert({i})>"))
    new = stored(rows(sample_id=lambda i: f"<img src=x onerror=alert({i})>"), heuristics="jaccard")
    out = tmp_path / "compare.html"
    assert main(["compare", base, new, "--format", "html", "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert f"<strong>Baseline</strong> (base, A): faq.jsonl · offline heuristics (default) · 20" in page
    assert f" · {base}<br>" in page and f"<strong>Candidate</strong> (new, B): " in page and page.count(new) >= 1
    assert "not comparable: scored by different heuristics" in page
    assert "heuristic set: default (baseline) vs jaccard (candidate)" in page
    assert "<svg" in page and "candidate − baseline (95% CI)" in page and f"baseline run {base}" in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(0)&gt;" in page
    assert "script-src" not in page and "default-src 'none'" in page  # no script may run
