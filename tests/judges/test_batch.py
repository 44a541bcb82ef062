"""The OpenAI Batch API path against a real files + batches server on 127.0.0.1 (tests/batch_server.py)."""
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time

import httpx2
import pytest

from batch_server import BatchServer, Failed, prompt_of
from evaluator.scoring.batching import BATCH_IDS, batch_client, evaluate_batch
from evaluator.errors import JudgeConfigError, JudgeError
from evaluator.scoring.evaluation import RAGEvaluator
from evaluator.judges.offline import OfflineJudge
from evaluator.metrics.rubric import RubricMetric
from evaluator.store.history import RunStore
from evaluator.judges.batch import (POLL_FAILURES, BatchClient, Reply, Request, BatchStatus, batch_endpoint, describe_statuses,
                                    parse_results)
from evaluator.judges.cache import JudgeCache
from evaluator.judges.openai import OpenAIJudge
from evaluator.model import METHOD_BLEND, METHOD_FALLBACK, EvalSample
from evaluator.runs.run import OPENAI, Run, RunConfig
from openai_server import ChatServer, reply, scored_reply

CANARY = "sk-canary-batch-3e9a1f77d2"
N = 6


def script(prompt):
    """The scripted judge: the same prompt always gets the same score."""
    score = hashlib.sha256(prompt.encode()).digest()[0] / 255
    return json.dumps({"score": round(score, 3), "reasoning": "scripted"})


def samples(n=N):
    # Every other sample lacks a reference, so samples make 3 or 5 judge calls.
    return [EvalSample(f"How long is delivery for order {i}?", f"Order {i} arrives in {i + 2} days.",
                       [f"Order {i}: delivery takes {i + 2} working days."],
                       f"{i + 2} days." if i % 2 == 0 else None, sample_id=f"q{i}") for i in range(n)]


def judge(srv, cache=None, key=CANARY):
    return OpenAIJudge("test-model", base_url=srv.base_url, api_key=key, cache=cache, timeout=5.0)


def run_batch(srv, pending=None, cache=None, **kw):
    ev = RAGEvaluator(judge(srv, cache))
    client = batch_client(ev, poll_interval=0.01)
    return evaluate_batch(ev, pending or list(enumerate(samples())), client, **kw)


def view(report):
    return [{m: (s.score, s.method, s.llm_score, s.heuristic_score, s.reasoning, s.error)
             for m, s in r.metric_scores().items()} for r in report.results]


def test_batch_run_scores_exactly_like_the_direct_path():
    with ChatServer(responder=lambda r: reply(script(r.prompt))) as chat:
        with judge(chat) as direct_judge:
            direct = RAGEvaluator(direct_judge).evaluate_dataset(samples())
        direct_bodies = sorted(json.dumps(r.body, sort_keys=True) for r in chat.chat_requests)
    with BatchServer(responder=lambda body: script(prompt_of(body)), polls=4) as srv:
        progress, states = [], []
        report = run_batch(srv, on_progress=lambda done, total, _: progress.append((done, total)),
                           on_status=lambda statuses: states.append(statuses[0].status))
        lines = srv.input_lines()
    assert view(report) == view(direct)
    assert progress == [(i + 1, N) for i in range(N)]
    assert states == ["validating", "in_progress", "in_progress", "completed"]
    assert {s.method for r in report.results for s in r.metric_scores().values()} >= {METHOD_BLEND}
    # The requests file holds exactly the bodies the direct path sent, one line per judge call.
    assert sorted(json.dumps(line["body"], sort_keys=True) for line in lines) == direct_bodies
    # The context metrics in one call (auto, on servers that reuse no prefix): 3 calls with a reference, 2 without
    assert len({line["custom_id"] for line in lines}) == len(lines) == 3 * 3 + 3 * 2
    assert {line["url"] for line in lines} == {"/v1/chat/completions"}
    assert report.usage["calls"] == report.usage["requests"] == len(lines)


