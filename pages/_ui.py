"""The dashboard's one UI-helper module: session keys, cached loaders, the shell and shared widgets.

Pages (pages/*.py) are thin views; what they share lives here. Nothing here scores or runs
anything: scoring, the background run (evaluator.runs), statistics, charts and exports all come
from the `evaluator` library.

State lives under the session keys below and nowhere else, so switching pages keeps the run. A
run is an evaluator.runs.Run on its own thread; a page only watches its counters (~10 redraws a
second however fast the offline judge scores), so Stop keeps every finished row and leaving the
page does not kill the run.
"""
from __future__ import annotations

import hashlib
import html
import io
import json
import logging
import os
import re
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import streamlit as st
from streamlit import config as st_config

from evaluator.analysis.bands import BAND_COLORS, NA_COLOR, badge_html, band, band_ranges
from evaluator.io.datasets import DASHBOARD, DatasetPreview, inspect_dataset, load_dataset
from evaluator.errors import RagmeterError
from evaluator.history import RunStore, default_history_location
from evaluator.model import METHOD_LABELS, EvalReport, EvalResult, EvalSample
from evaluator.judges.cache import default_cache_path
from evaluator.judges.registry import get_judge, judge_kinds, judge_plugin_errors
from evaluator.runs import OPENAI as OPENAI_JUDGE, Run, RunConfig
from evaluator.chat_runs import ConversationRun, is_conversation_rows
from evaluator.config import ConfigError, typed_history_path
from evaluator.judges.openai import DEFAULT_BASE_URL

from pages import _team as team

log = logging.getLogger("ragmeter.dashboard")

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_data"
# A file, not ":material/...:": Streamlit fetches a material-icon favicon from a font CDN, and the
# dashboard must make no request beyond the server it runs on (it has to work air-gapped).
FAVICON = Path(__file__).resolve().parent.parent / "assets" / "favicon.png"
DEFAULT_SAMPLE = "sample.jsonl"

# --- session-state keys: everything the app remembers ------------------------------------------
REPORT = "report"  # EvalReport shown on the Report page
RUN = "run"  # RunMeta: which run that report is (id, dataset, settings, status)
LIVE = "live_run"  # evaluator.runs.Run while a run is being scored, until a page collects it
DATASET = "dataset"  # LoadedDataset chosen on the Evaluate page
SPOT = "spot_result"  # EvalResult of the last spot check
COMPARISON = "comparison"  # RunComparison last computed on the History page
DELETE_PENDING = "delete_pending"  # run id waiting for the user to confirm its deletion
UPLOAD = "upload"  # (file name, bytes) of the last upload, so it survives page switches
RUBRICS = "rubrics"  # rubric metrics defined on the Evaluate page: name -> TOML table (RunConfig.rubrics)
HISTORY_PATH = "history_path"  # sidebar text input: the history database file
LINKED = "report_linked"  # the run id the Report page last wrote into its address (?run=)
# Widget keys follow a per-page prefix so their values can outlive page switches (see
# keep_widget_state); buttons use "btn_" and are never kept (a button's state cannot be set).
PAGE_WIDGET_PREFIXES = {"Evaluate": ("eval_", "map_"), "Report": ("rep_",), "Spot check": ("spot_",),
                        "Review": ("rev_",)}

# Page files, for st.switch_page (registered by pages()).
EVALUATE_PAGE = "pages/evaluate.py"
REPORT_PAGE = "pages/report.py"
SPOT_PAGE = "pages/spot_check.py"
HISTORY_PAGE = "pages/history.py"
REVIEW_PAGE = "pages/review.py"

UI_INTERVAL = 0.1  # seconds between progress redraws: at most ~10 a second
DEFAULT_MAX_ROWS = 100_000
DEFAULT_MAX_MB = 200  # matches server.maxUploadSize in .streamlit/config.toml
OFFLINE, OPENAI = "Offline (no API key)", "OpenAI-compatible API"
LANGUAGES = {"auto": "Auto-detect", "en": "English", "ar": "Arabic (العربية)"}
GREY = NA_COLOR
NA = "–"  # shown for a skipped score or a missing value, in every table
_ARABIC_LETTER = re.compile(r"[\u0600-\u06FF]")
_LATIN_LETTER = re.compile(r"[A-Za-z]")
# Text areas take each line's direction from its first letter, so Arabic input reads right-to-left.
INPUT_CSS = "<style>textarea, input[type=text] { unicode-bidi: plaintext; text-align: start; }</style>"


