"""The Ray engine on a real local Ray cluster (2 CPUs): same scores as one process, shared cache, killed workers.

One cluster serves the module (starting Ray costs seconds); its processes are gone afterwards.
"""
import json
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

ray = pytest.importorskip("ray", reason="pip install 'ragmeter[ray]'")

from evaluator.engines.ray import run_ray  # noqa: E402
from evaluator.evaluation import OfflineJudge, RAGEvaluator  # noqa: E402
from evaluator.io.datasets import load_dataset  # noqa: E402
from evaluator.io.frames import read_results_parquet  # noqa: E402
from evaluator.io.records import result_to_record  # noqa: E402
from evaluator.judges.openai import OpenAIJudge  # noqa: E402

from openai_server import ChatServer, reply  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "sample.jsonl"
KEY_ENV = "RAGMETER_TEST_JUDGE_KEY"


@dataclass(frozen=True)
class Config:
    """Plain data, as it travels to the workers: the key's variable name, never the key."""

    offline: bool = True
    model: str = ""
    base_url: str = ""
    api_key_env: str = KEY_ENV
    cache: str = ""
    language: str = "auto"
    heuristics: str = "ragmeter"
    max_workers: int = 1

    @property
    def workers(self) -> int:
        return self.max_workers

    def build_judge(self):
        if self.offline:
            return OfflineJudge()
        return OpenAIJudge(self.model, base_url=self.base_url, api_key=os.environ.get(self.api_key_env),
                           cache=self.cache or None, max_concurrency=self.max_workers)


def _children(pid: int) -> set:
    """Every descendant process id of `pid`, from /proc."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _alive(pids: set) -> set:
    return {p for p in pids if Path(f"/proc/{p}").exists()
            and "Z" not in Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[:1]}


@pytest.fixture(scope="module")
def cluster():
    # Workers cannot import this test module; its Config travels by value instead.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    before = _children(os.getpid())
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    started = _children(os.getpid()) - before
    yield
    ray.shutdown()
    deadline = time.monotonic() + 20
    while _alive(started) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(started), "Ray left processes behind"


def records(pairs):
    out = []
    for i, r in pairs:
        rec = result_to_record(r, i)
        rec.pop("elapsed_sec")
        out.append(rec)
    return out


def single_process(judge, samples, workers=1):
    return list(enumerate(RAGEvaluator(judge).evaluate_dataset(samples, max_workers=workers).results))


def test_offline_scores_equal_the_single_process_run(cluster, tmp_path):
    out = tmp_path / "results.parquet"
    run = run_ray(str(SAMPLE), Config(), workers=2, output=str(out), batch=5)
    expected = single_process(OfflineJudge(), load_dataset(SAMPLE))
    assert run.rows == len(expected)
    assert records(read_results_parquet(out)) == records(expected)


def test_parquet_input_without_ids_is_numbered_in_input_order(cluster, tmp_path):
    rows = pd.read_json(SAMPLE, lines=True, dtype=False).drop(columns=["sample_id"])
    data = tmp_path / "in.parquet"
    rows.to_parquet(data, row_group_size=6)
    run = run_ray(str(data), Config(), workers=2, output=str(tmp_path / "out.parquet"), batch=4)
    got = read_results_parquet(tmp_path / "out.parquet")
    expected = single_process(OfflineJudge(), load_dataset(SAMPLE))
    assert [i for i, _ in got] == list(range(len(expected)))
    assert [r.sample_id for _, r in got] == [f"row-{i + 1}" for i in range(len(expected))]
    assert [r.scores() for _, r in got] == [r.scores() for _, r in expected]
    assert run.tally.means() == RAGEvaluator(OfflineJudge()).evaluate_dataset(load_dataset(SAMPLE)).mean_scores()


def scored_by_prompt(request):
    """A deterministic judge: the score depends on the prompt, so a mixed-up row would show."""
    score = (sum(request.prompt.encode()) % 97) / 96
    return reply(json.dumps({"score": round(score, 4), "reasoning": "graded"}), usage=(100, 10))


def test_judge_path_same_scores_same_calls_and_a_cached_rerun_calls_nothing(cluster, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-not-in-config")
    samples = load_dataset(SAMPLE)
    with ChatServer(responder=scored_by_prompt) as srv:
        with OpenAIJudge("test-model", base_url=srv.base_url, api_key="sk-x") as judge:
            expected = single_process(judge, samples, workers=4)
        single_calls = len(srv.chat_requests)
        config = Config(offline=False, model="test-model", base_url=srv.base_url,
                        cache=str(tmp_path / "cache.sqlite3"), max_workers=4)
        first = run_ray(str(SAMPLE), config, workers=2, output=str(tmp_path / "a.parquet"), batch=4)
        ray_calls = len(srv.chat_requests) - single_calls
        second = run_ray(str(SAMPLE), config, workers=2, output=str(tmp_path / "b.parquet"), batch=4)
        assert len(srv.chat_requests) - single_calls == ray_calls  # the cached rerun made no call
        keys = {r.headers["authorization"] for r in srv.chat_requests[single_calls:]}
    assert ray_calls == single_calls
    assert first.tally.judge_usage()["calls"] == ray_calls and first.tally.judge_usage()["cache_hits"] == 0
    assert second.tally.judge_usage()["calls"] == 0 and second.tally.judge_usage()["cache_hits"] == ray_calls
    assert keys == {"Bearer sk-test-not-in-config"}  # each worker read the key from its environment
    assert records(read_results_parquet(tmp_path / "a.parquet")) == records(expected)
    assert records(read_results_parquet(tmp_path / "b.parquet")) == records(expected)


def _scoring_workers() -> list:
    pids = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and Path(f"/proc/{entry}/cmdline").read_bytes().startswith(b"ray::MapWorker"):
                pids.append(int(entry))
        except OSError:
            continue
    return pids


def test_a_worker_killed_mid_run_loses_and_duplicates_no_row(cluster, tmp_path):
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
        config = Config(offline=False, model="test-model", base_url=srv.base_url, max_workers=4)
        run = run_ray(str(data), config, workers=2, output=str(tmp_path / "out.parquet"), batch=4)
        killer.join(5)
        with OpenAIJudge("test-model", base_url=srv.base_url, api_key="sk-x") as judge:
            expected = single_process(judge, load_dataset(data), workers=4)
    assert killed, "no scoring worker was found to kill"
    got = read_results_parquet(tmp_path / "out.parquet")
    assert run.rows == len(rows) == len(base) * 3
    assert [i for i, _ in got] == list(range(len(rows)))  # each row once, in order
    assert records(got) == records(expected)