def test_rubrics_with_logprobs_and_repeats_score_like_the_direct_path(tmp_path):
    polite = RubricMetric("politeness", "Polite and professional.", scale="1-5")

    def answer(prompt):
        return scored_reply('{"score": ', {"4": 0.6, "5": 0.4}) if "Polite and" in prompt else reply(script(prompt))

    def evaluator(judge):
        return RAGEvaluator(judge, metrics=["faithfulness", "answer_relevancy", polite], repeats=2)

    with ChatServer(responder=lambda r: answer(r.prompt)) as chat:
        with judge(chat) as direct_judge:
            direct = evaluator(direct_judge).evaluate_dataset(samples())
    cache = tmp_path / "cache.sqlite3"
    with BatchServer(responder=lambda body: answer(prompt_of(body))) as srv:
        ev = evaluator(judge(srv, cache))
        report = evaluate_batch(ev, list(enumerate(samples())), batch_client(ev, poll_interval=0.01))
        lines = srv.input_lines()
        again = evaluator(judge(srv, cache))
        cached = evaluate_batch(again, list(enumerate(samples())), batch_client(again, poll_interval=0.01))
        assert len(srv.uploads) == 1  # every repeat has its own cache entry: the re-run sends nothing
    assert [r.scores for r in report.results] == [r.scores for r in direct.results]
    assert [r.scores for r in cached.results] == [r.scores for r in direct.results]
    assert {r.scores["politeness"].scored_from for r in report.results} == {"logprobs"}
    assert len(lines) == N * 3 * 2  # three judged metrics, twice each
    assert sum(bool(line["body"].get("logprobs")) for line in lines) == N * 2


@pytest.mark.parametrize("failure", [Failed("upstream overloaded", status=500),
                                     Failed("request expired", status=None, code="batch_expired")])
def test_requests_failed_inside_the_batch_fall_back_and_are_counted(failure):
    def responder(body):
        return failure if "Split the ANSWER" in prompt_of(body) else script(prompt_of(body))  # faithfulness

    with BatchServer(responder=responder) as srv:
        report = run_batch(srv)
        assert srv.batches["batch_1"].failed == N
    assert report.method_counts("faithfulness") == {METHOD_FALLBACK: N}
    assert report.method_counts("answer_relevancy") == {METHOD_BLEND: N}
    assert all(failure.message in r.faithfulness.error for r in report.results)
    assert report.usage["failures"] == N


def test_a_batch_that_fails_validation_falls_back_everywhere_with_its_reason():
    with BatchServer(fail_batch="line 1: model 'nope' not found") as srv:
        report = run_batch(srv)
    scored = [s for r in report.results for s in r.metric_scores().values() if not s.skipped]
    assert scored and all(s.method == METHOD_FALLBACK for s in scored)
    assert "model 'nope' not found" in scored[0].error
    assert report.usage["failures"] == 3 * 3 + 3 * 2  # every request failed (a grouped one holds three scores)


def test_resume_picks_up_a_batch_still_running_without_uploading_again(tmp_path):
    history = tmp_path / "history.sqlite3"
    store = RunStore(history)
    run_id = store.create_run(dataset_name="orders", samples=samples(), settings={"judge": "openai"})
    stop, seen = threading.Event(), []

    def close_after_first_poll(statuses):
        seen.append(statuses[0].status)
        stop.set()  # the user closes the CLI while the batch is still validating

    with BatchServer(responder=lambda body: script(prompt_of(body)), polls=5) as srv:
        first = run_batch(srv, store=store, run_id=run_id, on_status=close_after_first_poll, stop=stop)
        assert first.results == [] and seen == ["validating"]
        saved = RunStore(history).get_run(run_id)
        assert saved.settings[BATCH_IDS] == ["batch_1"] and saved.n_done == 0
        store.close()

        reopened = RunStore(history)  # a new process: nothing but the history and the run id
        pending = reopened.pending_samples(run_id)
        report = run_batch(srv, pending=pending, store=reopened, run_id=run_id,
                           on_result=lambda j, r: reopened.record_result(run_id, pending[j][0], r))
        assert len(srv.uploads) == 1 and list(srv.batches) == ["batch_1"]
    with BatchServer(responder=lambda body: script(prompt_of(body))) as fresh:
        unbroken = run_batch(fresh)
    assert view(report) == view(unbroken)
    assert view(reopened.load_report(run_id)) == view(unbroken)