# --- errors: never a traceback ----------------------------------------------------------------
def friendly(exc: BaseException) -> str:
    """A short message for the user; ragmeter's own errors already say what to do."""
    if isinstance(exc, RagmeterError):
        return str(exc)
    return f"Something went wrong ({type(exc).__name__}). Details are in the server log; please retry."


@contextmanager
def guard(what: str) -> Iterator[None]:
    """Show any exception in the block as an inline st.error and log the details."""
    try:
        yield
    except Exception as exc:  # Streamlit's rerun/stop signals are BaseException and pass through
        log.warning("%s failed", what, exc_info=not isinstance(exc, RagmeterError))
        st.error(f"{what} failed: {friendly(exc)}", icon=":material/warning:")


def keep_widget_state(current_page: str) -> None:
    """Keep the widget values of the pages not shown now.

    Streamlit forgets a widget's value when a run does not draw it. Re-assigning the value
    keeps it, but only on other pages: on its own page the widget would warn about a value set
    through the Session State API.
    """
    prefixes = tuple(p for page, ps in PAGE_WIDGET_PREFIXES.items() if page != current_page for p in ps)
    for key in list(st.session_state.keys()):
        if isinstance(key, str) and key.startswith(prefixes):
            st.session_state[key] = st.session_state[key]


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


# --- datasets ---------------------------------------------------------------------------------
@dataclass
class LoadedDataset:
    """The dataset the Evaluate page will score."""

    name: str
    samples: List[EvalSample]
    token: str  # content + mapping digest: a new token means a new dataset


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


@st.cache_data(max_entries=8, show_spinner=False)
def preview(data: bytes, name: str, max_bytes: Optional[int]) -> DatasetPreview:
    """Columns, first rows and detected mapping of an upload (cached by content)."""
    return inspect_dataset(io.BytesIO(data), preview_rows=5, max_bytes=max_bytes, name=name, surface=DASHBOARD)


@st.cache_data(max_entries=8, show_spinner="Reading the dataset…")
def parse(data: bytes, name: str, mapping: Tuple[Tuple[str, Optional[str]], ...],
          max_rows: Optional[int], max_bytes: Optional[int], needs_answer: bool = True) -> List[EvalSample]:
    """The samples of an upload under `mapping` (cached by content, mapping and limits)."""
    return load_dataset(io.BytesIO(data), dict(mapping), max_rows=max_rows, max_bytes=max_bytes, name=name,
                        surface=DASHBOARD, needs_answer=needs_answer)


def load_bytes(data: bytes, name: str, mapping: Optional[Dict[str, Optional[str]]] = None, *,
               max_rows: Optional[int] = DEFAULT_MAX_ROWS,
               max_bytes: Optional[int] = DEFAULT_MAX_MB * 1_000_000, needs_answer: bool = True) -> LoadedDataset:
    """Parse uploaded bytes into a LoadedDataset; raises DatasetError with file/line/column.

    `needs_answer=False` reads files without answers (a target will answer each question).
    """
    items = tuple(sorted((mapping or {}).items()))
    samples = parse(data, name, items, max_rows, max_bytes, needs_answer)
    return LoadedDataset(name, samples, digest(data + repr((items, needs_answer)).encode()))


def load_sample(name: str = DEFAULT_SAMPLE) -> LoadedDataset:
    """A bundled sample dataset."""
    return load_bytes((SAMPLE_DIR / name).read_bytes(), name)


# --- judges -----------------------------------------------------------------------------------
def env_api_key(base_url: str = "") -> str:
    """OPENAI_API_KEY from the environment or .streamlit/secrets.toml, else '' -- for OpenAI's own URL
    (or none typed) only: a base URL typed in the page never receives the server's key. In team mode
    never: a configured judge's key is read from its api_key_env when the judge is built."""
    if team.config().team or base_url.strip().rstrip("/") not in ("", DEFAULT_BASE_URL):
        return ""
    key = os.environ.get("OPENAI_API_KEY", "")
    if key:
        return key
    try:
        return str(st.secrets.get("OPENAI_API_KEY", "") or "")
    except Exception:  # no secrets file at all: Streamlit raises rather than returning empty
        return ""


