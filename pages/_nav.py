"""The shell: the page list, the navigation app.py runs, and the sidebar every page shares.

A new page is a file in pages/ that starts with `page_setup()`, plus its registration in _pages.PAGES (which
names its docs page and picture too; docs/extending.md).
"""
from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, List

import streamlit as st
from streamlit import config as st_config

from evaluator import service

from pages import _errors as errors
from pages import _receivers as receivers
from pages import _runs as runs
from pages import _stale_timers as stale_timers
from pages import _state as state
from pages import _team as team
from pages._pages import (
    EVALUATE_PAGE, GENERATE_PAGE, HISTORY_PAGE, MONITOR_PAGE, PAGES, REPORT_PAGE, REVIEW_PAGE, SPOT_PAGE,
)
from pages._views import format_score

log = logging.getLogger("ragmeter.dashboard")

# A file, not ":material/...:": Streamlit fetches a material-icon favicon from a font CDN, and the
# dashboard must make no request beyond the server it runs on (it has to work air-gapped).
FAVICON = Path(__file__).resolve().parent.parent / "assets" / "favicon.png"
# Text areas take each line's direction from its first letter, so Arabic input reads right-to-left.
INPUT_CSS = "<style>textarea, input[type=text] { unicode-bidi: plaintext; text-align: start; }</style>"

_SHELL = threading.local()  # .active is True while app.py runs a page on this script thread


def pages() -> List[Any]:
    """The app's pages, for st.navigation."""
    return [st.Page(p.path, title=p.title, icon=p.icon, default=i == 0) for i, p in enumerate(PAGES)]


def set_page_config() -> None:
    st.set_page_config(page_title="ragmeter", page_icon=str(FAVICON), layout="wide")


def run_app() -> None:
    """app.py's body: page config, then register the pages and run the chosen one."""
    set_page_config()
    stale_timers.install()  # once per process: a timer of the page left behind must not blank the page shown
    page = st.navigation(pages())
    _SHELL.active = True
    try:
        receivers.ensure()  # the operator's [[collect]] receivers, started with the dashboard
        page.run()
        refresh_sidebar()  # the page may have changed the dataset or ended a run since the sidebar was drawn
    except Exception as exc:  # the last net: a message, never a traceback (st.rerun/st.stop pass through)
        log.exception("page %s failed", page.title)
        errors.error("This page hit a problem: {problem}", problem=exc)
    finally:
        _SHELL.active = False


def page_setup() -> None:
    """What every page starts with: the input style and the shared sidebar.

    Streamlit runs a file under pages/ by itself, without app.py, while it still treats that
    folder as a legacy multipage app: until st.navigation has been called once in the process
    (a deep link as the first request), and on every AppTest run. In the app such a run
    registers the real pages, which ends the legacy mode, and starts over through app.py. Under
    AppTest (which restores the legacy mode before every run, and whose clicks a rerun would
    eat) the page simply goes on without app.py.
    """
    if not getattr(_SHELL, "active", False):
        set_page_config()
        if not st_config.get_option("global.appTest"):  # st.get_option does not see AppTest's patch
            st.navigation(pages())
            st.rerun()
    team.gate()  # team mode: nothing below is drawn for a user who is not signed in and allowed
    st.html(INPUT_CSS)
    sidebar()


def button_link(label: str, page: str, key: str, **kwargs: Any) -> None:
    """A button that switches page (a real button, so browser tests can click it by its label)."""
    if st.button(label, key=key, **kwargs):
        st.switch_page(page)


def sidebar() -> None:
    """Shared sidebar: title, history database path, then the current dataset and run status."""
    with st.sidebar:
        st.markdown("## :material/straighten: ragmeter")
        st.caption("Scores RAG answers on five metrics, with the reasoning behind every number.")
        team.identity_line()
        if not team.config().team and not team.config().server.history:
            history_field()
        _SHELL.status = st.empty()
    refresh_sidebar()


def history_field() -> None:
    """The laptop's history-file field; a refused path says why and the default stays in use."""
    default = service.default_history()
    typed = st.text_input("History database", value=default, key=state.HISTORY_PATH,
                          help="SQLite file where every run is saved (default: $RAGMETER_HISTORY or ~/.ragmeter): "
                               "a .sqlite3, .sqlite or .db file in an existing folder under your home folder "
                               "or the folder the dashboard runs in.")
    if typed and typed != default:
        try:
            service.check_history_path(typed)
        except service.ConfigError as exc:
            errors.error("Not used: {problem}. Runs go to {default}.", problem=exc, default=default)


def refresh_sidebar() -> None:
    """Draw the sidebar's dataset and run lines again, from the session state as it is now.

    The sidebar is drawn before the page, so a page that loads a dataset or ends a run calls
    this (run_app does after every page). While a run goes on, a fragment polls it once a second,
    so the sidebar (and the page) move on when the run ends, on any page, without a click.
    """
    slot = getattr(_SHELL, "status", None)
    if slot is None:
        return
    with slot.container():
        if state.running():
            _live_status()
        else:
            _status_lines()


@st.fragment(run_every=1.0)
def _live_status() -> None:
    """The sidebar while this session follows a run: one small read of its job a second."""
    run_id = state.live_run()
    job = None
    if run_id is not None:
        try:
            job = runs.job(run_id)
        except Exception as exc:  # the history is out of reach: say so, and keep the run followed
            errors.caption("Run in progress: its progress cannot be read now ({problem}).", problem=exc)
            return
        if not runs.active(job):
            runs.collect(run_id, job)
            st.rerun()  # the whole page: it shows the finished run, the sidebar its report
    _status_lines(job)


def _status_lines(job: Any = None) -> None:
    dataset, report = state.dataset(), state.report()
    if dataset is not None:
        errors.caption("Dataset: **{name}** · {n:,} samples", name=dataset.name, n=len(dataset.samples))
    if job is not None:
        total = job.progress.total if job.progress is not None else 0
        errors.caption("Run in progress: **{name}** · {done}", name=job.dataset_name,
                       done=f"queued, {runs.ordinal(job.position or 1)} in line" if job.state == "queued"
                       else f"{job.progress.done if job.progress else 0:,}/{total:,} scored")
    elif report is not None:
        meta = state.run_meta()
        errors.caption("Report: **{name}** · {status} · {n:,} samples · overall {mean}",
                       name=meta.dataset_name if meta else "", status=meta.status if meta else "",
                       n=len(report.results), mean=format_score(report.overall_mean()))
    elif (meta := state.run_meta()) is not None and meta.n_rows is not None:  # a stored run: its figures, not rows
        errors.caption("Report: **{name}** · {status} · {n:,} samples · overall {mean}", name=meta.dataset_name,
                       status=meta.status, n=meta.n_rows, mean=format_score(meta.overall))
