"""The one end-of-run verdict (evaluator/verdict.py): unscored rows are never a 0, and a run that lost
rows, or scored nothing, never ends "ok" (issue 18 A), on the CLI, in the report files and the history."""
import json
from pathlib import Path

import pytest

from clitext import listed_runs
from evaluator.analysis.compare import compare_runs
from evaluator.cli.command import main
from evaluator.store.history import RunStore
from evaluator.report.export import html_report
from evaluator.model import METHOD_BLEND, METHOD_SKIPPED, METHOD_UNSCORED, EvalReport, EvalResult, EvalSample, MetricScore
from evaluator.scoring.verdict import EXIT_CODES, RowCounts, Verdict, decide, verdict

FIXTURES = Path(__file__).parent / "fixtures"
QUESTIONS = [{"sample_id": f"q{i}", "question": f"Question number {i}?",
              "ground_truth": f"Question number {i} is answered in the refunds context."} for i in range(6)]
TARGET = '''
def two_fail(question):
    if question.endswith(("2?", "5?")):
        raise RuntimeError("pipeline exploded")
    return {"answer": question + " is answered in the refunds context.",
            "contexts": ["Refunds: " + question + " is answered in the refunds context."]}


def all_fail(question):
    raise RuntimeError("pipeline down")
'''
RUBRICS = '[politeness]\ncriteria = "The answer is polite."\nfields = ["question", "answer"]\nscale = "1-5"\n'


@pytest.fixture
def files(tmp_path):
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n", encoding="utf-8")
    answered = [dict(q, answer="It is in the refunds context.", contexts=["Refunds: it is in the refunds context."])
                for q in QUESTIONS]
    (tmp_path / "full.jsonl").write_text("\n".join(json.dumps(r) for r in answered) + "\n", encoding="utf-8")
    (tmp_path / "pipe.py").write_text(TARGET, encoding="utf-8")
    (tmp_path / "r.toml").write_text(RUBRICS, encoding="utf-8")
    return tmp_path