def judge_widgets(prefix: str, *, run_options: bool = True) -> RunConfig:
    """Judge, language and (for runs) workers/cache/prices; widget keys start with `prefix`.

    The API key is not part of the config (it is never stored): read it with `api_key(prefix)`.
    """
    if team.config().team:  # judges by name from [[judges]]: no base URL, no key field
        c1, c2 = st.columns([3, 2])
        language = c2.selectbox("Language", list(LANGUAGES), format_func=LANGUAGES.get, key=f"{prefix}_language")
        with c1:
            config = team.judge_picker(prefix, language)
        return replace(config, **run_option_widgets(prefix)) if run_options and not config.offline else config
    for problem in judge_plugin_errors():  # a judge package that fails to load: said, not a traceback
        st.error(problem, icon=":material/extension_off:")
    labels = {get_judge(kind).label: kind for kind in judge_kinds()}  # the registered judges, built-ins first
    c1, c2 = st.columns([3, 2])
    label = c1.radio("Judge", list(labels), key=f"{prefix}_judge", horizontal=True)
    language = c2.selectbox("Language", list(LANGUAGES), format_func=LANGUAGES.get, key=f"{prefix}_language")
    entry = get_judge(labels.get(label, "offline"))
    if entry.offline:
        st.caption("Lexical heuristics score every metric: no network, no key, no cost.")
        return RunConfig(language=language)
    if entry.kind != OPENAI_JUDGE:
        return plugin_judge_widgets(prefix, entry.kind, language, run_options)
    c1, c2, c3 = st.columns(3)
    base_url = c1.text_input("Base URL", key=f"{prefix}_base_url", placeholder="https://api.openai.com/v1",
                             help="Any OpenAI-compatible server: OpenAI, Azure, vLLM, Ollama, llama.cpp.")
    model = c2.text_input("Model", value="gpt-4o-mini", key=f"{prefix}_model")
    # The field starts empty on purpose: a pre-filled value would travel to the browser.
    # A password field left with Tab never commits (focus moves to its own show-password eye, so the
    # field is not blurred) and Run would go without the key. live="0ms" + "ignore": every keystroke
    # stages the value in the browser, which sends it with the next rerun (the Run click) without
    # rerunning by itself, so even a click right after typing carries the key.
    api_key = c3.text_input("API key", type="password", key=f"{prefix}_api_key", live="0ms", on_change="ignore",
                            help="Used for this session's judge calls only; never saved or exported.")
    if not api_key:
        st.caption("API key empty: " + ("using OPENAI_API_KEY from the environment/secrets."
                                        if env_api_key(base_url) else "fine for local servers; hosted APIs need one "
                                        "(the server's own key goes only to OpenAI's URL)."))
    config = RunConfig(judge=OPENAI_JUDGE, model=model.strip(), base_url=base_url.strip(), language=language,
                       max_workers=1)
    return replace(config, **run_option_widgets(prefix)) if run_options else config


def plugin_judge_widgets(prefix: str, kind: str, language: str, run_options: bool) -> RunConfig:
    """A registered judge other than the built-ins: a model name and a key when its entry asks for them."""
    entry = get_judge(kind)
    c1, c2 = st.columns(2)
    model = c1.text_input("Model", key=f"{prefix}_{kind}_model") if entry.needs_model else ""
    if entry.needs_key:  # the field starts empty: a pre-filled value would travel to the browser
        c2.text_input("API key", type="password", key=f"{prefix}_api_key", live="0ms", on_change="ignore",
                      help=f"Used for this session's judge calls only; empty: {entry.key_env or 'none'} "
                           "from the environment.")
    config = RunConfig(judge=kind, model=model.strip(), language=language, max_workers=1)
    return replace(config, **run_option_widgets(prefix, entry.batch_api)) if run_options else config


