"""A page's timer firing after the user left the page must not blank the page they went to.

A fragment with `run_every` (History's and Evaluate's list of runs in progress, the sidebar's progress line)
is rerun by a browser timer that names the page it was drawn on. Streamlit's browser clears those timers
only when the next page's first message arrives, and its server runs a queued fragment rerun after the
next page's run has finished. So a timer that fires while a page switch is in flight (a second or more on a
busy server) reaches the server as "rerun fragment F of History" while Report is shown. The server finds
no such fragment and draws nothing, but it still announces the run as History's; the browser takes that for
a page change and empties the page: the Report is blank until the next click (a browser test saw it, under
load, in about one switch in three).

`install()` makes the server run such a rerun as a rerun of the page the session shows now: the fragment
is still skipped (it is not on this page), the browser is told nothing changed, and the page stays drawn.
A fragment rerun of the page shown is left as it is.
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Any

log = logging.getLogger(__name__)
_MARK = "_ragmeter_stale_timer_guard"


def retarget(rerun_data: Any, shown_page: str) -> Any:
    """`rerun_data` (Streamlit's RerunData), made a rerun of `shown_page` when it is a fragment rerun that
    names another page; otherwise unchanged."""
    asked = getattr(rerun_data, "page_script_hash", "")
    if not getattr(rerun_data, "fragment_id_queue", None) or not asked or not shown_page or asked == shown_page:
        return rerun_data
    log.info("a fragment rerun of page %s arrived while page %s is shown: run against the page shown", asked,
             shown_page)
    return dataclasses.replace(rerun_data, page_script_hash=shown_page, page_name="")


def install() -> bool:
    """Wrap Streamlit's ScriptRunner._run_script once per process. False (and a warning in the server log)
    when this Streamlit no longer has the parts it wraps: the app still runs, without the guard."""
    try:
        from streamlit.runtime.scriptrunner import script_runner
        runner = script_runner.ScriptRunner
        original = runner._run_script
    except (ImportError, AttributeError) as exc:
        log.warning("cannot guard against stale fragment timers on this Streamlit: %s", exc)
        return False
    if getattr(original, _MARK, False):
        return True

    def _run_script(self: Any, rerun_data: Any) -> None:
        try:
            shown = self._get_script_run_ctx().page_script_hash
        except Exception:  # no context yet (the session's first run): nothing is shown, nothing to guard
            shown = ""
        return original(self, retarget(rerun_data, shown))

    setattr(_run_script, _MARK, True)
    setattr(runner, "_run_script", _run_script)  # a method replaced on the class: every session runner gets it
    return True
