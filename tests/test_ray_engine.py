"""The Ray engine on a real local Ray cluster (2 CPUs): same scores as one process, shared cache, killed workers,
and every flag and output of the local engine through the same Run.

One cluster serves the module (starting Ray costs seconds); its processes are gone afterwards.
"""
import json
import re
import os
import signal
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from openai_server import ChatServer, error, reply
from raycluster import KEY_ENV, WORKER_KEY, ray_cluster  # noqa: F401  (the module's cluster fixture)

from evaluator import EvalSample, OfflineJudge, RAGEvaluator
from evaluator.cli.command import main
from evaluator.runs.ray_run import RayEngine
from evaluator.store.history import RunStore
from evaluator.io.datasets import load_dataset
from evaluator.io.frames import read_results_parquet
from evaluator.io.records import result_to_record
from evaluator.judges.openai import OpenAIJudge
from evaluator.runs.run import Run, RunConfig

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "sample.jsonl"


def config(offline=True, **kw):
    """The run config as it travels to the workers: the key's variable name, never the key."""
    return RunConfig(judge="offline" if offline else "openai", api_key_env=KEY_ENV, **kw)


def records(pairs):
    out = []
    for i, r in pairs:
        rec = result_to_record(r, i)
        rec.pop("elapsed_sec")
        for turn in rec.get("turns", []):  # a conversation's turns are timed too
            turn.pop("elapsed_sec")
        out.append(rec)
    return out


def single_process(judge, samples, workers=1):
    return list(enumerate(RAGEvaluator(judge).evaluate_dataset(samples, max_workers=workers).results))


def run_on_ray(data, cfg, workers=2):
    """A Run of `data` scored on the cluster (the engine `--engine ray` puts under it), no history."""
    run = Run.new(cfg, load_dataset(data), dataset_name=Path(data).name)
    engine = RayEngine(None, workers)  # joins the module's cluster
    assert "by 2 Ray workers" in engine.place(run, cfg)
    run.start().join()
    assert run.status == "finished", run.error
    return run


def test_offline_scores_equal_the_single_process_run(ray_cluster, tmp_path):
    out = tmp_path / "results.parquet"
    assert main(["evaluate", str(SAMPLE), "-q", "--engine", "ray", "--no-history", "-o", str(out)]) == 0
    expected = single_process(OfflineJudge(), load_dataset(SAMPLE))
    assert len(read_results_parquet(out)) == len(expected)
    assert records(read_results_parquet(out)) == records(expected)