def run_option_widgets(prefix: str, batch_api: bool = True) -> Dict[str, Any]:
    """Workers, judge cache, token prices and Batch API of a run with an API judge (RunConfig fields)."""
    c1, c2, c3, c4 = st.columns(4)
    batch = batch_api and st.checkbox("Batch API", key=f"{prefix}_batch",
                        help="Send every judge call in one OpenAI Batch API job (/files + /batches): half price "
                             "on OpenAI and Azure, replies within 24 h. Give batch prices below. You may stop "
                             "or leave: resuming the run from History picks the batch up.")
    return {
        "batch": batch,
        "max_workers": int(c1.number_input("Max workers", 1, 64, 4, key=f"{prefix}_workers",
                                           help="Samples scored at once; backs off by itself on rate limits.")),
        "cache": str(default_cache_path()) if c2.checkbox(
            "Judge cache", value=True, key=f"{prefix}_cache",
            help=f"Re-running unchanged data costs no calls. File: {default_cache_path()}") else "",
        "price_in": c3.number_input("Price / 1M input tokens", 0.0, None, None, key=f"{prefix}_price_in"),
        "price_out": c4.number_input("Price / 1M output tokens", 0.0, None, None, key=f"{prefix}_price_out"),
    }


@st.cache_data(max_entries=8, show_spinner="Estimating judge calls…")
def estimate(token: str, _samples: List[EvalSample], config_json: str) -> Dict[str, Any]:
    """Pre-run estimate of judge calls, tokens and cost (no network); cached per dataset token and
    run config (`config_json`: RunConfig.to_dict() as sorted JSON)."""
    from evaluator.costs import estimate_run

    config = RunConfig.from_dict(json.loads(config_json))
    return estimate_run(_samples, config.language, price_in=config.price_in, price_out=config.price_out,
                        metrics=config.chosen_metrics(), repeats=config.repeats,
                        judge_mode=config.judge_mode).to_dict()


def format_duration(seconds: Optional[float]) -> str:
    """A duration as people read it: '40 ms', '3.2 s', '4 min 05 s', '2 h 07 min'; '–' for None."""
    if seconds is None:
        return "–"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 90:
        return f"{seconds:.1f} s"
    if seconds < 5400:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"


# --- runs and reports in session state ----------------------------------------------------------
def history_path() -> str:
    """The history: [server].history in team mode (never typed); on a laptop the sidebar's file when
    config.typed_history_path accepts it, else $RAGMETER_HISTORY or ~/.ragmeter."""
    cfg = team.config()
    if cfg.server.history:
        return cfg.server.history
    default = str(default_history_location())
    typed = st.session_state.get(HISTORY_PATH)
    if cfg.team or not typed or typed == default:
        return default
    try:
        return str(typed_history_path(typed))
    except ConfigError:
        return default  # the sidebar shows why under the field


def open_store() -> RunStore:
    """The run history; raises HistoryError with a fix when the path cannot be used."""
    return RunStore(history_path())


@dataclass
class RunMeta:
    """Which run the Report page shows. `token` keys the cached charts and tables of this report."""

    dataset_name: str
    settings: Dict[str, Any]
    status: str
    run_id: Optional[str] = None
    created_at: str = ""
    total: int = 0  # samples in the run (more than the report holds when it was stopped)
    error: Optional[str] = None
    warning: Optional[str] = None
    token: str = field(default_factory=lambda: uuid.uuid4().hex)


def show_report(report: EvalReport, meta: RunMeta) -> None:
    """Make `report` the one the Report page shows."""
    st.session_state[REPORT] = report
    st.session_state[RUN] = meta


def open_run(run_id: str) -> None:
    """Make the stored run `run_id` the report shown (a share link's target); HistoryError if unknown."""
    store = open_store()
    info = store.get_run(run_id)
    show_report(store.load_report(run_id), RunMeta(info.dataset_name, info.settings, info.status, info.run_id,
                                                   info.created_at, total=info.n_samples))


def share_url(path: str) -> str:
    """`path` (e.g. /report?run=ID) on this dashboard's own address, as the browser sees it."""
    url = str(getattr(st.context, "url", "") or "")
    parts = url.split("/", 3)
    origin = "/".join(parts[:3]) if url.startswith(("http://", "https://")) and len(parts) >= 3 else ""
    return origin + path


