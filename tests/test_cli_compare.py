"""`ragmeter compare`: two stored runs, one with an injected regression; the markdown comment; the exit codes;
dataset versions recorded with each run and compared on shared sample ids."""
from __future__ import annotations

import pytest

from evaluator import EvalReport, EvalSample, Run, RunConfig, RunStore
from evaluator.analysis.compare import compare_runs
from evaluator.analysis.compare_text import md
from evaluator.analysis.stats import paired_permutation_p
from evaluator.cli import main
from evaluator.io.versions import VERSION_KEY, dataset_version
from clitext import listed_runs

METRICS = ["faithfulness", "ndcg@3", "mrr"]


def samples(ranked_well: bool, n: int = 12, extra: str = "") -> list:
    rows = []
    for i in range(n):
        ids = [f"doc-{i}", "other-a", "other-b"] if ranked_well else ["other-a", "other-b", "other-c", f"doc-{i}"]
        rows.append(EvalSample(f"What does policy {i} say?{extra if i == 0 else ''}", f"Policy {i} says yes.",
                               [f"Policy {i}: it says yes."], sample_id=f"q-{i}", expected_docs=[f"doc-{i}"],
                               retrieval_ids=ids))
    return rows


def stored_run(rows: list, project: str = "faq") -> str:
    run = Run.new(RunConfig(metrics=METRICS), rows, dataset_name="faq.jsonl", store=RunStore(), project=project)
    run.start().join()
    assert run.status == "finished", run.error
    return run.run_id


@pytest.fixture
def base():
    return stored_run(samples(ranked_well=True))


def test_an_injected_regression_exits_1_with_the_flag_and_prints_the_markdown_table(base, capsys):
    worse = stored_run(samples(ranked_well=False))
    assert main(["compare", base, worse, "--format", "markdown", "--fail-on-regression"]) == 1
    out, err = capsys.readouterr()
    assert "| metric | base | new | Δ (new − base) | 95% CI | p | decision |" in out
    assert "| ndcg@3 | 1.000 | 0.000 | -1.000 |" in out and ":red_circle: worse" in out
    assert "<details><summary>" in out and "q\\-0" in out  # the worst samples, their ids escaped
    assert "ndcg@3 fell 1.000 → 0.000" in err and "exit 1" in err
    # Without the flag the same comparison is printed and the exit is 0.
    assert main(["compare", base, worse, "--format", "markdown"]) == 0


def test_no_regression_exits_0_even_with_the_flag(base, capsys):
    same = stored_run(samples(ranked_well=True))
    assert main(["compare", base, same, "--fail-on-regression"]) == 0
    out = capsys.readouterr().out
    assert "no clear change" in out and "worse" not in out and "better" not in out
    assert "Both runs scored test set version" in out
    assert main(["runs"]) == 0
    version = RunStore().get_run(base).settings[VERSION_KEY]
    assert [row["DATA"] for row in listed_runs(capsys.readouterr().out)] == [version, version]


def test_latest_with_a_project_picks_the_newest_finished_runs(base, capsys):
    newer = stored_run(samples(ranked_well=False))
    assert main(["compare", "latest", newer, "--project", "faq", "--format", "markdown",
                 "--dashboard-url", "https://dash.example/"]) == 0
    out = capsys.readouterr().out
    assert f"(https://dash.example/report?run={base})" in out
    assert f"(https://dash.example/history?compare={base},{newer})" in out
    assert main(["compare", "latest", "latest", "--project", "faq"]) == 0
    assert f"base {base}" in capsys.readouterr().out


@pytest.mark.parametrize("argv, problem", [
    (["compare", "nope", "nope2"], "nope"),
    (["compare", "latest", "x"], "'latest' needs --project"),
])
def test_an_unknown_run_or_missing_project_is_a_usage_error(argv, problem, capsys):
    assert main(argv) == 2
    assert problem in capsys.readouterr().err


def test_an_output_that_cannot_be_written_is_a_usage_error_naming_it(base, tmp_path, capsys):
    (tmp_path / "taken").mkdir()
    assert main(["compare", base, base, "-o", str(tmp_path / "taken")]) == 2
    assert "taken: the comparison cannot be written there" in capsys.readouterr().err
    assert main(["compare", base, base, "-o", str(tmp_path / "comment.md"), "--format", "markdown"]) == 0
    assert "| metric | base | new |" in (tmp_path / "comment.md").read_text(encoding="utf-8")


def test_runs_record_their_test_set_version_and_compare_says_when_versions_differ(base):
    changed = samples(ranked_well=True, n=14, extra=" (reworded)")  # q-0 reworded, q-12 and q-13 added
    other = stored_run(changed)
    store = RunStore()
    assert store.get_run(base).settings[VERSION_KEY] == dataset_version(samples(ranked_well=True))
    cmp = compare_runs(store, base, other)
    assert cmp.versions_differ and cmp.n_paired == 12 and cmp.only_b == 2
    note = cmp.version_note()
    assert "different versions" in note and "(12 rows)" in note and "(14 rows)" in note
    assert "12 sample ids both share" in note