def test_conversations_score_on_ray_as_they_do_locally(ray_cluster, tmp_path, capsys):
    chats = ROOT / "sample_data" / "conversations.jsonl"
    history, out = tmp_path / "h.sqlite3", tmp_path / "r.parquet"
    assert main(["evaluate", str(chats), "-q", "--history", str(history)]) == 0
    local = capsys.readouterr().out
    assert main(["evaluate", str(chats), "-q", "--engine", "ray", "--ray-workers", "2", "--history", str(history),
                 "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert _table(printed) == _table(local) and "per turn (mean over all assistant turns):" in printed
    store = RunStore(history)
    ray_run, local_run = store.list_runs()  # newest first
    assert (ray_run.status, ray_run.n_done) == ("finished", 4)
    expected = records(store.indexed_results(local_run.run_id))
    assert records(store.indexed_results(ray_run.run_id)) == expected and expected[0]["turns"]
    assert records(read_results_parquet(out)) == expected
    assert store.load_report(ray_run.run_id).turn_mean_scores() == store.load_report(local_run.run_id).turn_mean_scores()


def test_parquet_input_without_ids_is_numbered_in_input_order(ray_cluster, tmp_path):
    rows = pd.read_json(SAMPLE, lines=True, dtype=False).drop(columns=["sample_id"])
    data = tmp_path / "in.parquet"
    rows.to_parquet(data, row_group_size=6)
    assert main(["evaluate", str(data), "-q", "--engine", "ray", "--no-history", "-o", str(tmp_path / "out.parquet")]) == 0
    got = read_results_parquet(tmp_path / "out.parquet")
    expected = single_process(OfflineJudge(), load_dataset(SAMPLE))
    assert [i for i, _ in got] == list(range(len(expected)))
    assert [r.sample_id for _, r in got] == [f"row-{i + 1}" for i in range(len(expected))]
    assert [r.score_values() for _, r in got] == [r.score_values() for _, r in expected]
    run = run_on_ray(data, config())
    assert run.report.mean_scores() == RAGEvaluator(OfflineJudge()).evaluate_dataset(load_dataset(SAMPLE)).mean_scores()


def scored_by_prompt(request):
    """A deterministic judge: the score depends on the prompt, so a mixed-up row would show."""
    score = (sum(request.prompt.encode()) % 97) / 96
    return reply(json.dumps({"score": round(score, 4), "reasoning": "graded"}), usage=(100, 10))


def test_judge_path_same_scores_same_calls_and_a_cached_rerun_calls_nothing(ray_cluster, tmp_path):
    samples = load_dataset(SAMPLE)
    with ChatServer(responder=scored_by_prompt) as srv:
        with OpenAIJudge("test-model", base_url=srv.base_url, api_key="sk-x") as judge:
            expected = single_process(judge, samples, workers=4)
        single_calls = len(srv.chat_requests)
        cfg = config(offline=False, model="test-model", base_url=srv.base_url,
                        cache=str(tmp_path / "cache.sqlite3"), max_workers=4)
        first = run_on_ray(SAMPLE, cfg)
        ray_calls = len(srv.chat_requests) - single_calls
        second = run_on_ray(SAMPLE, cfg)
        assert len(srv.chat_requests) - single_calls == ray_calls  # the cached rerun made no call
        keys = {r.headers["authorization"] for r in srv.chat_requests[single_calls:]}
        asked = [_asked(r) for r in srv.chat_requests]
    assert ray_calls == single_calls
    assert sorted(asked[single_calls:]) == sorted(asked[:single_calls])  # each call's cap and reply schema too
    assert first.report.usage["calls"] == ray_calls and first.report.usage["cache_hits"] == 0
    assert second.report.usage["calls"] == 0 and second.report.usage["cache_hits"] == ray_calls
    assert keys == {f"Bearer {WORKER_KEY}"}  # each worker read the key from its own environment
    assert WORKER_KEY not in json.dumps(cfg.to_dict())
    assert records(enumerate(first.report.results)) == records(expected)
    assert records(enumerate(second.report.results)) == records(expected)


def _asked(request) -> tuple:
    """What a call asked beyond its prompt: the completion cap and the reply format."""
    body = request.body if isinstance(request.body, dict) else {}
    return (body.get("max_tokens") or body.get("max_completion_tokens") or 0,
            json.dumps(body.get("response_format"), sort_keys=True))


def _scoring_workers() -> list:
    pids = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and Path(f"/proc/{entry}/cmdline").read_bytes().startswith(b"ray::MapWorker"):
                pids.append(int(entry))
        except OSError:
            continue
    return pids


def test_a_worker_killed_mid_run_loses_and_duplicates_no_row(ray_cluster, tmp_path):
    base = load_dataset(SAMPLE)
    rows = [dict(json.loads(line), sample_id=f"s{k}-{i}") for k in range(3)
            for i, line in enumerate(SAMPLE.read_text(encoding="utf-8").splitlines())]
    data = tmp_path / "big.jsonl"
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    killed = []
    with ChatServer(responder=scored_by_prompt, latency=0.03) as srv:
        def kill_one():
            while len(srv.chat_requests) < 60:
                time.sleep(0.01)
            victims = _scoring_workers()
            if victims:
                os.kill(victims[0], signal.SIGKILL)
                killed.append(victims[0])

        killer = threading.Thread(target=kill_one, daemon=True)
        killer.start()
        cfg = config(offline=False, model="test-model", base_url=srv.base_url, max_workers=4)
        run = run_on_ray(data, cfg)
        killer.join(5)
        with OpenAIJudge("test-model", base_url=srv.base_url, api_key="sk-x") as judge:
            expected = single_process(judge, load_dataset(data), workers=4)
    assert killed, "no scoring worker was found to kill"
    got = list(enumerate(run.report.results))
    assert len(got) == len(rows) == len(base) * 3
    assert [i for i, _ in got] == list(range(len(rows)))  # each row once, in order
    assert records(got) == records(expected)


def _table(printed: str) -> list:
    """The report table's lines, without the title line that carries the run time."""
    lines = printed.splitlines()
    start = next(i for i, line in enumerate(lines) if " report: " in line)
    end = max(i for i, line in enumerate(lines) if line.startswith("=")) - 1
    return lines[start + 1:end + 1]


def test_cli_ray_run_prints_the_usual_report_and_opens_from_the_history(ray_cluster, tmp_path, capsys):
    history, out = tmp_path / "h.sqlite3", tmp_path / "r.parquet"
    assert main(["evaluate", str(SAMPLE), "-q", "--history", str(history)]) == 0
    local = capsys.readouterr().out
    assert main(["evaluate", str(SAMPLE), "-q", "--engine", "ray", "--ray-workers", "2", "--history", str(history),
                 "-o", str(out), "--fail-under", "overall=0.1"]) == 0
    printed = capsys.readouterr().out
    assert _table(printed) == _table(local) and f"wrote {out}" in printed
    store = RunStore(history)
    ray_run, local_run = store.list_runs()  # newest first
    assert (ray_run.status, ray_run.n_done, ray_run.n_samples) == ("finished", 28, 28)
    assert ray_run.settings["engine"] == "ray" and ray_run.settings["ray_workers"] == 2
    assert records(store.indexed_results(ray_run.run_id)) == records(store.indexed_results(local_run.run_id))
    assert records(read_results_parquet(out)) == records(store.indexed_results(local_run.run_id))


def test_cli_ray_run_on_postgres_prints_its_share_link_last_and_keeps_its_project(ray_cluster, postgres_url, capsys):
    assert main(["evaluate", str(SAMPLE), "-q", "--engine", "ray", "--ray-workers", "2", "--history", postgres_url,
                 "--project", "support bot", "--dashboard-url", "https://ragmeter.example.com/"]) == 0
    out, err = capsys.readouterr()
    [run] = RunStore(postgres_url).list_runs()
    assert out.strip().splitlines()[-1] == f"https://ragmeter.example.com/report?run={run.run_id}"
    assert err.strip().splitlines()[-1].startswith("ragmeter: ok:")
    assert (run.project, run.status, run.n_done) == ("support bot", "finished", 28)


@pytest.mark.parametrize("extra,message", [
    (["--ray-workers", "0"], "--ray-workers must be at least 1"),
    (["--submit"], "drop --engine ray"),
])
def test_cli_ray_refuses_what_it_cannot_do(tmp_path, capsys, extra, message):
    assert main(["evaluate", str(SAMPLE), "--engine", "ray", "--history", str(tmp_path / "h.sqlite3"), *extra]) == 2
    assert message in capsys.readouterr().err


def test_cli_ray_refuses_a_ray_address_without_the_ray_engine(capsys):
    assert main(["evaluate", str(SAMPLE), "--no-history", "--ray-address", "auto"]) == 2
    assert "--ray-address needs --engine ray" in capsys.readouterr().err


@pytest.mark.parametrize("data", ["sample.jsonl", "conversations.jsonl"])
@pytest.mark.parametrize("output", ["out.json", "out.csv", "out.html", "out.parquet"])
def test_every_output_of_the_local_engine_is_written_with_the_same_means(ray_cluster, tmp_path, capsys, data, output):
    source = ROOT / "sample_data" / data
    assert main(["evaluate", str(source), "-q", "--no-history"]) == 0
    local = capsys.readouterr().out
    out = tmp_path / output
    assert main(["evaluate", str(source), "-q", "--engine", "ray", "--no-history", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert _table(printed) == _table(local) and f"wrote {out}" in printed
    if output == "out.json":
        written = json.loads(out.read_text(encoding="utf-8"))
        means = RAGEvaluator(OfflineJudge()).evaluate_dataset(load_dataset(source)).mean_scores()
        assert written["mean_scores"] == pytest.approx(means)


def test_resume_rescore_labels_and_repeats_work_on_ray_as_locally(ray_cluster, tmp_path, capsys):
    history = str(tmp_path / "h.sqlite3")
    assert main(["evaluate", str(SAMPLE), "-q", "--history", history, "--labels", "--repeats", "2"]) == 0
    local = capsys.readouterr().out
    assert main(["evaluate", str(SAMPLE), "-q", "--engine", "ray", "--history", history, "--labels",
                 "--repeats", "2"]) == 0
    printed = capsys.readouterr().out
    assert _table(printed) == _table(local)
    assert printed[printed.index("AUROC"):] == local[local.index("AUROC"):]
    store = RunStore(history)
    ray_run, local_run = store.list_runs()[:2]
    assert ray_run.settings["engine"] == "ray"
    assert records(store.indexed_results(ray_run.run_id)) == records(store.indexed_results(local_run.run_id))
    assert main(["evaluate", "-q", "--engine", "ray", "--history", history, "--rescore", ray_run.run_id,
                 "-o", str(tmp_path / "again.json")]) == 0
    rescored = store.list_runs()[0]
    assert rescored.settings["rescored_from"] == ray_run.run_id and rescored.settings["engine"] == "ray"
    assert (rescored.status, rescored.n_done) == ("finished", 28)


def test_a_stopped_ray_run_resumes_on_ray_and_scores_only_the_rest(ray_cluster, tmp_path, capsys):
    history = tmp_path / "h.sqlite3"
    store = RunStore(history)
    config = RunConfig()
    run = Run.new(config, load_dataset(SAMPLE)[:10], dataset_name="sample.jsonl", store=store)
    run.start().join()  # ten rows scored locally; the run then stands for one cut short
    rows = load_dataset(SAMPLE)
    cut = Run.new(config, rows, dataset_name="sample.jsonl", store=store)
    cut.stop()  # asked to stop before it starts: no row scored, every row pending
    cut.start().join()
    assert cut.status == "stopped" and store.get_run(cut.run_id).n_done == 0
    out = tmp_path / "resumed.json"
    assert main(["evaluate", "--resume", cut.run_id, "-q", "--engine", "ray", "--history", str(history),
                 "-o", str(out)]) == 0
    info = store.get_run(cut.run_id)
    assert (info.status, info.n_done, info.settings["engine"]) == ("finished", 28, "ray")
    expected = single_process(OfflineJudge(), rows)
    assert records(store.indexed_results(cut.run_id)) == records(expected)


def test_a_target_run_says_it_is_scored_here_not_on_ray(ray_cluster, tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question": "What is 2+2?", "sample_id": "q1"}) + "\n", encoding="utf-8")
    pipeline = tmp_path / "pipeline.py"
    pipeline.write_text("def ask(question):\n    return {'answer': '4', 'contexts': ['2+2 is 4']}\n", encoding="utf-8")
    assert main(["evaluate", str(questions), "-q", "--engine", "ray", "--history", str(tmp_path / "h.sqlite3"),
                 "--target", f"{pipeline}:ask"]) == 0
    err = capsys.readouterr().err
    assert "ragmeter: note:" in err and "not on Ray: it calls your pipeline" in err


def _last_line(err: str) -> str:
    return err.strip().splitlines()[-1]


def _said(err: str) -> str:
    """The last line without how many rows had finished when the run stopped: rows in flight at the stop finish
    or not by timing (3 locally and 0 on Ray in one run, on a loaded machine), the failure and advice do not."""
    return re.sub(r"after \d[\d,]* samples?", "after N samples", _last_line(err))


# The 500 asks for a 10 ms wait (Retry-After-Ms): every retry still happens, without the default backoff's 3.5 s a call
# (the same 92 requests and last line locally, in 1 s instead of 23 s).
@pytest.mark.parametrize("answer", [error(401, "invalid key"), error(500, "overloaded", retry_after_ms=10)])
def test_a_dead_judge_stops_a_ray_run_as_early_as_a_local_run_with_the_same_last_line(ray_cluster, capsys, answer):
    """The one per-row loop's early stop on Ray: exit 3, the local run's last line, at most 2x its requests."""
    argv = ["evaluate", str(SAMPLE), "-q", "--no-history", "--no-cache", "--model", "test-model"]
    with ChatServer(default=answer) as srv:
        local_code = main([*argv, "--base-url", srv.base_url])
        local_err, local_requests = capsys.readouterr().err, len(srv.chat_requests)
        ray_code = main([*argv, "--base-url", srv.base_url, "--engine", "ray", "--ray-workers", "2"])
        ray_err, ray_requests = capsys.readouterr().err, len(srv.chat_requests) - local_requests
    assert local_code == ray_code == 3
    assert _said(ray_err) == _said(local_err)
    assert _last_line(ray_err).startswith("ragmeter: judge failed: ") and "stopped early" in _last_line(ray_err)
    assert 0 < ray_requests <= 2 * local_requests


def _skip_reasons(result):
    return {name: ms.reasoning for name, ms in result.metric_scores().items() if ms.skipped}


def test_a_row_skipped_locally_is_skipped_for_the_same_reason_on_ray(ray_cluster, tmp_path):
    """Every field of a sample travels to the Ray workers: the fields that skip a metric give the same reason."""
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in [
        {"sample_id": "answered", "question": "Q?", "answer": "A.", "contexts": ["A."]},
        {"sample_id": "no-answer", "question": "Q?", "answer": None, "contexts": ["A."]},
    ]), encoding="utf-8")
    rows = load_dataset(data) + [
        EvalSample("Q?", "", [], sample_id="target-failed", target_error="HTTP 503 from the pipeline"),
        EvalSample("Q?", "A.", [], sample_id="bare-model", no_contexts_reason="a bare model retrieves nothing"),
    ]
    cfg = config()
    run = Run.new(cfg, rows, dataset_name="rows.jsonl")
    assert "by 2 Ray workers" in RayEngine(None, 2).place(run, cfg)
    run.start().join()
    local = single_process(OfflineJudge(), rows)
    on_ray = {r.sample_id: _skip_reasons(r) for r in run.report.results}
    here = {r.sample_id: _skip_reasons(r) for _, r in local}
    assert on_ray == here
    assert "no answer" in " ".join(here["no-answer"].values()).lower()
    assert all("HTTP 503 from the pipeline" in why for why in here["target-failed"].values())
    assert "a bare model retrieves nothing" in here["bare-model"].values()