def api_key(prefix: str) -> str:
    """The key typed in `prefix`'s API key field, read from its state at the moment of use (a key left
    with Tab counts as much as one confirmed with Enter), else, for the OpenAI judge, OPENAI_API_KEY from the
    environment/secrets (another judge reads its own variable when it is built)."""
    typed = "" if team.config().team else str(st.session_state.get(f"{prefix}_api_key") or "")
    if st.session_state.get(f"{prefix}_judge", OPENAI) != OPENAI:
        return typed
    return typed or env_api_key(str(st.session_state.get(f"{prefix}_base_url") or ""))


def start_run(samples: List[EvalSample], config: RunConfig, *, dataset_name: str, key: str = "",
              judge: Any = None, target: Any = None) -> Run:
    """Score `samples` on a background thread, saved to the history; the run goes in session state.

    `key` is the API key for this run only; `judge` overrides the one `config` describes (tests pass a slow one);
    `target` (a TargetConfig) answers each question first.
    """
    kind = ConversationRun if is_conversation_rows(samples) else Run  # a conversation file's rows are chats
    run = kind.new(config, samples, dataset_name=dataset_name, store=history_path(), api_key=key,
                  judge=judge, target=target, owner=team.owner(),
                  project=str(st.session_state.get("eval_project") or "").strip() or None)
    st.session_state[LIVE] = run.start()
    return run


def watch(run: Run) -> None:
    """Redraw the progress until the run ends (~10 times a second), then collect its report."""
    box = st.empty()
    while True:
        running = run.running
        with box.container():
            progress_view(run)
        if not running:
            break
        time.sleep(UI_INTERVAL)
    box.empty()  # the page says how it ended (Evaluate: run_outcome)
    collect(run)
    refresh_sidebar()


def collect(run: Run) -> None:
    """Make an ended run's report the current one, once: whoever sees it end first collects it."""
    if st.session_state.get(LIVE) is not run:
        return
    st.session_state.pop(LIVE, None)
    show_report(run.report or EvalReport(), RunMeta(run.dataset_name, run.settings, run.status, run.run_id,
                                                    total=run.total, error=run.error, warning=run.warning))


def progress_view(run: Run) -> None:
    """Progress bar with done/total, elapsed, ETA and the running means."""
    frac = min(run.done / run.total, 1.0) if run.total else 1.0
    if run.target is not None:  # two stages: the pipeline answers, the judge scores each answer as it comes
        asked = min(run.answered / run.total, 1.0) if run.total else 1.0
        st.progress(asked, text=f"{run.answered:,}/{run.total:,} questions answered by your pipeline ({asked:.0%})")
    st.progress(frac, text=f"{run.done:,}/{run.total:,} samples scored ({frac:.0%})")
    cells = st.columns(4 if run.target is not None else 3)
    if run.target is not None:
        cells[0].metric("Answered", f"{run.answered:,}/{run.total:,}")
    c1, c2, c3 = cells[-3:]
    c1.metric("Scored", f"{run.done:,}/{run.total:,}")
    c2.metric("Elapsed", format_duration(run.elapsed()))
    c3.metric("ETA", format_duration(run.eta()) if run.running else "done")
    if run.batch_status and run.running and not run.done:
        st.info(f"Batch API: {run.batch_status}. Stopping or closing the page is safe: resume this run from "
                "the History page to pick the batch up.", icon=":material/schedule:")
    means = run.means()
    if means:
        st.caption("Running means: " + " · ".join(f"{n} {v:.3f}" for n, v in means.items()))


