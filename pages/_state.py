"""Every key the dashboard keeps in `st.session_state`, and the only code that touches it.

Two kinds of key live here:
- app data (the report shown, the live run, the dataset, the rubrics, ...), read and written
  through the accessors below;
- the widget keys that other code reads or sets through session state (a callback reading a
  form, a button filling the Spot check fields, the run reading the API key field). A widget
  key nothing else looks up stays a literal next to its widget.
tests/app/test_state_keys.py checks that no other module names a session-state key by literal.

Keeping widget values across pages: one way, Streamlit's own `persist_state=KEEP` ("session") on
the widget. Streamlit drops a widget's value when a run does not draw it (another page, or a
field hidden by a choice); with "session" it keeps the value under the widget's key and gives it
back when the widget is drawn again. The other way this app used, re-assigning every kept key
on every run (`st.session_state[k] = st.session_state[k]`), needed a page-to-prefix table that
each new page had to join, and warned when a kept value met its own widget. Kept values a page can
no longer offer (a pick from a bigger report) are dropped with `drop_stale` before the widget.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Optional, Sequence

import streamlit as st

if TYPE_CHECKING:  # types only: the modules that define them import this one
    from evaluator.model import EvalReport, EvalResult
    from pages._data import LoadedDataset
    from pages._runs import RunMeta

KEEP: Final = "session"  # persist_state of every widget whose value outlives a page switch

# --- app data ---------------------------------------------------------------------------------
REPORT = "report"  # EvalReport shown on the Report page
RUN = "run"  # RunMeta: which run that report is (id, dataset, settings, status)
LIVE = "live_run"  # the run id (a str, never the Run) this session follows, until a page sees it end
DATASET = "dataset"  # LoadedDataset chosen on the Evaluate page
UPLOAD = "upload"  # (file name, bytes) of the last upload, so it survives page switches
RUBRICS = "rubrics"  # rubric metrics defined on the Evaluate page: name -> TOML table (RunConfig.rubrics)
RUBRIC_PROBLEM = "rubric_problem"  # the last rubric form / import error, shown once
TARGET_TEST = "target_test"  # (TargetConfig, TargetResponse) of the last Test target click
SPOT = "spot_result"  # EvalResult of the last spot check
COMPARISON = "comparison"  # service.Comparison last computed on the History page (both tests per metric)
DELETE_PENDING = "delete_pending"  # run id waiting for the user to confirm its deletion
LINKED = "report_linked"  # the run id the Report page last wrote into its address (?run=)
COMPARE_SHARED = "hist_cmp_shared"  # the ?compare=a,b pair last compared (a share link compares once)
UPLOAD_REFUSED = "eval_upload_refused"  # size in bytes of an upload refused as too big (team mode's limit)
GEN = "gen_shown"  # Generate: the id (a str, never the items) of the generation the page shows
GEN_LIVE = "gen_live"  # Generate: the generation id this session follows in progress, until it sees it end

# --- widget keys read or set through session state ----------------------------------------------
REV_RUN, REV_METRIC, REVIEWER = "rev_run", "rev_metric", "rev_reviewer"  # Review: run, queue metric, your name
REV_POS = "rev_pos"  # Review: the position in the queue
REV_FLASH = "rev_flash"  # Review: the last save's message, shown once
REV_CURSOR = "rev_cursor"  # Review: the queue the page last drew, which the action buttons' callbacks walk
REV_SHOWN = "rev_shown"  # Review: the (run, sample, reviewer) whose stored reviews the form was filled from
HISTORY_PATH = "history_path"  # sidebar text input: the history database file
EVAL_SOURCE = "eval_source"  # Evaluate: bundled sample or upload
UPLOAD_FILE = "upload_file"  # Evaluate: the dataset uploader
TOOL_EVIDENCE = "eval_tool_evidence"  # Evaluate: a conversation's tool replies are contexts of the next turn
EVAL_PROJECT = "eval_project"  # Evaluate: the run's project name (the run reads it when it starts)
EVAL_NAME = "eval_name"  # Evaluate: the run's name (empty: "dataset · scorer · date")
CHOSEN_METRICS = "eval_metrics"  # Evaluate: the metrics multiselect (callbacks add new rubrics to it)
RUBRIC_NAME, RUBRIC_CRITERIA, RUBRIC_FIELDS = "rubric_name", "rubric_criteria", "rubric_fields"
RUBRIC_SCALE, RUBRIC_STEPS, RUBRIC_UPLOAD = "rubric_scale", "rubric_steps", "rubric_upload"
REP_CATEGORIES, REP_METRIC, REP_SAMPLE = "rep_categories", "rep_metric", "rep_sample"  # Report filters
REP_SORT, REP_DESC, REP_PAGE = "rep_sort", "rep_desc", "rep_page"  # Report: the Samples table's order and page
REP_QUERY = "rep_query"  # Report: the filters and order the page number belongs to (a new query starts at page 1)
REP_CHAT_FOCUS = "rep_chat_focus"  # Report: (row, turn index) the "worst turn" button asked to open
REP_DOWNLOAD_FAILED = "rep_download_failed"  # Report: a dict the downloads write why a file could not be made
SPOT_QUESTION, SPOT_ANSWER = "spot_question", "spot_answer"
SPOT_CONTEXTS, SPOT_GROUND_TRUTH = "spot_contexts", "spot_ground_truth"


def judge_key(prefix: str, field: str) -> str:
    """The key of one judge-picker widget (`field`: judge, model, api_key, ...) drawn under `prefix`."""
    return f"{prefix}_{field}"


def review_field(kind: str, metric: str) -> str:
    """The key of one Review-form widget: kind "v" (verdict), "c" (corrected score) or "n" (note)."""
    return f"rev_{kind}_{metric}"


# --- generic access ---------------------------------------------------------------------------
def get(key: str, default: Any = None) -> Any:
    return st.session_state.get(key, default)


def has(key: str) -> bool:
    return key in st.session_state


def put(key: str, value: Any) -> None:
    st.session_state[key] = value


def drop(*keys: str) -> None:
    for key in keys:
        st.session_state.pop(key, None)


def take(key: str) -> Any:
    """The value under `key`, removed (a message shown once)."""
    return st.session_state.pop(key, None)


def fill(values: dict) -> None:
    """Set several keys at once (a callback filling a page's fields)."""
    st.session_state.update(values)


def drop_stale(key: str, allowed: Sequence[Any]) -> None:
    """Forget a kept widget value the page can no longer offer (e.g. a pick from a bigger report).

    Lists keep the entries still allowed; anything else is dropped, so the widget falls back to
    its default instead of failing on a value outside its options.
    """
    value = st.session_state.get(key)
    if isinstance(value, list):
        if any(v not in allowed for v in value):
            st.session_state[key] = [v for v in value if v in allowed]
    elif value is not None and value not in allowed:
        del st.session_state[key]


# --- typed access to the app data ----------------------------------------------------------------
def live_run() -> Optional[str]:
    """The id of the run this session started (or resumed) and follows, until a page has seen it end.

    Only the id: the run itself is a job in the history (service.submit_run), scored by a
    worker, so any tab or replica reads the same progress and a rerun holds no rows."""
    value = st.session_state.get(LIVE)
    return value if isinstance(value, str) else None


def running() -> bool:
    """This session follows a run that has not been seen to end (queued or being scored)."""
    return live_run() is not None


def report() -> Optional["EvalReport"]:
    return st.session_state.get(REPORT)


def run_meta() -> Optional["RunMeta"]:
    return st.session_state.get(RUN)


def dataset() -> Optional["LoadedDataset"]:
    return st.session_state.get(DATASET)


def spot_result() -> Optional["EvalResult"]:
    return st.session_state.get(SPOT)
