"""Runs as jobs in the dashboard (AppTest, a real SQLite history, the process's real local worker):
the page keeps only the run id, reads progress from the job record, shows a queued run's place in
line, stops any run from History (owner and admins only, checked at the write), deletes a running
run only after stopping it, and says when a run was interrupted, offering Resume."""
import os
import time

import pytest
from streamlit.testing.v1 import AppTest

from apptest import APP, ROOT, no_exception, stopped_keeping_rows
from evaluator import EvalSample
from evaluator.errors import NotAllowed
from evaluator.runs import jobs as run_jobs
from evaluator.runs.run import RunConfig
from evaluator.store.history import RunStore
from evaluator.store.jobs import JobQueue
from teamfiles import config_toml, write_config, write_team

TIMEOUT = 60
ALICE, BOB, VERA, ADMIN = "alice@example.com", "bob@example.com", "vera@example.com", "root@example.com"


def rows(n, tag="q"):
    return [EvalSample(f"How many days for parcel {tag}{i}?", f"Parcel {tag}{i} takes {i % 5 + 2} days.",
                       [f"Parcels like {tag}{i} arrive in {i % 5 + 2} days."], f"{i % 5 + 2} days.", f"{tag}{i}")
            for i in range(n)]


def history_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/history.py").run()
    no_exception(at)
    return at


def texts(at) -> str:
    return " ".join(str(getattr(e, "value", "")) for kind in ("markdown", "info", "caption", "warning", "error",
                                                                "success") for e in getattr(at, kind))


def test_queued_runs_show_their_place_in_line_and_stop_from_history(history, tmp_path, monkeypatch):
    """Runs wait for external workers (none here): two submitted runs wait, in order; Stop on the second
    ends it at once."""
    write_config(tmp_path, config_toml(runs={"workers": "external"}), monkeypatch)
    store = RunStore(history)
    first = run_jobs.submit_new(store, RunConfig(), rows(3, "a"), dataset_name="first.jsonl")
    second = run_jobs.submit_new(store, RunConfig(), rows(3, "b"), dataset_name="second.jsonl")
    at = history_page()
    shown = texts(at)
    assert "Runs in progress" in shown
    assert "Queued: 1st in line" in shown and "Queued: 2nd in line" in shown
    at.button(key=f"btn_stop_hist_{second}").click().run()
    no_exception(at)
    assert store.get_run(second).status == "stopped" and JobQueue(store).get(second).state == "ended"
    assert JobQueue(store).get(first).state == "queued"
    assert "Stopped before it started." in texts(at)
    at.run()  # the list's next poll: only the first run is in progress, now 1st in line
    assert "**second.jsonl** · started by" not in texts(at) and "**first.jsonl** · started by" in texts(at)
    assert not [b for b in at.button if b.key == f"btn_stop_hist_{second}"]


def test_the_session_holds_the_run_id_only_and_the_page_opens_the_report_when_it_ends(history):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.button(key="btn_run").click().run()  # the bundled sample, offline: the local worker scores it
    no_exception(at)
    meta = at.session_state["run"]
    assert "live_run" not in at.session_state  # collected when the job ended
    info = RunStore(history).get_run(meta.run_id)
    assert (info.status, info.n_done) == ("finished", info.n_samples) and meta.status == "finished"
    assert any("Done:" in s.value for s in at.success)