def test_cached_prompts_are_not_sent_and_batch_replies_fill_the_cache(tmp_path):
    cache = tmp_path / "cache.sqlite3"
    with BatchServer(responder=lambda body: script(prompt_of(body))) as srv:
        first = run_batch(srv, cache=cache)
        sent = len(srv.input_lines())
        assert len(JudgeCache(cache)) == sent
        second = run_batch(srv, cache=cache)
        assert len(srv.uploads) == 1 and len(srv.batches) == 1  # everything came from the cache
    assert view(second) == view(first)
    assert second.usage["cache_hits"] == sent and second.usage["requests"] == 0


def test_tokens_are_the_batch_replies_usage():
    with BatchServer(responder=lambda body: script(prompt_of(body))) as srv:
        report = run_batch(srv)
        outputs = [json.loads(line) for line in srv.files["file-2"][2].splitlines()]
    usages = [o["response"]["body"]["usage"] for o in outputs]
    assert report.usage["prompt_tokens"] == sum(u["prompt_tokens"] for u in usages) > 0
    assert report.usage["completion_tokens"] == sum(u["completion_tokens"] for u in usages) > 0


def test_no_api_key_reaches_the_history_or_the_requests_file(tmp_path):
    history = tmp_path / "history.sqlite3"
    store = RunStore(history)
    run_id = store.create_run(dataset_name="orders", samples=samples(), settings={"judge": "openai"})
    with BatchServer(responder=lambda body: script(prompt_of(body))) as srv:
        report = run_batch(srv, store=store, run_id=run_id,
                           on_result=lambda j, r: store.record_result(run_id, j, r))
        store.finish_run(run_id, usage=report.usage)
        assert store.get_run(run_id).n_done == N
        assert all(r.headers.get("authorization") == f"Bearer {CANARY}" for r in srv.requests)
        assert all(CANARY.encode() not in data for data in srv.uploads)
    store.close()
    for path in tmp_path.iterdir():  # the database and its WAL/SHM files
        assert CANARY.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("flaky, survives", [(POLL_FAILURES - 1, True), (POLL_FAILURES, False)])
def test_failed_polls_are_tried_again_until_too_many_in_a_row(flaky, survives):
    with BatchServer(responder=lambda body: script(prompt_of(body)), flaky_polls=flaky) as srv:
        ev = RAGEvaluator(judge(srv))
        client = BatchClient(ev.llm, poll_interval=0.01, max_retries=0)
        pending = list(enumerate(samples()))
        if survives:
            report = evaluate_batch(ev, pending, client)
            assert report.method_counts("faithfulness") == {METHOD_BLEND: N}
        else:
            with pytest.raises(JudgeError, match="HTTP 500.*resume the run"):
                evaluate_batch(ev, pending, client)


def test_many_requests_are_split_into_several_batches_and_merged():
    with BatchServer(responder=lambda body: script(prompt_of(body))) as srv:
        ev = RAGEvaluator(judge(srv))
        client = BatchClient(ev.llm, poll_interval=0.01, max_requests=7)
        report = evaluate_batch(ev, list(enumerate(samples())), client)
        assert [len(data.splitlines()) for data in srv.uploads] == [7, 7, 1]  # 15 requests
    assert report.usage["batch_ids"] == ["batch_1", "batch_2", "batch_3"]
    assert report.method_counts("faithfulness") == {METHOD_BLEND: N}


