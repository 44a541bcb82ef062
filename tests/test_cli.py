import json
import subprocess
import sys
from pathlib import Path

import pytest

from clitext import help_sections, listed_runs, usage_error
from evaluator.cli.command import main

ROWS = [
    {"question": "How long is the warranty?", "answer": "The warranty lasts two years.",
     "contexts": ["Warranty terms: every device has a two year warranty."],
     "ground_truth": "Two years.", "sample_id": "w1"},
    {"question": "Do you ship abroad?", "answer": "Yes, we ship to 40 countries.",
     "contexts": ["Shipping FAQ: we ship to 40 countries worldwide."], "sample_id": "s1"},
    {"question": "ما هي مدة الضمان؟", "answer": "مدة الضمان سنتان.",
     "contexts": ["شروط الضمان: لكل جهاز ضمان لمدة سنتين."], "ground_truth": "سنتان", "sample_id": "a1"},
]


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "history.sqlite3"))
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in ROWS) + "\n", encoding="utf-8")
    return path


def test_offline_run_prints_report_and_writes_json(data, tmp_path, capsys):
    out = tmp_path / "out" / "report.json"
    assert main(["evaluate", str(data), "--offline", "-q", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "faithfulness" in printed and "overall" in printed
    report = json.loads(out.read_text())
    assert report["num_samples"] == 3
    assert [s["sample_id"] for s in report["samples"]] == ["w1", "s1", "a1"]
    assert report["samples"][1]["context_recall"] is None  # no reference: skipped, not a number


def test_csv_output(data, tmp_path):
    out = tmp_path / "r.csv"
    assert main(["evaluate", str(data), "-q", "-o", str(out)]) == 0
    header = out.read_text(encoding="utf-8").splitlines()[0]
    assert "faithfulness" in header and "sample_id" in header


def test_html_output_is_self_contained(data, tmp_path):
    out = tmp_path / "r.html"
    assert main(["evaluate", str(data), "-q", "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "<html" in html.lower() and "How long is the warranty?" in html


def test_fail_under_missed_exits_one_and_names_metric(data, capsys):
    code = main(["evaluate", str(data), "-q", "--fail-under", "faithfulness=1", "--fail-under", "overall=0"])
    assert code == 1
    err = capsys.readouterr().err
    assert "faithfulness" in err and "overall" not in err


def test_fail_under_met_exits_zero(data):
    assert main(["evaluate", str(data), "-q", "--fail-under", "answer_relevancy=0.0"]) == 0


AB = ["--target", "http://127.0.0.1:9/a", "--target-b", "http://127.0.0.1:9/b", "--offline"]  # `ab`'s two pipelines


@pytest.mark.parametrize("command, args, needle", [
    ("evaluate", ["-q", "--fail-under", "bogus=0.5"], "unknown metric"),
    ("evaluate", ["-q", "--fail-under", "faithfulness"], "METRIC=VALUE"),
    ("evaluate", ["-q", "--fail-under", "faithfulness=high"], "not a number"),
    ("evaluate", ["-q", "--base-url", "http://127.0.0.1:9/v1"], "--model"),
    ("ab", [*AB, "--alpha", "1.5"], "--alpha must be between 0 and 1"),
    ("ab", [*AB, "--tie", "-0.1"], "--tie must be"),
    ("ab", [*AB, "--max-samples", "0"], "--max-samples must be at least 1"),
    ("ab", [*AB, "--metric", "nonsense"], "--metric nonsense"),
])
def test_usage_errors_exit_two_with_one_line(data, capsys, command, args, needle):
    assert needle in usage_error(capsys, [command, str(data), *args])


def test_bad_dataset_exits_two_naming_the_location(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "h.sqlite3"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(ROWS[0]) + "\n{not json\n", encoding="utf-8")
    assert main(["evaluate", str(bad), "-q"]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl" in err and "line 2" in err and "Traceback" not in err


def test_missing_file_exits_two(tmp_path, capsys):
    assert main(["evaluate", str(tmp_path / "nope.csv"), "-q", "--no-history"]) == 2
    assert "nope.csv" in capsys.readouterr().err


def test_dry_run_estimates_without_calling(data, capsys):
    # Port 9 is closed: any real call would fail; a dry run must not try.
    code = main(["evaluate", str(data), "--dry-run", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                 "--price-in", "1", "--price-out", "2"])
    assert code == 0
    est = json.loads(capsys.readouterr().out)
    # auto, estimated without asking the server: the context metrics in one call (3 + 2 + 3 calls)
    assert est["samples"] == 3 and est["calls"] == 3 + 2 + 3
    assert est["judge_mode"] == "grouped"  # and it says so
    assert est["prompt_tokens"] > 300 and est["cost"] > 0


def test_runs_are_saved_and_listed_under_a_header(data, tmp_path, capsys, monkeypatch):
    assert main(["evaluate", str(data), "-q"]) == 0
    spaced = tmp_path / "faq set.jsonl"  # a name with a space stays in its column
    spaced.write_text(data.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["evaluate", str(spaced), "-q", "--project", "support bot"]) == 0
    capsys.readouterr()
    assert main(["runs"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["RUN", "CREATED", "STATUS", "ROWS", "OVERALL", "NAME", "SCORER", "PROJECT",
                                           "DATASET", "DATA", "OWNER", "ENDING"]
    rows = {r["DATASET"]: r for r in listed_runs(out)}
    assert set(rows) == {"data.jsonl", "faq set.jsonl"}
    assert rows["faq set.jsonl"]["PROJECT"] == "support bot" and rows["data.jsonl"]["PROJECT"] == "data.jsonl"
    for row in rows.values():
        assert (row["STATUS"], row["ROWS"], row["ENDING"]) == ("finished", "3/3", "ok")
        assert 0 < float(row["OVERALL"]) <= 1
        assert row["SCORER"] == "offline heuristics (default)"
        assert row["NAME"].startswith(row["DATASET"] + " · offline heuristics (default) · 20")  # the default name


def test_runs_with_no_runs_prints_no_header(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "empty.sqlite3"))
    assert main(["runs"]) == 0
    assert capsys.readouterr().out.strip() == "No runs saved yet."


def test_evaluate_help_groups_every_flag(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as done:
        main(["evaluate", "--help"])
    assert done.value.code == 0
    sections = help_sections(capsys.readouterr().out)
    assert sections.pop("options") == ["-h"]  # every other flag sits in a named group
    assert list(sections) == ["data", "target", "judge", "metrics", "output", "history", "scale"]
    grouped = [flag for flags in sections.values() for flag in flags]
    assert len(grouped) == len(set(grouped)) >= 45
    expected = {"data": "data", "--mapping": "data", "--target-workers": "target", "--model": "judge",
                "--dry-run": "judge", "--rubrics": "metrics", "--fail-under": "output", "--output": "output",
                "--resume": "history", "--rescore": "history", "--engine": "scale", "--batch": "scale"}
    for flag, group in expected.items():
        assert flag in sections[group], (flag, group)


def test_evaluate_flags_parse_the_same_inside_their_groups():
    from evaluator.cli.args import build_parser

    args = build_parser().parse_args(["evaluate", "d.jsonl", "--model", "m", "--engine", "ray", "-o", "r.html",
                                      "--target", "http://127.0.0.1:1/ask", "--fail-under", "overall=0.5"])
    assert (args.data, args.model, args.offline, args.engine, args.output, args.target, args.fail_under) == (
        "d.jsonl", "m", False, "ray", "r.html", "http://127.0.0.1:1/ask", ["overall=0.5"])
    with pytest.raises(SystemExit):  # --offline and --model still exclude each other inside the judge group
        build_parser().parse_args(["evaluate", "d.jsonl", "--offline", "--model", "m"])


def test_top_level_help_names_every_format_the_readers_accept(capsys):
    from evaluator.io.filetypes import readable_formats

    with pytest.raises(SystemExit):
        main(["--help"])
    reads = capsys.readouterr().out.partition("ragmeter reads:")[2]
    words = set(reads.replace(",", " ").split())
    for suffix in {*readable_formats(), ".toml"}:  # every type the one table says ragmeter reads
        assert suffix in words, suffix
    for kind in ("datasets", "conversations", "documents", "labels", "rubrics", "save_to_disk", "postgresql://",
                 "LangSmith", "promptfoo", "OTLP/JSON"):
        assert kind in reads, kind


@pytest.mark.slow
def test_module_entry_point(data):
    proc = subprocess.run([sys.executable, "-m", "evaluator", "evaluate", str(data), "-q", "--no-history"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "overall" in proc.stdout


def test_real_judge_run_reports_usage_and_cached_rerun_makes_no_calls(data, tmp_path, capsys):
    from openai_server import ChatServer

    args = ["evaluate", str(data), "-q", "--model", "judge", "--cache", str(tmp_path / "cache.sqlite3")]
    with ChatServer() as srv:
        assert main([*args, "--base-url", srv.base_url]) == 0
        first_calls = len(srv.chat_requests)
        out = capsys.readouterr().out
        assert first_calls == 3 + 2 + 3  # a server not known to reuse a prefix: the context metrics in one call
        assert f"judge: {first_calls} calls, 0 cache hits" in out
        assert main([*args, "--base-url", srv.base_url, "-o", str(tmp_path / "again.json")]) == 0
        assert len(srv.chat_requests) == first_calls  # every reply came from the cache
        assert f"0 calls, {first_calls} cache hits" in capsys.readouterr().out
    again = json.loads((tmp_path / "again.json").read_text())
    assert all(s["faithfulness"] is not None for s in again["samples"])


def test_judge_failures_are_announced(data, capsys, judge_clock):
    from openai_server import ChatServer, error

    with ChatServer(default=error(500, "boom")) as srv:
        code = main(["evaluate", str(data), "-q", "--no-cache", "--model", "judge", "--base-url", srv.base_url,
                     "--max-workers", "1"])
        sent = len(srv.chat_requests)
    assert code == 3  # every judged score fell back: far above --max-fallback-rate 0.1
    assert sent == 8 * 4  # each of the 8 judge calls (13 judged scores) was tried once and retried three times
    assert len(judge_clock.slept) == 8 * 3 and 3.5 <= sum(judge_clock.slept) / 8 <= 3.5 * 1.1  # 0.5+1+2 s each, jittered
    captured = capsys.readouterr()
    assert "fell back to the heuristic" in captured.out and "faithfulness: 3/3" in captured.out
    assert captured.err.splitlines()[-1] == ("ragmeter: judge failed: 13/13 judged scores (100%) fell back to the "
                                             "heuristic (HTTP 500), above --max-fallback-rate 0.1")


def test_labels_prints_agreement_with_human_columns(tmp_path, capsys):
    rows = [dict(ROWS[0], human_faithfulness=1), dict(ROWS[1], human_faithfulness=1),
            {"question": "Do you ship abroad?", "answer": "Our CEO was born in 1961 on Mars.",
             "contexts": ["Shipping FAQ: we ship to 40 countries worldwide."], "human_faithfulness": 0}]
    path = tmp_path / "labelled.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert main(["evaluate", str(path), "-q", "--no-history", "--labels"]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("faithfulness") and "binary" in l)
    assert line.split()[1] == "3" and float(line.split()[3]) == 1.0  # n=3, AUROC 1.0


def test_labels_without_label_columns_says_so(data, capsys):
    assert main(["evaluate", str(data), "-q", "--no-history", "--labels"]) == 0
    assert "No human_<metric> label columns" in capsys.readouterr().out


@pytest.mark.slow
def test_ctrl_c_marks_the_run_stopped_and_resumable(data, tmp_path):
    """Interrupting the CLI keeps every finished row and leaves a run that --resume completes."""
    import os
    import signal
    import time

    from openai_server import ChatServer

    from evaluator.store.history import RunStore

    history = tmp_path / "history.sqlite3"
    env = {**os.environ, "RAGMETER_HISTORY": str(history), "OPENAI_API_KEY": "sk-test"}
    with ChatServer(latency=0.3) as srv:
        cmd = [sys.executable, "-m", "evaluator", "evaluate", str(data), "--model", "judge", "--no-cache",
               "--base-url", srv.base_url, "--max-workers", "1"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        deadline = time.monotonic() + 60
        while len(srv.chat_requests) < 2:
            assert time.monotonic() < deadline and proc.poll() is None, "the run did not start"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "stopping" in err and "resume with: ragmeter evaluate --resume" in err.splitlines()[-1]
    (info,) = RunStore(history).list_runs()
    assert info.status == "stopped" and info.n_done < info.n_samples
    assert main(["evaluate", "--resume", info.run_id, "--offline", "-q"]) == 0
    assert RunStore(history).get_run(info.run_id).status == "finished"


def test_resume_keeps_the_runs_heuristic_set(data, tmp_path, capsys):
    from evaluator.store.history import RunStore

    assert main(["evaluate", str(data), "-q", "--heuristics", "jaccard", "-o", str(tmp_path / "a.json")]) == 0
    (info,) = RunStore(tmp_path / "history.sqlite3").list_runs()
    assert info.settings["heuristics"] == "jaccard"
    store = RunStore(tmp_path / "history.sqlite3")
    with store._connect() as db:  # forget the last row, as if the run had been interrupted before it
        db.execute("DELETE FROM results WHERE run_id = ? AND idx = 2", (info.run_id,))
    store.finish_run(info.run_id, status="stopped")
    assert main(["evaluate", "--resume", info.run_id, "-q", "-o", str(tmp_path / "b.json")]) == 0
    first, resumed = (json.loads((tmp_path / n).read_text()) for n in ("a.json", "b.json"))
    assert [s["overall"] for s in resumed["samples"]] == [s["overall"] for s in first["samples"]]


def test_a_bug_shows_its_traceback_and_asks_for_a_report(data, capsys, monkeypatch):
    """Only ragmeter's own errors are 'bad input' (exit 2); a genuine bug must not look like one."""
    from evaluator.scoring import evaluation

    def broken(self, sample, **options):
        raise ValueError("an internal bug")
    monkeypatch.setattr(evaluation.RAGEvaluator, "evaluate", broken)
    assert main(["evaluate", str(data), "-q", "--no-history"]) == 70
    err = capsys.readouterr().err
    assert "Traceback" in err and "an internal bug" in err and "Please report it" in err


def test_dataset_errors_give_cli_advice(tmp_path, capsys):
    bad = tmp_path / "noanswer.csv"
    bad.write_text("question,reply\nq,a\n")
    assert main(["evaluate", str(bad), "--offline", "-q", "--no-history"]) == 2
    err = capsys.readouterr().err
    assert "no answer column" in err and "pass --mapping answer=COLUMN" in err and "mapping={" not in err
    assert main(["evaluate", str(bad), "--offline", "-q", "--no-history", "--mapping", "answer=reply"]) == 0


def test_third_party_formats_from_the_cli(tmp_path, capsys):
    fixtures = Path(__file__).resolve().parent / "fixtures"
    for name in ("ragas_v0.parquet", "ragas_v0_saved", "deepeval_dataset.jsonl"):
        out = tmp_path / f"{name}.json"
        assert main(["evaluate", str(fixtures / name), "--offline", "-q", "--no-history", "-o", str(out)]) == 0
        assert json.loads(out.read_text())["num_samples"] == 2, name


@pytest.mark.parametrize("argv, message", [
    (["--judge", "anthropic"], "Unknown judge 'anthropic'; registered judges: offline, openai"),
    (["--judge", "openai"], "--judge openai needs --model"),
    (["--offline", "--judge", "openai"], "--offline and --judge openai: choose one"),
    (["--judge", "offline", "--base-url", "http://127.0.0.1:9/v1"], "--base-url needs --model"),
])
def test_judge_choices_that_cannot_run_exit_2_before_anything_runs(data, capsys, argv, message):
    assert main(["evaluate", str(data), "-q", *argv]) == 2
    assert message in capsys.readouterr().err.strip().splitlines()[-1]
    from evaluator.store.history import RunStore
    assert not RunStore().list_runs()


def test_judge_offline_is_the_offline_run(data, capsys):
    assert main(["evaluate", str(data), "-q", "--no-history", "--judge", "offline"]) == 0
    assert capsys.readouterr().out.startswith("note: Offline run")


def test_a_run_name_too_long_is_refused_before_anything_runs(data, capsys):
    assert main(["evaluate", str(data), "-q", "--name", "n" * 300]) == 2
    err = capsys.readouterr().err
    assert "--name: the run name is 300 characters long; a name may have at most 120" in err
    assert main(["runs"]) == 0 and capsys.readouterr().out.strip() == "No runs saved yet."


def test_a_run_name_with_html_and_rtl_characters_is_kept_as_text(data, capsys):
    typed = "<script>x</script> **v2**\u202e\u2067 مقارنة\nnext line"
    assert main(["evaluate", str(data), "-q", "--name", typed]) == 0
    capsys.readouterr()
    assert main(["runs"]) == 0
    [row] = listed_runs(capsys.readouterr().out)
    assert row["NAME"] == "<script>x</script> **v2** مقارنة next line"  # one line, no bidi control, else as typed


def test_a_service_refuses_a_name_too_long_and_stores_nothing(tmp_path):
    from evaluator import service

    store = service.RunStore(tmp_path / "h.sqlite3")
    with pytest.raises(service.RagmeterError, match="at most 120"):
        service.submit_run(store, service.RunConfig(), [], dataset_name="d.jsonl", access=service.LAPTOP_ACCESS,
                           name="n" * 121)
    assert store.list_runs() == []


def test_a_rescored_run_takes_its_name_and_says_its_scorer(data, capsys):
    assert main(["evaluate", str(data), "-q"]) == 0
    first = listed_after(capsys)[0]["RUN"]
    assert main(["evaluate", "--rescore", first, "--heuristics", "jaccard", "--name", "jaccard rescore", "-q"]) == 0
    newest = listed_after(capsys)[0]
    assert (newest["NAME"], newest["SCORER"]) == ("jaccard rescore", "offline heuristics (jaccard)")


def listed_after(capsys):
    capsys.readouterr()
    assert main(["runs"]) == 0
    return listed_runs(capsys.readouterr().out)