def cli(capsys, *args):
    code = main(["evaluate", *map(str, args), "--offline", "-q"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip().splitlines()[-1]


def test_a_target_failing_on_2_of_6_is_not_ok_and_its_rows_are_not_zeros(files, capsys):
    out = files / "r.json"
    code, printed, last = cli(capsys, files / "q.jsonl", "--target", f"{files / 'pipe.py'}:two_fail", "-o", out)
    assert code == EXIT_CODES["target_failed"] == 4
    assert last.startswith("ragmeter: target failed: 4 of 6 scored · 2 target failures")
    assert "pipeline exploded" in last
    data = json.loads(out.read_text())
    overall = [r["overall"] for r in data["samples"]]
    assert overall.count(None) == 2  # the failed rows have no overall, not 0.0
    scored = [v for v in overall if v is not None]
    assert data["overall_mean"] == pytest.approx(sum(scored) / 4, abs=1e-4) and data["overall_mean"] > 0.7
    assert min(data["mean_scores"].values()) <= data["overall_mean"] <= max(data["mean_scores"].values())
    assert data["verdict"]["kind"] == "target_failed" and data["verdict"]["summary"].startswith("4 of 6 scored")
    assert " n=4/6" in printed


def test_every_target_call_failing_is_nothing_scored_never_overall_0(files, capsys):
    code, printed, last = cli(capsys, files / "q.jsonl", "--target", f"{files / 'pipe.py'}:all_fail")
    assert code == EXIT_CODES["nothing_scored"] == 5
    assert last.startswith("ragmeter: nothing scored: 0 of 6 scored · 6 target failures")
    assert "0.000" not in printed.split("overall")[-1].splitlines()[0]
    assert main(["runs"]) == 0
    [row] = listed_runs(capsys.readouterr().out)
    assert row["OVERALL"] == "N/A" and row["ENDING"].startswith("nothing scored: 0 of 6 scored")


def test_a_rubric_only_offline_run_scores_nothing_and_fails(files, capsys):
    code, printed, last = cli(capsys, files / "full.jsonl", "--rubrics", files / "r.toml", "--metrics", "politeness")
    assert code == 5 and last.startswith("ragmeter: nothing scored: 0 of 6 scored")
    assert "Needs a judge" in last
    overall_line = next(line for line in printed.splitlines() if line.strip().startswith("overall"))
    assert "N/A" in overall_line and "0.000" not in overall_line


def test_a_goldens_file_without_answers_is_refused_not_scored_as_zeros(capsys):
    code = main(["evaluate", str(FIXTURES / "deepeval_goldens.csv"), "--offline", "-q", "--no-history"])
    err = capsys.readouterr().err
    assert code == 2 and "deepeval_goldens.csv" in err and "has no answers" in err and "target" in err


@pytest.mark.parametrize("gate", ["overall=0.0", "faithfulness=0.0"])
def test_fail_under_never_passes_on_n_a(files, capsys, gate):
    code, _, _ = cli(capsys, files / "q.jsonl", "--target", f"{files / 'pipe.py'}:all_fail", "--fail-under", gate)
    assert code != 0
    ending = decide(RowCounts(total=3, scored=3), {"overall": None}, thresholds={"overall": 0.0})
    assert ending.kind == "thresholds_missed" and "N/A" in ending.cause


def test_the_history_stores_the_verdict_and_averages_scored_rows_only(files, capsys):
    cli(capsys, files / "q.jsonl", "--target", f"{files / 'pipe.py'}:two_fail")
    [info] = RunStore().list_runs()
    assert info.verdict is not None and info.verdict.kind == "target_failed"
    assert info.verdict.counts == RowCounts(total=6, scored=4, target_failures=2)
    report = RunStore().load_report(info.run_id)
    assert info.overall_mean == report.overall_mean() and info.overall_mean > 0.7


def test_the_html_report_header_says_the_verdict(files, capsys):
    out = files / "r.html"
    cli(capsys, files / "q.jsonl", "--target", f"{files / 'pipe.py'}:two_fail", "-o", out)
    html = out.read_text()
    assert "target failed." in html and "4 of 6 scored · 2 target failures" in html


# -- the verdict over hand-made reports --------------------------------------------------------------
def row(i, **scores):
    sample = EvalSample(f"Q{i}?", "A.", ["C."], sample_id=f"s{i}")
    return EvalResult(sample.sample_id, sample=sample, scores={
        name: MetricScore(name, 0.0 if value is None else value, "why", skipped=value is None,
                          method=METHOD_SKIPPED if value is None else METHOD_BLEND)
        for name, value in scores.items()})


def test_an_unscored_row_has_no_overall_and_is_left_out_of_the_mean():
    report = EvalReport([row(0, faithfulness=0.8), row(1, faithfulness=None)])
    assert report.results[1].overall_score() is None and report.results[1].to_dict()["overall"] is None
    assert report.results[1].overall() == 0.0  # the seed's float keeps its documented meaning
    assert report.overall_mean() == 0.8 and EvalReport([row(1, faithfulness=None)]).overall_mean() is None


def test_an_unusable_judge_reply_is_not_ok_even_under_the_fallback_rate():
    rows = [row(i, faithfulness=0.9) for i in range(20)]
    rows[0].scores["politeness"] = MetricScore("politeness", 0.0, "no score", skipped=True, method=METHOD_UNSCORED)
    ending = verdict(EvalReport(rows), max_fallback_rate=0.5)
    assert ending.kind == "judge_failed" and ending.exit_code == 3 and ending.severity == "error"
    assert ending.counts.unusable_replies == 1


def test_a_verdict_round_trips_through_its_dict():
    ending = verdict(EvalReport([row(0, faithfulness=0.8), row(1, faithfulness=None)]))
    assert ending.kind == "ok" and ending.counts.summary() == "1 of 2 scored"
    assert Verdict.from_dict(json.loads(json.dumps(ending.to_dict()))) == ending


def test_a_failed_history_write_is_never_ok():
    ending = verdict(EvalReport([row(0, faithfulness=0.8)]), history_error="Some rows could not be saved")
    assert ending.kind == "history_failed" and ending.exit_code == 6 and not ending.ok


# -- compare -------------------------------------------------------------------------------------------
def test_compare_flags_lost_answers_as_a_regression(files, capsys):
    cli(capsys, files / "full.jsonl")
    cli(capsys, files / "q.jsonl", "--target", f"{files / 'pipe.py'}:two_fail")
    store = RunStore()
    b, a = store.list_runs()  # newest first
    cmp = compare_runs(store, a.run_id, b.run_id)
    assert sorted(c.sample_id for c in cmp.lost) == ["q2", "q5"]
    assert all(c.a == "scored" and c.b.startswith("target failed") for c in cmp.lost)
    assert cmp.regressions[0] == "2 of 6 rows scored in A are missing or unscored in B"
    overall = cmp.metrics[-1]
    assert overall.metric == "overall" and overall.n_pairs == 4 and (overall.scored_a, overall.scored_b) == (6, 4)
    assert overall.all_a is not None and overall.all_b is not None