def test_a_server_without_the_batch_api_is_a_clear_config_error():
    with ChatServer() as chat:  # chat completions only: /files answers 404
        with pytest.raises(JudgeConfigError, match=r"HTTP 404.*run without --batch"):
            run_batch(chat)


def test_the_offline_judge_cannot_batch():
    with pytest.raises(JudgeConfigError, match="--model"):
        batch_client(RAGEvaluator(OfflineJudge()))


def test_azure_gets_its_request_url_and_the_same_files_and_batches_calls():
    seen = []

    def handler(request):
        seen.append((request.method, request.url.path))
        if request.url.path.endswith("/files"):
            return httpx2.Response(200, json={"id": "file-1", "object": "file", "bytes": 1, "created_at": 0,
                                              "filename": "x", "purpose": "batch", "status": "processed"})
        return httpx2.Response(200, json={"id": "batch_1", "object": "batch", "endpoint": "/chat/completions",
                                          "input_file_id": "file-1", "completion_window": "24h",
                                          "status": "validating", "created_at": 0})

    azure = OpenAIJudge("my-deployment", base_url="https://res.openai.azure.com/openai/v1", api_key=CANARY,
                        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    client = BatchClient(azure)
    data = client.chunks({"s0-c0": Request("Judge this.")})[0]
    assert client.submit(data) == "batch_1"
    assert seen == [("POST", "/openai/v1/files"), ("POST", "/openai/v1/batches")]
    assert json.loads(data)["url"] == "/chat/completions"
    assert batch_endpoint("https://api.openai.com/v1") == "/v1/chat/completions"


def test_parse_results_reads_replies_failures_and_skips_unreadable_lines():
    ok = {"custom_id": "s0-c0", "response": {"status_code": 200, "body": {
        "choices": [{"message": {"content": '{"score": 1}'}}], "usage": {"prompt_tokens": 9, "completion_tokens": 2}}}}
    http_error = {"custom_id": "s0-c1", "response": {"status_code": 429, "body": {"error": {"message": "slow down"}}}}
    batch_error = {"custom_id": "s0-c2", "response": None, "error": {"code": "batch_expired", "message": "expired"}}
    not_chat = {"custom_id": "s0-c3", "response": {"status_code": 200, "body": {"object": "list"}}}
    text = "\n".join([json.dumps(ok), json.dumps(http_error), "{not json", json.dumps(batch_error),
                      json.dumps(not_chat), ""])
    results = parse_results(text)
    assert results.replies == {"s0-c0": Reply('{"score": 1}', (9, 2))}
    assert results.errors == {"s0-c1": "HTTP 429: slow down", "s0-c2": "expired",
                              "s0-c3": "the reply is not a chat completion"}
    assert results.unreadable_lines == 1


def test_describe_statuses_sums_every_batch():
    line = describe_statuses([BatchStatus("b1", "in_progress", 10, 4, 1), BatchStatus("b2", "completed", 5, 5, 0)])
    assert line == "2 batches in_progress/completed: 10/15 requests done, 1 failed"


# -- the command line: --batch, a closed CLI, --resume ------------------------------------------------------
def cli(args, tmp_path, **kw):
    env = dict(os.environ, OPENAI_API_KEY=CANARY, RAGMETER_HISTORY=str(tmp_path / "history.sqlite3"),
               RAGMETER_JUDGE_CACHE=str(tmp_path / "cache.sqlite3"))
    return subprocess.Popen([sys.executable, "-m", "evaluator", "evaluate", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


@pytest.mark.slow
def test_cli_batch_killed_while_running_resumes_by_run_id_with_the_given_prices(tmp_path):
    data = tmp_path / "orders.jsonl"
    data.write_text("".join(json.dumps({"sample_id": s.sample_id, "question": s.question, "answer": s.answer,
                                        "contexts": s.contexts, "ground_truth": s.ground_truth}) + "\n"
                            for s in samples()))
    with BatchServer(responder=lambda body: script(prompt_of(body)), polls=10**6) as srv:
        judge_args = ["--model", "test-model", "--base-url", srv.base_url, "--batch", "--batch-poll", "0.05"]
        first = cli([str(data), *judge_args], tmp_path)
        deadline = time.time() + 120
        while not (srv.batches and srv.batches["batch_1"].polls >= 12) and time.time() < deadline:
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)  # the CLI is closed while the batch is still in progress
        first.wait(timeout=30)
        progress = first.stderr.read()
        assert "batch in_progress: 0/15 requests done, 0 failed" in progress
        [run] = RunStore(tmp_path / "history.sqlite3").list_runs()
        assert f"'ragmeter evaluate --resume {run.run_id}' picks them up" in progress
        assert run.n_done == 0 and run.settings["batch_ids"] == ["batch_1"]

        srv.polls = 0  # the batch completes at its next poll
        resumed = cli(["--resume", run.run_id, "--batch", "--batch-poll", "0.05", "--price-in", "1000",
                       "--price-out", "4000", "-o", str(tmp_path / "report.json")], tmp_path)
        out, err = resumed.communicate(timeout=240)
        assert resumed.returncode == 0, err
        assert len(srv.uploads) == 1 and list(srv.batches) == ["batch_1"]
        outputs = [json.loads(line) for line in srv.files["file-2"][2].splitlines()]
    usage = [o["response"]["body"]["usage"] for o in outputs]
    p, c = sum(u["prompt_tokens"] for u in usage), sum(u["completion_tokens"] for u in usage)
    assert f"{p} prompt + {c} completion tokens" in out
    assert f"cost {p * 1000 / 1e6 + c * 4000 / 1e6:.4f}" in out
    report = json.loads((tmp_path / "report.json").read_text())
    assert [s["sample_id"] for s in report["samples"]] == [f"q{i}" for i in range(N)]
    assert RunStore(tmp_path / "history.sqlite3").get_run(run.run_id).status == "finished"
    for path in tmp_path.iterdir():  # history, its WAL, the cache, the report: no key anywhere
        assert CANARY.encode() not in path.read_bytes(), path


def test_cli_batch_needs_a_model(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"question": "q", "answer": "a", "contexts": ["c"]}) + "\n")
    done = cli([str(data), "--batch"], tmp_path)
    out, err = done.communicate(timeout=120)
    assert done.returncode == 2 and "--batch needs --model" in err