def test_runs_that_share_no_sample_id_fail_the_gate(base, capsys):
    other = stored_run([EvalSample("Unrelated?", "Yes.", ["Yes."], sample_id="x-1")])
    assert main(["compare", base, other, "--fail-on-regression"]) == 1
    assert "share no sample id" in capsys.readouterr().err


def test_the_version_ignores_row_order_and_the_pipelines_outputs():
    rows = samples(ranked_well=True)
    moved = list(reversed(samples(ranked_well=False)))  # other retrieval, same test set, shuffled
    for s in moved:
        s.answer = "something else"
    assert dataset_version(rows) == dataset_version(moved)
    rows[3].ground_truth = "a new reference"
    assert dataset_version(rows) != dataset_version(moved)


@pytest.mark.parametrize("deltas, p", [
    ([], None),
    ([0.0, 0.0], 1.0),
    ([-1.0] * 5, 2 / 32),  # exact: only the all-minus and all-plus patterns are as extreme
    ([0.5, -0.5], 1.0),
    ([-0.2, -0.1, 0.3], 1.0),
])
def test_the_paired_permutation_test_on_hand_computed_cases(deltas, p):
    assert paired_permutation_p(deltas) == (None if p is None else pytest.approx(p))


def test_the_permutation_test_sampled_and_approximate_paths_agree_on_a_clear_drop():
    drop = [-0.1 - 0.01 * (i % 5) for i in range(40)] + [0.05] * 5
    sampled = paired_permutation_p(drop, n_resamples=2000)
    approx = paired_permutation_p(drop, exact_limit=1)
    assert sampled is not None and approx is not None and sampled < 0.001 and approx < 0.001


def test_user_text_cannot_become_markdown():
    # Issue 42: a URL sits in a code span (GitHub autolinks a bare http://x, escaped brackets or not).
    assert md("**bold** <img src=x> | [link](http://x)") == \
        "\\*\\*bold\\*\\* &lt;img src=x\\> \\| \\[link\\]\\(`http://x`\\)"


def test_a_run_scored_by_frames_records_the_same_version_when_it_finishes():
    from evaluator.engines.partition import score_frame
    from evaluator.engines.ray import history_rows, samples_frame

    rows = samples(ranked_well=True)
    config = RunConfig(metrics=METRICS)
    run = Run.new(config, rows, dataset_name="faq.jsonl", store=RunStore())

    def by_frames(todo, *, on_progress, on_result, stop):  # rows arrive in batches, as Ray streams them
        frame = samples_frame(todo)
        for part in (frame.iloc[:5], frame.iloc[5:]):
            for j, result in history_rows(score_frame(part.reset_index(drop=True), config)):
                result.sample = todo[j]
                on_result(j, result)
                on_progress(j + 1, len(todo), result)
        return EvalReport()

    run.engine = by_frames
    run.start().join()
    settings = RunStore().get_run(run.run_id).settings
    assert settings[VERSION_KEY] == dataset_version(rows) and settings["dataset_rows"] == 12

@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "html"])
def test_every_format_folds_the_sequential_test_into_one_decision(base, fmt, capsys):
    """The History page's sequential test is in `ragmeter compare` too: in JSON the same numbers (runs/ab.py's,
    turned to candidate − baseline) in the decision's words; in every format a footnote where it differs."""
    import json

    from evaluator.runs.ab import ab_from_runs

    worse = stored_run(samples(ranked_well=False))
    assert main(["compare", base, worse, "--format", fmt]) == 0
    out = capsys.readouterr().out
    expected = ab_from_runs(RunStore(), base, worse)["ndcg@3"]
    words = {"A": "worse", "B": "better"}.get(expected.decision, "no clear change")
    if fmt == "json":
        by_metric = {m["metric"]: m for m in json.loads(out)["metrics"]}
        seq = by_metric["ndcg@3"]["sequential"]
        assert seq["decision"] == expected.decision and seq["verdict"] == words
        assert seq["delta"] == round(-expected.difference, 4) < 0
        assert seq["interval"] == [round(-expected.interval[1], 4), round(-expected.interval[0], 4)]
        assert seq["rows_used"] == expected.samples_used and seq["rows_total"] == 12
        assert by_metric["overall"]["sequential"] is None  # the sequential test is per metric
        assert by_metric["ndcg@3"]["decision"] == "worse"
        assert (by_metric["ndcg@3"]["footnote"] is None) == (words == "worse")
    else:
        footnote = f"reads {words} after {expected.samples_used} of 12 rows"
        assert (footnote in out) == (words != "worse")  # a footnote only where the two tests differ
        assert "sequential test" not in out.split("ndcg@3")[0]  # no second column of decisions


def test_runs_of_different_datasets_say_why_there_is_no_sequential_test(base, capsys):
    import json

    run = Run.new(RunConfig(metrics=METRICS), samples(ranked_well=True), dataset_name="other.jsonl",
                  store=RunStore(), project="faq")
    run.start().join()
    assert main(["compare", base, run.run_id, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert all(m["sequential"] is None for m in doc["metrics"])
    assert doc["sequential_note"].startswith("No sequential test: it pairs the rows of one dataset")