# --- shared display widgets -----------------------------------------------------------------------
def plain(text: str) -> str:
    """Text that may quote a target's or a judge's reply, shown literally inside a Markdown box."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$])", r"\\\1", text)


def format_score(value: Optional[float]) -> str:
    """A mean as the dashboard shows it: N/A when nothing was scored, never 0.000."""
    return "N/A" if value is None else f"{value:.3f}"


def badge(score: Optional[float], skipped: bool = False, *, show_score: bool = True) -> str:
    """A coloured pill with the score and its band (HTML; contains no user text)."""
    if skipped or score is None:
        return badge_html(None, "N/A · skipped")
    return badge_html(score, (f"{score:.3f} · " if show_score else "") + band(score))


def direction(text: str) -> str:
    """'rtl' for mostly-Arabic text, else 'auto' (English reasoning that quotes an Arabic word stays LTR)."""
    arabic = len(_ARABIC_LETTER.findall(text))
    return "rtl" if arabic and arabic >= len(_LATIN_LETTER.findall(text)) else "auto"


def text_block(label: str, text: Optional[str]) -> None:
    """User text shown safely (escaped) and right-to-left when it is Arabic."""
    text = text or ""
    way = direction(text)
    body = html.escape(text).replace("\n", "<br>") or "<i>(empty)</i>"
    # plaintext: each line takes the direction of its own first letter, so mixed text reads right.
    st.markdown(f"**{label}**")
    st.markdown(f'<div dir="{way}" style="text-align:{"right" if way == "rtl" else "start"};unicode-bidi:plaintext;'
                f'padding:6px 10px;border-inline-start:3px solid #ddd;margin-bottom:8px">{body}</div>',
                unsafe_allow_html=True)


def sample_view(sample: Optional[EvalSample]) -> None:
    """Question, answer, reference and each context of a sample."""
    if sample is None:
        st.info("This result carries no sample text.")
        return
    text_block("Question", sample.question)
    if sample.target_error:
        st.error(f"The target call failed: {sample.target_error}", icon=":material/error:")
    elif sample.target_latency_ms is not None:
        st.caption(f"Answered by the target in {sample.target_latency_ms:,.0f} ms")
    text_block("Answer", sample.answer)
    text_block("Ground truth", sample.ground_truth or "(none)")
    for i, ctx in enumerate(sample.contexts, 1):
        text_block(f"Context {i}", ctx)
    if not sample.contexts:
        st.caption(sample.no_contexts_reason or "No contexts were retrieved for this sample.")
    trajectory_view(sample)


def trajectory_view(sample: EvalSample) -> None:
    """The agent's steps: each tool, its arguments and its output, in order."""
    if not sample.tool_calls and not sample.expected_tools:
        return
    st.markdown("**Trajectory**")
    if sample.expected_tools:
        st.caption("Expected tools: " + ", ".join(sample.expected_tools))
    for i, call in enumerate(sample.tool_calls, 1):
        with st.expander(f"Step {i}: {call.get('name')}", expanded=len(sample.tool_calls) <= 3):
            st.code(json.dumps(call.get("arguments"), ensure_ascii=False, indent=1, default=str), language="json")
            output = call.get("output")
            st.code(output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, indent=1,
                                                                     default=str), language=None, wrap_lines=True)
    if not sample.tool_calls:
        st.caption("No tool was called.")


def metric_view(ms: Any) -> None:
    """One metric: score, method, LLM and heuristic parts, reasoning, verdicts, raw judge reply."""
    with st.container(border=True):
        st.markdown(f"**{ms.name}** &nbsp; {badge(ms.score, ms.skipped)} &nbsp; "
                    f"<span style='color:{GREY}'>{html.escape(METHOD_LABELS.get(ms.method, ms.method))}</span>",
                    unsafe_allow_html=True)
        parts = [f"{name} part: {value:.3f}" for name, value in
                 (("LLM", ms.llm_score), ("heuristic", ms.heuristic_score)) if value is not None]
        if ms.llm_scores:
            parts.append(f"{len(ms.llm_scores)} judge repeats: {', '.join(f'{v:.3f}' for v in ms.llm_scores)}"
                         + (f" (std {ms.llm_std:.3f})" if ms.llm_std is not None else ""))
        if ms.scored_from == "logprobs":
            parts.append("probability-weighted (G-Eval)")
        if parts:
            st.caption(" · ".join(parts))
        text_block("Reasoning", ms.reasoning)
        if ms.error:
            st.warning(f"Judge problem: {ms.error}", icon=":material/warning:")
        if ms.verdicts:
            records_table([{k: str(v) for k, v in item.items()} if isinstance(item, dict) else {"verdict": str(item)}
                           for item in ms.verdicts])
        if ms.raw_reply:
            with st.expander("Judge's raw reply"):
                st.code(ms.raw_reply, language=None, wrap_lines=True)