def test_the_pages_offline_run_is_scored_in_a_worker_process_not_the_servers(history):
    """Issue 28: scoring (CPU-bound) must not share the page's interpreter, so a watched run keeps its pace."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.button(key="btn_run").click().run()
    no_exception(at)
    run_id = at.session_state["run"].run_id
    assert RunStore(history).get_run(run_id).status == "finished"
    worker = JobQueue(RunStore(history)).get(run_id).worker  # host:pid:random
    assert int(worker.split(":")[1]) != os.getpid()


def test_a_worker_process_that_cannot_start_is_a_red_box_and_the_run_does_not_wait_forever(history, monkeypatch):
    monkeypatch.setenv("PYTHONHOME", "/nonexistent-python-home")  # the worker's interpreter cannot start
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.button(key="btn_run").click().run()
    no_exception(at)
    (box,) = [e.value for e in at.error]
    assert box.startswith("Starting the run failed: the worker process that scores this dashboard's runs could "
                          "not start: it exited with code 1") and "Traceback" not in box
    assert "resume it from the History page" in box
    (info,) = RunStore(history).list_runs()
    assert info.status == "stopped" and JobQueue(RunStore(history)).get(info.run_id).state == "ended"
    assert "live_run" not in at.session_state


def team_mode(tmp_path, monkeypatch):
    """Team mode whose runs wait for `ragmeter worker`s (none run here: submitted runs stay queued)."""
    history = tmp_path / "team.sqlite3"
    write_team(tmp_path, monkeypatch, history=history, evaluators=[ALICE, BOB], admins=[ADMIN],
               runs={"workers": "external"})
    return RunStore(history)


def as_user(monkeypatch, name):
    from pages import _team
    monkeypatch.setattr(_team, "user", lambda: name)


def test_only_the_owner_and_admins_stop_resume_or_rescore_at_the_write(tmp_path, monkeypatch):
    """Called straight, with no button drawn: the write itself refuses a viewer and another evaluator."""
    store = team_mode(tmp_path, monkeypatch)
    from pages import _runs
    queued = run_jobs.submit_new(store, RunConfig(), rows(2), dataset_name="alices.jsonl", owner=ALICE)
    ended = run_jobs.submit_new(store, RunConfig(), rows(2), dataset_name="alices-old.jsonl", owner=ALICE)
    JobQueue(store).request_stop(ended)  # a stopped run: resumable and re-scorable, by its owner and admins
    info = store.get_run(ended)
    for name in (VERA, BOB):
        as_user(monkeypatch, name)
        with pytest.raises(NotAllowed):
            _runs.stop_run(queued)
        with pytest.raises(NotAllowed):
            _runs.resume_run(info)
        with pytest.raises(NotAllowed):
            _runs.rescore_run(info, RunConfig())
    job = JobQueue(store).get(queued)
    assert (job.state, job.stop_requested) == ("queued", False)
    assert JobQueue(store).get(ended).state == "ended" and len(store.list_runs()) == 2
    as_user(monkeypatch, ADMIN)
    _runs.stop_run(queued)
    assert store.get_run(queued).status == "stopped"


def test_a_viewer_sees_runs_in_progress_but_no_stop(tmp_path, monkeypatch):
    store = team_mode(tmp_path, monkeypatch)
    run_id = run_jobs.submit_new(store, RunConfig(), rows(2), dataset_name="alices.jsonl", owner=ALICE)
    from pages import _team
    as_user(monkeypatch, VERA)
    monkeypatch.setattr(_team, "gate", lambda: None)  # the sign-in itself is tested in real Chromium
    at = AppTest.from_file(str(ROOT / "pages" / "history.py"), default_timeout=TIMEOUT).run()
    no_exception(at)
    assert "Queued: 1st in line" in texts(at) and "alices.jsonl" in texts(at)
    assert not [b for b in at.button if (b.key or "").startswith("btn_stop")]
    as_user(monkeypatch, ALICE)
    at.run()
    assert [b.key for b in at.button if (b.key or "").startswith("btn_stop")] == [f"btn_stop_hist_{run_id}"]


SLOW = '''
import time
from evaluator import EvalSample
from evaluator.runs.run import RunConfig
from pages import _runs as runs
from pages import _state as state

class SlowJudge:
    """A real judge that takes its time, so the run can be stopped half-way."""
    def generate(self, prompt):
        time.sleep(0.01)
        return '{"score": 0.8, "reasoning": "slow but sure"}'

if state.live_run() is None and state.report() is None:
    samples = [EvalSample(f"Question {i}?", f"Answer {i}.", [f"Context {i}."], f"Answer {i}.", f"s{i}")
               for i in range(NROWS)]
    run_id = runs.start_run(samples, RunConfig(), dataset_name="slow.jsonl", judge=SlowJudge())
    assert state.get(state.LIVE) == run_id  # the session keeps the id, never the Run
    while (runs.queue().progress(run_id) or type("P", (), {"done": 0})).done < 3:
        time.sleep(0.02)
    runs.stop_run(run_id)
    runs.finish(run_id)
'''


def test_stop_through_the_job_keeps_every_finished_row_and_leaves_the_rest_pending(history):
    at = AppTest.from_string(SLOW.replace("NROWS", "200"), default_timeout=TIMEOUT).run()
    no_exception(at)
    assert "live_run" not in at.session_state
    stopped_keeping_rows(at, history, 200)


def test_an_interrupted_run_says_so_and_resumes_only_the_rest(history):
    store = RunStore(history)
    run_id = run_jobs.submit_new(store, RunConfig(), rows(6), dataset_name="cut.jsonl")
    from evaluator import OfflineJudge, RAGEvaluator
    first = RAGEvaluator(OfflineJudge()).evaluate_dataset(rows(6)[:2]).results
    store.record_results(run_id, list(enumerate(first)))
    with store.transaction() as db:  # what expire() leaves when a worker died mid-run for good
        db.execute("UPDATE jobs SET state = 'ended' WHERE run_id = ?", (run_id,))
    store.finish_run(run_id, status="interrupted")
    at = history_page()
    assert "Interrupted: the worker scoring it shut down" in texts(at)
    at.button(key="btn_hist_resume").click().run()
    no_exception(at)
    deadline = time.monotonic() + TIMEOUT
    while store.get_run(run_id).status != "finished" and time.monotonic() < deadline:
        time.sleep(0.1)
    info = store.get_run(run_id)
    assert (info.status, info.n_done) == ("finished", 6)
    assert store.pending_samples(run_id) == []


def test_delete_stops_a_running_run_before_deleting_it(history):
    """A slow pinned run scored by this process's worker: Delete stops it, then removes it; no judge
    call happens after the delete."""
    calls = []

    class SlowJudge:
        def generate(self, prompt):
            calls.append(time.monotonic())
            time.sleep(0.02)
            return '{"score": 0.7, "reasoning": "ok"}'

    store = RunStore(history)
    run_id = run_jobs.submit_new(store, RunConfig(), rows(400), dataset_name="doomed.jsonl", judge=SlowJudge())
    from evaluator.runs.child import local_worker
    local_worker(str(history))
    deadline = time.monotonic() + TIMEOUT
    while not calls and time.monotonic() < deadline:
        time.sleep(0.05)
    assert calls, "the local worker never started the run"
    at = history_page()
    at.button(key="btn_hist_delete").click().run()
    at.button(key="btn_hist_delete_yes").click().run()
    no_exception(at)
    deleted = time.monotonic()
    assert store.list_runs() == []
    time.sleep(1.5)
    assert not [t for t in calls if t > deleted + 0.1], "the judge was called after the run was deleted"
