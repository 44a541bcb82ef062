"""Batched history writes (runs/rows.py) against a store that starts failing mid-run: a real PostgreSQL
server stopped while the run scores. The run goes on, and its verdict says how many rows were not
saved, never "ok"."""
import os
import subprocess
import time

import pytest

from evaluator.model import EvalSample
from evaluator.runs.run import Run, RunConfig
from evaluator.store.history import RunStore
from fakes import ScriptedJudge


def samples(n):
    return [EvalSample(f"What is item {i}?", f"Item {i} is a blue box.", [f"Item {i}: a blue box."])
            for i in range(n)]


def slow_judge():
    def answer(prompt):
        time.sleep(0.01)
        return '{"score": 0.9, "reasoning": "ok"}'
    return ScriptedJudge(answer)


def stop_server(url):
    """Stop the PostgreSQL server at `url` at once, as a crash or a failover would."""
    import psycopg
    from pgserver import _as_user, _bindir

    with psycopg.connect(url, autocommit=True) as conn:
        data = conn.execute("SHOW data_directory").fetchone()[0]
    subprocess.run(_as_user([f"{_bindir()}/pg_ctl", "-D", data, "-m", "immediate", "stop"]),
                   capture_output=True, timeout=60, check=True)


@pytest.mark.slow
def test_rows_the_stopped_database_refused_are_counted_and_the_verdict_is_not_ok():
    from pgserver import PostgresUnavailable, running_postgres

    try:
        server = running_postgres()
        url = server.__enter__()
    except PostgresUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{exc} (CI=true: PostgreSQL tests must run; `.ci/run` installs it)")
        pytest.skip(str(exc))
    try:
        store = RunStore(url)
        run = Run.new(RunConfig(max_workers=2), samples(150), dataset_name="boxes.csv", store=store,
                      judge=slow_judge()).start()
        deadline = time.monotonic() + 60
        while store.get_run(run.run_id).n_done < 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        stop_server(url)
        assert run.join(120)
    finally:
        server.__exit__(None, None, None)
    assert run.status == "finished" and len(run.report.results) == 150  # nothing scored was dropped
    assert 0 < run.lost_rows < 150
    ending = run.verdict
    assert not ending.ok and ending.kind == "history_failed"
    assert f"{run.lost_rows} rows were not saved to the history" in ending.line
    assert "resume the run" in ending.line