def result_view(result: EvalResult) -> None:
    """The per-metric drill-down of one result, beside its sample's text."""
    left, right = st.columns([2, 3])
    with left:
        sample_view(result.sample)
    with right:
        st.markdown(f"Overall {badge(result.overall_score())}", unsafe_allow_html=True)
        for ms in result.metric_scores().values():
            metric_view(ms)


def records_table(data: Any, **kwargs: Any) -> None:
    """A read-only table; a missing value shows as an en dash, never as 'None'."""
    st.dataframe(data, hide_index=True, width="stretch", placeholder=NA, **kwargs)


def button_link(label: str, page: str, key: str, **kwargs: Any) -> None:
    """A button that switches page (a real button, so browser tests can click it by its label)."""
    if st.button(label, key=key, **kwargs):
        st.switch_page(page)


def band_legend() -> None:
    """The score bands with their colours."""
    ranges = band_ranges()
    parts = [f'<span style="color:{color}">■</span> {name} ({ranges[name]})' for name, color in BAND_COLORS.items()]
    st.caption("Bands: " + " · ".join(parts), unsafe_allow_html=True)


# --- the shell: pages, navigation, sidebar ----------------------------------------------------------
_SHELL = threading.local()  # .active is True while app.py runs a page on this script thread


def pages() -> List[Any]:
    """The app's pages, for st.navigation."""
    return [st.Page(EVALUATE_PAGE, title="Evaluate", icon=":material/science:", default=True),
            st.Page(REPORT_PAGE, title="Report", icon=":material/bar_chart:"),
            st.Page(SPOT_PAGE, title="Spot check", icon=":material/search:"),
            st.Page(REVIEW_PAGE, title="Review", icon=":material/rate_review:"),
            st.Page("pages/generate.py", title="Generate", icon=":material/quiz:"),
            st.Page(HISTORY_PAGE, title="History", icon=":material/history:")]


def set_page_config() -> None:
    st.set_page_config(page_title="ragmeter", page_icon=str(FAVICON), layout="wide")


def run_app() -> None:
    """app.py's body: page config, then register the pages and run the chosen one."""
    set_page_config()
    page = st.navigation(pages())
    _SHELL.active = True
    try:
        page.run()
        refresh_sidebar()  # the page may have changed the dataset or ended a run since the sidebar was drawn
    except Exception as exc:  # the last net: a message, never a traceback (st.rerun/st.stop pass through)
        log.exception("page %s failed", page.title)
        st.error(f"This page hit a problem: {friendly(exc)}", icon=":material/warning:")
    finally:
        _SHELL.active = False


def page_setup(title: str) -> None:
    """What every page starts with: keep other pages' widget values, draw the shared sidebar.

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
    keep_widget_state(title)
    st.html(INPUT_CSS)
    sidebar()


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
    default = str(default_history_location())
    typed = st.text_input("History database", value=default, key=HISTORY_PATH,
                          help="SQLite file where every run is saved (default: $RAGMETER_HISTORY or ~/.ragmeter): "
                               "a .sqlite3, .sqlite or .db file in an existing folder under your home folder "
                               "or the folder the dashboard runs in.")
    if typed and typed != default:
        try:
            typed_history_path(typed)
        except ConfigError as exc:
            st.error(f"Not used: {exc}. Runs go to {default}.", icon=":material/warning:")


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
        live: Optional[Run] = st.session_state.get(LIVE)
        if live is not None and live.running:
            _live_status()
        else:
            _status_lines()


@st.fragment(run_every=1.0)
def _live_status() -> None:
    live: Optional[Run] = st.session_state.get(LIVE)
    if live is not None and not live.running:
        collect(live)
        st.rerun()  # the whole page: it shows the finished run, the sidebar its report
    _status_lines()


def _status_lines() -> None:
    dataset = st.session_state.get(DATASET)
    if dataset is not None:
        st.caption(f"Dataset: **{dataset.name}** · {len(dataset.samples):,} samples")
    live: Optional[Run] = st.session_state.get(LIVE)
    report: Optional[EvalReport] = st.session_state.get(REPORT)
    if live is not None and live.running:
        st.caption(f"Run in progress: **{live.dataset_name}** · {live.total:,} samples")
    elif report is not None:
        meta: RunMeta = st.session_state[RUN]
        st.caption(f"Report: **{meta.dataset_name}** · {meta.status} · {len(report.results):,} samples · "
                   f"overall {format_score(report.overall_mean())}")


# --- Report page data, cached per report token ------------------------------------------------------
@st.cache_data(max_entries=8, show_spinner=False)
def summaries(token: str, _report: EvalReport) -> List[Any]:
    """stats.summarize of the report (mean, std, CI, counts per metric)."""
    from evaluator.analysis.stats import summarize

    return summarize(_report)


@st.cache_resource(max_entries=8, show_spinner=False)
def report_charts(token: str, _report: EvalReport) -> Dict[str, Any]:
    """The report's altair charts by name (category only when samples have categories)."""
    from evaluator import charts

    built = {"Means ± 1 std": charts.means_chart(_report, summaries=summaries(token, _report)),
             "Distributions": charts.distribution_chart(_report)}
    category = charts.category_chart(_report)
    if category is not None:
        built["By category"] = category
    return built


