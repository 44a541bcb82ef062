"""pages/_stale_timers.py without a browser: which reruns are dropped, on Streamlit's own request queue and
script runner, and that the guard is in place on the Streamlit this project installs (an upgrade that
moved what it wraps fails here, not silently)."""
from types import SimpleNamespace

from streamlit.runtime.scriptrunner import script_runner
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData, ScriptRequests

from pages import _stale_timers as stale_timers


def tick(page="history"):
    return RerunData(page_script_hash=page, fragment_id="f1", is_auto_rerun=True)


def test_a_fragment_rerun_naming_another_page_is_stale():
    assert stale_timers.stale(RerunData(page_script_hash="history", fragment_id_queue=["f1"]), "report")
    assert stale_timers.stale(tick(), "report")


def test_full_reruns_and_fragment_reruns_of_the_page_shown_are_not():
    assert not stale_timers.stale(RerunData(page_script_hash="report"), "history")  # a page change
    assert not stale_timers.stale(RerunData(page_script_hash="report", fragment_id_queue=["f1"]), "report")
    assert not stale_timers.stale(tick(), "")  # nothing shown yet


def test_the_runner_drops_a_stale_tick_and_runs_everything_else():
    ran = []
    run = stale_timers._guarded_run(lambda self, data: ran.append(data))
    runner = SimpleNamespace(_get_script_run_ctx=lambda: SimpleNamespace(page_script_hash="report"))
    switch, own = RerunData(page_script_hash="history"), tick("report")
    for data in (tick("history"), switch, own):
        run(runner, data)
    assert ran == [switch, own]


def test_a_tick_arriving_while_a_page_switch_is_queued_leaves_the_switch_as_it_was():
    stale_timers.install()
    requests = ScriptRequests()  # a session's queue while its script runs: nothing pending
    switch = RerunData(page_script_hash="report", page_name="report")
    assert requests.request_rerun(switch)
    assert requests.request_rerun(tick("history"))  # accepted: the switch redraws every fragment anyway
    pending = requests.on_scriptrunner_ready().rerun_data
    assert pending.page_script_hash == "report" and not pending.fragment_id_queue


def test_a_click_inside_a_fragment_is_still_folded_into_a_queued_rerun():
    stale_timers.install()
    requests = ScriptRequests()
    assert requests.request_rerun(RerunData(page_script_hash="history"))
    assert requests.request_rerun(RerunData(page_script_hash="history", fragment_id="f1"))  # a user's click
    assert requests.on_scriptrunner_ready().rerun_data.page_script_hash == "history"
    assert not stale_timers.folds_into_full_rerun(RerunData(page_script_hash="history"),
                                                  RerunData(page_script_hash="history", fragment_id="f1"))


def test_the_guard_wraps_streamlit_once():
    assert stale_timers.install() and stale_timers.install()
    wrapped = script_runner.ScriptRunner._run_script, ScriptRequests._request_rerun_locked
    assert all(getattr(w, "_ragmeter_stale_timer_guard", False) for w in wrapped)
    stale_timers.install()
    assert (script_runner.ScriptRunner._run_script, ScriptRequests._request_rerun_locked) == wrapped