# -- the one run path (dashboard and CLI): Stop while the batch runs, then resume -----------------------
def test_run_stopped_while_its_batch_runs_resumes_from_the_history(tmp_path):
    history = tmp_path / "history.sqlite3"
    with BatchServer(responder=lambda body: script(prompt_of(body)), polls=10**6) as srv:
        config = RunConfig(judge=OPENAI, model="test-model", base_url=srv.base_url, batch=True, batch_poll=0.02)
        run = Run.new(config, samples(), dataset_name="orders", store=history, api_key=CANARY).start()
        deadline = time.time() + 60
        while not (run.batch_status or "").startswith("batch in_progress") and time.time() < deadline:
            time.sleep(0.02)
        run.stop()  # the Stop button, or a closed page
        assert run.join(30) and run.status == "stopped" and run.report.results == []
        info = RunStore(history).get_run(run.run_id)
        assert info.status == "stopped" and info.settings["batch"] is True and info.n_done == 0

        srv.polls = 0
        resumed = Run.resume(RunStore(history), run.run_id, api_key=CANARY).start()
        assert resumed.join(60) and resumed.status == "finished", resumed.error
        assert len(srv.uploads) == 1 and list(srv.batches) == ["batch_1"]
    assert len(resumed.report.results) == N and resumed.done == resumed.total == N
    assert resumed.report.method_counts("faithfulness") == {METHOD_BLEND: N}
    assert RunStore(history).get_run(run.run_id).status == "finished"
