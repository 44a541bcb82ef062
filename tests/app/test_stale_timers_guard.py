"""pages/_stale_timers.py without a browser: which reruns are retargeted, and that the guard is in place
on the Streamlit this project installs (an upgrade that moved what it wraps fails here, not silently)."""
from streamlit.runtime.scriptrunner import script_runner
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData

from pages import _stale_timers as stale_timers


def test_a_fragment_rerun_naming_another_page_runs_against_the_page_shown():
    tick = RerunData(page_script_hash="history", page_name="history", fragment_id_queue=["f1"], is_auto_rerun=True)
    moved = stale_timers.retarget(tick, "report")
    assert (moved.page_script_hash, moved.page_name, moved.fragment_id_queue) == ("report", "", ["f1"])
    assert moved.is_auto_rerun


def test_full_reruns_and_fragment_reruns_of_the_page_shown_are_left_alone():
    switch = RerunData(page_script_hash="report", page_name="report")  # a page change is a full rerun
    same = RerunData(page_script_hash="report", fragment_id_queue=["f1"])
    first = RerunData(page_script_hash="history", fragment_id_queue=["f1"])
    assert stale_timers.retarget(switch, "history") is switch
    assert stale_timers.retarget(same, "report") is same
    assert stale_timers.retarget(first, "") is first  # nothing shown yet


def test_the_guard_wraps_streamlits_script_runner_once():
    assert stale_timers.install() and stale_timers.install()
    wrapped = script_runner.ScriptRunner._run_script
    assert getattr(wrapped, "_ragmeter_stale_timer_guard", False)
    stale_timers.install()
    assert script_runner.ScriptRunner._run_script is wrapped