@st.cache_data(max_entries=8, show_spinner=False)
def agreement(token: str, _report: EvalReport) -> Dict[str, Any]:
    """agreement.agreement_table of the report: metric -> agreement with human labels (may be empty)."""
    from evaluator.analysis.agreement import agreement_table

    return agreement_table(_report)


@st.cache_data(max_entries=4, show_spinner=False)
def results_frame(token: str, _report: EvalReport) -> Any:
    """One row per sample (records.flat_row) with a leading '#' column; empty metric columns dropped."""
    import pandas as pd

    from evaluator.io.records import flat_row

    # Whole contexts and tool calls are for the CSV and the drill-down, not a table cell.
    names = _report.metric_names()
    frame = pd.DataFrame([flat_row(r, names) for r in _report.results]).drop(
        columns=["contexts", "tool_calls"], errors="ignore")
    frame.insert(0, "#", range(len(frame)))
    empty = [c for c in frame.columns if c not in ("#", "sample_id") and frame[c].isna().all()]
    return frame.drop(columns=empty)


def score_columns(frame: Any) -> List[str]:
    """The metric score columns of a results_frame (each has a `<metric>_method` twin), then overall."""
    metrics = [c[: -len("_method")] for c in frame.columns if c.endswith("_method")]
    return [c for c in (*metrics, "overall") if c in frame.columns]


def select_rows(frame: Any, *, text: str = "", categories: Sequence[str] = (), metric: Optional[str] = None,
                at_most: float = 1.0, methods: Sequence[str] = ()) -> Any:
    """The rows of a results_frame that match: text in question/answer/id, a category, `metric` <= `at_most`
    (skipped scores never match), any metric scored by one of `methods`."""
    keep = frame.index == frame.index
    if text:
        hay = (frame["question"].fillna("") + " " + frame["answer"].fillna("") + " "
               + frame["sample_id"].fillna("").astype(str))
        keep &= hay.str.contains(text, case=False, regex=False)
    if categories:
        keep &= frame["category"].isin(categories)
    if metric:
        keep &= frame[metric].notna() & (frame[metric] <= at_most + 1e-9)
    if methods:
        keep &= frame[[c for c in frame.columns if c.endswith("_method")]].isin(methods).any(axis=1)
    return frame[keep]


def dashboard_hint(message: str) -> str:
    """A library error's advice in the dashboard's own words."""
    from evaluator.judges.openai import KEY_HINT

    return message.replace(KEY_HINT, "check the API key (type it under Judge, or set OPENAI_API_KEY)")


def trust_notes(report: EvalReport) -> None:
    """At the top of a report: a judge failure in red, fallbacks in amber, the offline caveat in blue."""
    from evaluator.analysis import judging

    stopped = judging.stopped_reason(report)
    fallback, judged = judging.fallback_counts(report)
    if stopped:
        st.error(f"**The run stopped: the judge failed.** {dashboard_hint(stopped)}", icon=":material/error:")
    if fallback:
        st.warning(f"{fallback:,} of {judged:,} judged scores fell back to the heuristic after a judge failure "
                   f"({judging.main_cause(report) or 'see each score'}): those scores are lexical estimates.",
                   icon=":material/warning:")
    if judging.is_offline(report):
        st.info(judging.OFFLINE_NOTICE, icon=":material/info:")
