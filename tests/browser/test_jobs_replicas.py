"""A team deployment as the README draws it: two dashboard replicas and two `ragmeter worker` processes
on one PostgreSQL history (`[runs] workers = "external"`: the replicas only draw and queue).

- a run started in replica A is watched live from replica B;
- the worker scoring it is killed (-9): its lease expires and the other worker resumes it, and
  replica B still sees it move;
- an admin stops it from replica B; the starter's page in replica A says it stopped, every row kept;
- the history holds each row once (none lost, none scored twice);
- a second run, started in replica B, is stopped by the admin from replica A.
"""
from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

from evaluator.store.history import RunStore
from evaluator.store.jobs import JobInfo, JobQueue
from teamfiles import team_dashboard, team_env, write_team

from .conftest import ROOT
from .test_dashboard import _big_rows, _count, _write_csv, expect, main, wait_idle
from .test_jobs_live import ADMIN, EVALUATOR, LONG, _scored, as_user, heading, in_progress, team_options
from .test_jobs_live import start_run, stop_buttons, visit
from waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

__all__ = ["as_user"]  # the fixture, imported to be used here
ROWS = 300
LEASE_S = 4  # a killed worker's run waits this long before the other worker may take it


def start_worker(env: Dict[str, str], log: Path) -> subprocess.Popen:
    with log.open("w") as out:
        return subprocess.Popen([sys.executable, "-m", "evaluator", "worker", "--slots", "1"], env=env,
                                stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)


@pytest.fixture
def team(browser, postgres_url, tmp_path) -> Iterator[dict]:
    """Two replicas (each behind the sign-in proxy) and two workers, one PostgreSQL history."""
    expect.set_options(timeout=LONG)
    from openai_server import ChatServer

    with ChatServer(latency=0.2) as judge:
        config = write_team(tmp_path, **team_options(postgres_url, judge.base_url),
                            runs={"workers": "external", "lease_s": LEASE_S})
        env = {"RAGMETER_JUDGE_CACHE": str(tmp_path / "cache.sqlite3"), "TEAM_JUDGE_KEY": "sk-team-test",
               "PYTHONPATH": str(ROOT), "RAGMETER_HISTORY": postgres_url, "PYTHONUNBUFFERED": "1"}
        workers = [start_worker(team_env(config, **env), tmp_path / f"worker{i}.log") for i in range(2)]
        try:
            with team_dashboard(config, tmp_path / "a.log", **env) as a, \
                    team_dashboard(config, tmp_path / "b.log", **env) as b:
                # cookies do not depend on the port: one sign-in cookie serves both replicas
                yield {"url": a.url, "a": a.url, "b": b.url, "history": postgres_url, "workers": workers,
                       "logs": [tmp_path / f"worker{i}.log" for i in range(2)]}
        finally:
            for w in workers:
                if w.poll() is None:
                    w.send_signal(signal.SIGTERM)
            for w in workers:
                try:
                    w.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    w.kill()
    expect.set_options(timeout=5_000)


def the_job(store: RunStore, dataset: str) -> JobInfo:
    (info,) = [r for r in store.list_runs() if r.dataset_name == dataset]
    job = JobQueue(store).get(info.run_id)
    assert job is not None
    return job


def worker_pid(job: JobInfo) -> int:
    """The pid in a worker id ("host:pid:suffix")."""
    assert job.worker, job
    return int(job.worker.split(":")[1])


def watch_moving(page, dataset: str, total: str) -> None:
    bar = in_progress(page, dataset)
    expect(bar).to_contain_text(re.compile(rf"[1-9][\d,]*/{total} samples scored"), timeout=LONG)
    first = _scored(bar)
    expect(bar).not_to_contain_text(re.compile(rf"^{first:,}/"), timeout=LONG)


@pytest.mark.timeout(1200)  # two replicas, two workers and three browsers share 2 cores
def test_two_replicas_and_two_workers_share_runs_live_and_survive_a_killed_worker(team, as_user, tmp_path):
    store = RunStore(team["history"])
    total = _count(ROWS)
    data = _write_csv(tmp_path / "replicated_run.csv", _big_rows(ROWS))

    eve = as_user(EVALUATOR)  # starts a run in replica A
    start_run(eve, team["a"], data, total)
    alice_b = as_user(ADMIN)  # watches it from replica B
    visit(alice_b, team["b"] + "/history")
    expect(heading(alice_b, "replicated_run.csv")).to_contain_text(
        re.compile(r"started by eve@\u2060?example\.com"), timeout=LONG)
    watch_moving(alice_b, "replicated_run.csv", total)

    # kill -9 the worker that holds it: the other one takes it once the lease has expired
    job = the_job(store, "replicated_run.csv")
    killed = worker_pid(job)
    pids = [w.pid for w in team["workers"]]
    assert killed in pids, f"the run must be scored by one of the two workers, not {job.worker}"
    victim = team["workers"][pids.index(killed)]
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=10)
    done_at_kill = store.get_run(job.run_id).n_done

    def resumed() -> bool:
        """the other worker holds the run and has scored more of it"""
        now = the_job(store, "replicated_run.csv")
        return now.state == "running" and now.worker is not None and worker_pid(now) != killed \
            and store.get_run(job.run_id).n_done > done_at_kill
    wait_for(resumed, timeout=LEASE_S + 120)
    watch_moving(alice_b, "replicated_run.csv", total)  # replica B sees it move again

    # the admin stops it from replica B; the starter's page in replica A hears of it
    expect(stop_buttons(alice_b)).to_have_count(1)
    stop_buttons(alice_b).click()
    stopped = main(eve).get_by_text(re.compile(rf"Stopped: ([\d,]+) of {total} samples scored, all kept"))
    expect(stopped).to_be_visible(timeout=LONG)
    kept = int(re.search(r"Stopped: ([\d,]+) of", stopped.inner_text()).group(1).replace(",", ""))
    info = store.get_run(job.run_id)
    assert (info.status, info.owner, info.n_done) == ("stopped", EVALUATOR, kept) and done_at_kill < kept < ROWS
    counts = store.query("SELECT COUNT(*), COUNT(DISTINCT idx) FROM results WHERE run_id = ?", (job.run_id,))
    assert counts[0] == (kept, kept)  # every scored row once: none lost to the kill, none scored twice
    assert len(store.pending_samples(job.run_id)) == ROWS - kept
    wait_idle(eve)

    # the other way round: a run started in replica B, stopped by the admin from replica A
    second = _write_csv(tmp_path / "second_run.csv", _big_rows(ROWS))
    start_run(alice_b, team["b"], second, total)
    alice_a = as_user(ADMIN)
    visit(alice_a, team["a"] + "/history")
    watch_moving(alice_a, "second_run.csv", total)
    expect(stop_buttons(alice_a)).to_have_count(1)
    stop_buttons(alice_a).click()
    expect(main(alice_b).get_by_text(re.compile(rf"Stopped: [\d,]+ of {total} samples scored, all kept"))) \
        .to_be_visible(timeout=LONG)
    assert store.get_run(the_job(store, "second_run.csv").run_id).status == "stopped"
    surviving: List[str] = [p.read_text() for p in team["logs"]]
    assert any("claimed run" in text for text in surviving)
