"""A page's timer firing after the user left the page must not blank, or undo, the page they went to.

A fragment with `run_every` (History's and Evaluate's list of runs in progress, the sidebar's progress line)
is rerun by a browser timer that names the page it was drawn on. Streamlit's browser clears those timers
only when the next page's first message arrives, so on a busy server a tick that left while a page switch
was in flight reaches the server as "rerun fragment F of History" while Report is being drawn. Two harms
followed, both seen with the server's messages held for 2.5 s after "Open in report" (a browser test):

- The server ran the tick after the Report's run. Run as History's, the browser took its "new run" for a
  page change and emptied the page. Run as Report's (this guard's first form), it was a fragment run whose
  start reached the browser in the same burst as the Report's "finished": Streamlit's browser then cleans
  up the finished run's stale elements against the later run's id, and removed every element the Report
  had just drawn (the main area stayed blank in 1 of 8 tries under load; Streamlit issue #16708 describes
  a cleanup run against a later run's id too).
- A tick arriving while the switch is queued is folded into it, and the folded rerun keeps the tick's page:
  the switch to Report would run History again.

`install()` wraps Streamlit once per process so that such a tick is dropped, never run: at run time, a
fragment rerun naming a page other than the one shown (`stale`); at request time, a timer's fragment rerun
arriving while a full rerun is queued (`folds_into_full_rerun`: the full rerun redraws every fragment of its
page anyway). Fragment reruns of the page shown, user interactions and full reruns are untouched.
"""
from __future__ import annotations

import logging
from typing import Any, Callable

log = logging.getLogger(__name__)
_MARK = "_ragmeter_stale_timer_guard"


def stale(rerun_data: Any, shown_page: str) -> bool:
    """Whether `rerun_data` (Streamlit's RerunData) is a fragment rerun that names a page other than
    `shown_page` (nothing is stale before a page is shown)."""
    asked = getattr(rerun_data, "page_script_hash", "")
    return bool(_asks_fragments(rerun_data) and asked and shown_page and asked != shown_page)


def folds_into_full_rerun(pending: Any, new_data: Any) -> bool:
    """Whether `new_data` is a timer's fragment rerun arriving while the full rerun `pending` is queued:
    folding would give the full rerun the tick's page, and the full rerun redraws the fragment anyway."""
    if pending is None or not getattr(new_data, "is_auto_rerun", False):
        return False
    pending_full = not (_asks_fragments(pending) or getattr(pending, "is_fragment_scoped_rerun", False))
    return _asks_fragments(new_data) and pending_full


def _asks_fragments(rerun_data: Any) -> bool:
    """Whether a rerun names fragments (a bare `fragment_id` as the browser sends it, or the queue it is
    folded into)."""
    return bool(getattr(rerun_data, "fragment_id", None) or getattr(rerun_data, "fragment_id_queue", None))


def install() -> bool:
    """Wrap Streamlit's ScriptRunner._run_script and ScriptRequests._request_rerun_locked once per process.
    False (and a warning in the server log) when this Streamlit no longer has the parts it wraps: the app
    still runs, without the guard."""
    try:
        from streamlit.runtime.scriptrunner import script_runner
        from streamlit.runtime.scriptrunner_utils import script_requests
        runner, requests = script_runner.ScriptRunner, script_requests.ScriptRequests
        run_script, request_locked = runner._run_script, requests._request_rerun_locked
        rerun_state = script_requests.ScriptRequestType.RERUN
    except (ImportError, AttributeError) as exc:
        log.warning("cannot guard against stale fragment timers on this Streamlit: %s", exc)
        return False
    if not getattr(run_script, _MARK, False):
        setattr(runner, "_run_script", _guarded_run(run_script))  # on the class: every session's runner
    if not getattr(request_locked, _MARK, False):
        setattr(requests, "_request_rerun_locked", _guarded_request(request_locked, rerun_state))
    return True


def _guarded_run(original: Callable[..., None]) -> Callable[..., None]:
    def _run_script(self: Any, rerun_data: Any) -> None:
        try:
            shown = self._get_script_run_ctx().page_script_hash
        except Exception:  # no context yet (the session's first run): nothing is shown, nothing to guard
            shown = ""
        if stale(rerun_data, shown):
            log.info("dropped a fragment rerun of page %s: page %s is shown", rerun_data.page_script_hash, shown)
            return None
        return original(self, rerun_data)

    setattr(_run_script, _MARK, True)
    return _run_script


def _guarded_request(original: Callable[..., bool], rerun_state: Any) -> Callable[..., bool]:
    def _request_rerun_locked(self: Any, new_data: Any) -> bool:
        pending = self._rerun_data if self._state == rerun_state else None
        if folds_into_full_rerun(pending, new_data):
            log.info("dropped a timer's fragment rerun of page %s: a full rerun is queued",
                     getattr(new_data, "page_script_hash", ""))
            return True  # accepted: the queued full rerun answers it
        return original(self, new_data)

    setattr(_request_rerun_locked, _MARK, True)
    return _request_rerun_locked
