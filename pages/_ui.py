"""The dashboard's one UI-helper module: session keys, cached loaders, the live run, shared widgets.

Pages (pages/*.py) are thin views; what two pages share lives here, and nothing here computes a
score: scoring, statistics, charts and exports all come from the `evaluator` library.

State lives under the session keys below and nowhere else, so switching pages keeps the run.
A run is scored on a background thread (`LiveRun`); a page only watches it. That is what lets
Stop keep every finished row, lets the user leave the page without killing the run, and keeps
the UI to ~10 updates a second however fast the offline judge scores.
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import streamlit as st
from streamlit import config as st_config

from evaluator import OfflineJudge, RAGEvaluator
from evaluator.advice import BAND_COLORS, band
from evaluator.datasets import FIELDS, REQUIRED, DatasetPreview, inspect_dataset, load_dataset
from evaluator.errors import HistoryError, RagmeterError
from evaluator.history import RunInfo, RunStore, default_history_path
from evaluator.model import METHOD_LABELS, METHOD_SKIPPED, EvalReport, EvalResult, EvalSample

log = logging.getLogger("ragmeter.dashboard")

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DIR = ROOT / "sample_data"
DEFAULT_SAMPLE = "sample.jsonl"
CACHE_ENV = "RAGMETER_JUDGE_CACHE"  # where the judge cache lives (default: as the CLI's --cache)

# --- session-state keys: everything the app remembers ------------------------------------------
REPORT = "report"  # EvalReport shown on the Report page
RUN = "run"  # RunMeta: which run that report is (id, dataset, settings, status)
LIVE = "live_run"  # LiveRun while a run is being scored, until its page collects it
DATASET = "dataset"  # LoadedDataset chosen on the Evaluate page
SPOT = "spot_result"  # EvalResult of the last spot check
COMPARISON = "comparison"  # RunComparison last computed on the History page
DELETE_PENDING = "delete_pending"  # run id waiting for the user to confirm its deletion
UPLOAD = "upload"  # (file name, bytes) of the last upload, so it survives page switches
HISTORY_PATH = "history_path"  # sidebar text input: the history database file
SESSION_KEYS = (REPORT, RUN, LIVE, DATASET, UPLOAD, SPOT, COMPARISON, DELETE_PENDING, HISTORY_PATH)
# Widget keys follow a per-page prefix so their values can outlive page switches (see
# keep_widget_state); buttons use "btn_" and are never kept (a button's state cannot be set).
PAGE_WIDGET_PREFIXES = {"Evaluate": ("eval_", "map_"), "Spot check": ("spot_",)}

# Page files, for st.switch_page (registered by pages()).
EVALUATE_PAGE = "pages/evaluate.py"
REPORT_PAGE = "pages/report.py"
SPOT_PAGE = "pages/spot_check.py"
HISTORY_PAGE = "pages/history.py"

UI_INTERVAL = 0.1  # seconds between progress redraws: at most ~10 a second
DEFAULT_MAX_ROWS = 100_000
DEFAULT_MAX_MB = 200  # matches server.maxUploadSize in .streamlit/config.toml
OFFLINE, OPENAI = "Offline (no API key)", "OpenAI-compatible API"
LANGUAGES = {"auto": "Auto-detect", "en": "English", "ar": "Arabic (العربية)"}
GREY = "#8a8a8a"
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


# --- datasets ---------------------------------------------------------------------------------
@dataclass
class LoadedDataset:
    """The dataset the Evaluate page will score."""

    name: str
    samples: List[EvalSample]
    token: str  # content + mapping digest: a new token means a new dataset


def bundled_files() -> List[str]:
    """The bundled sample files, the default first."""
    names = sorted(p.name for p in SAMPLE_DIR.glob("*") if p.suffix in (".csv", ".jsonl", ".json"))
    return sorted(names, key=lambda n: n != DEFAULT_SAMPLE)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


@st.cache_data(max_entries=8, show_spinner=False)
def preview(data: bytes, name: str, max_bytes: Optional[int]) -> DatasetPreview:
    """Columns, first rows and detected mapping of an upload (cached by content)."""
    return inspect_dataset(io.BytesIO(data), preview_rows=5, max_bytes=max_bytes, name=name)


@st.cache_data(max_entries=8, show_spinner="Reading the dataset…")
def parse(data: bytes, name: str, mapping: Tuple[Tuple[str, Optional[str]], ...],
          max_rows: Optional[int], max_bytes: Optional[int]) -> List[EvalSample]:
    """The samples of an upload under `mapping` (cached by content, mapping and limits)."""
    return load_dataset(io.BytesIO(data), dict(mapping), max_rows=max_rows, max_bytes=max_bytes, name=name)


def load_bytes(data: bytes, name: str, mapping: Optional[Dict[str, Optional[str]]] = None, *,
               max_rows: Optional[int] = DEFAULT_MAX_ROWS,
               max_bytes: Optional[int] = DEFAULT_MAX_MB * 1_000_000) -> LoadedDataset:
    """Parse uploaded bytes into a LoadedDataset; raises DatasetError with file/line/column."""
    items = tuple(sorted((mapping or {}).items()))
    samples = parse(data, name, items, max_rows, max_bytes)
    return LoadedDataset(name, samples, digest(data + repr(items).encode()))


def load_sample(name: str = DEFAULT_SAMPLE) -> LoadedDataset:
    """A bundled sample dataset."""
    return load_bytes((SAMPLE_DIR / name).read_bytes(), name)


def remember_upload() -> None:
    """file_uploader on_change: keep the upload's bytes (or forget them when the user clears it)."""
    upload = st.session_state.get("upload_file")
    if upload is None:
        st.session_state.pop(UPLOAD, None)
    else:
        st.session_state[UPLOAD] = (upload.name, upload.getvalue())


def preview_rows(pre: DatasetPreview) -> List[Dict[str, str]]:
    """The preview's first rows as text (JSON cells may hold lists or objects)."""
    def cell(value: Any) -> str:
        if isinstance(value, str):
            return value if len(value) <= 300 else value[:297] + "…"
        return "" if value is None else json.dumps(value, ensure_ascii=False)[:300]

    return [{str(k): cell(v) for k, v in row.items()} for row in pre.rows]


def mapping_widgets(pre: DatasetPreview, token: str) -> Dict[str, Optional[str]]:
    """One selectbox per field, pre-filled with the detected column; returns field -> column."""
    none = "(not used)"
    options = [none] + list(pre.columns)
    mapping: Dict[str, Optional[str]] = {}
    cols = st.columns(4)
    for i, name in enumerate(FIELDS):
        detected = pre.mapping.get(name)
        label = name + (" *" if name in REQUIRED else "")
        choice = cols[i % 4].selectbox(label, options, index=options.index(detected) if detected in options else 0,
                                       key=f"map_{name}_{token}")
        mapping[name] = None if choice == none else choice
    return mapping


# --- judges -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class JudgeChoice:
    """The judge settings a user picked. The key lives only here, in memory, never in settings()."""

    kind: str = OFFLINE
    language: str = "auto"
    model: str = ""
    base_url: str = ""
    api_key: str = field(default="", repr=False)
    cache: bool = True
    max_workers: int = 4
    price_in: Optional[float] = None
    price_out: Optional[float] = None

    @property
    def offline(self) -> bool:
        return self.kind == OFFLINE

    @property
    def workers(self) -> int:
        # The offline judge is pure Python: threads only add overhead under the GIL.
        return 1 if self.offline else max(1, int(self.max_workers))


def env_api_key() -> str:
    """OPENAI_API_KEY from the environment or .streamlit/secrets.toml, else ''."""
    key = os.environ.get("OPENAI_API_KEY", "")
    if key:
        return key
    try:
        return str(st.secrets.get("OPENAI_API_KEY", "") or "")
    except Exception:  # no secrets file at all: Streamlit raises rather than returning empty
        return ""


def judge_widgets(prefix: str, *, run_options: bool = True) -> JudgeChoice:
    """Judge, language and (for runs) workers/cache/prices; widget keys start with `prefix`."""
    c1, c2 = st.columns([3, 2])
    kind = c1.radio("Judge", [OFFLINE, OPENAI], key=f"{prefix}_judge", horizontal=True)
    language = c2.selectbox("Language", list(LANGUAGES), format_func=LANGUAGES.get, key=f"{prefix}_language")
    if kind == OFFLINE:
        st.caption("Lexical heuristics score every metric: no network, no key, no cost.")
        return JudgeChoice(OFFLINE, language)
    c1, c2, c3 = st.columns(3)
    base_url = c1.text_input("Base URL", key=f"{prefix}_base_url", placeholder="https://api.openai.com/v1",
                             help="Any OpenAI-compatible server: OpenAI, Azure, vLLM, Ollama, llama.cpp.")
    model = c2.text_input("Model", value="gpt-4o-mini", key=f"{prefix}_model")
    # The field starts empty on purpose: a pre-filled value would travel to the browser.
    api_key = c3.text_input("API key", type="password", key=f"{prefix}_api_key",
                            help="Used for this session's judge calls only; never saved or exported.")
    if not api_key:
        st.caption("API key empty: " + ("using OPENAI_API_KEY from the environment/secrets."
                                        if env_api_key() else "fine for local servers; hosted APIs need one."))
    if not run_options:
        return JudgeChoice(OPENAI, language, model.strip(), base_url.strip(), api_key, cache=True, max_workers=1)
    c1, c2, c3, c4 = st.columns(4)
    workers = c1.number_input("Max workers", 1, 64, 4, key=f"{prefix}_workers",
                              help="Samples scored at once; backs off by itself on rate limits.")
    cache = c2.checkbox("Judge cache", value=True, key=f"{prefix}_cache",
                        help=f"Re-running unchanged data costs no calls. File: {judge_cache_path()}")
    price_in = c3.number_input("Price / 1M input tokens", 0.0, None, None, key=f"{prefix}_price_in")
    price_out = c4.number_input("Price / 1M output tokens", 0.0, None, None, key=f"{prefix}_price_out")
    return JudgeChoice(OPENAI, language, model.strip(), base_url.strip(), api_key, cache, int(workers),
                       price_in, price_out)


def judge_cache_path() -> Path:
    """$RAGMETER_JUDGE_CACHE, else ~/.ragmeter/judge-cache.sqlite3 (the CLI's default)."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".ragmeter" / "judge-cache.sqlite3").expanduser()


def build_judge(choice: JudgeChoice) -> Any:
    """The judge for a choice; JudgeConfigError (shown inline) when it cannot start."""
    if choice.offline:
        return OfflineJudge()
    from evaluator import OpenAIJudge  # the openai client is only needed with a real judge

    return OpenAIJudge(choice.model, base_url=choice.base_url or None, api_key=choice.api_key or env_api_key() or None,
                       cache=judge_cache_path() if choice.cache else None, max_concurrency=choice.workers)


def run_settings(choice: JudgeChoice, judge: Any) -> Dict[str, Any]:
    """What the history keeps about a run (the judge's settings() never include the key)."""
    settings: Dict[str, Any] = {"judge": "offline" if choice.offline else "openai", "language": choice.language,
                                "max_workers": choice.workers, "price_in": choice.price_in,
                                "price_out": choice.price_out}
    if hasattr(judge, "settings"):
        settings.update(judge.settings())
    return settings


def choice_from_settings(settings: Dict[str, Any], api_key: str = "") -> JudgeChoice:
    """The JudgeChoice a stored run used (the key must be given again: it was never stored)."""
    if settings.get("judge") != "openai":
        return JudgeChoice(OFFLINE, settings.get("language", "auto"))
    return JudgeChoice(OPENAI, settings.get("language", "auto"), settings.get("model", ""),
                       settings.get("base_url", ""), api_key, bool(settings.get("cache")),
                       int(settings.get("max_workers") or 4), settings.get("price_in"), settings.get("price_out"))


@st.cache_data(max_entries=8, show_spinner="Estimating judge calls…")
def estimate(token: str, _samples: List[EvalSample], language: str, price_in: Optional[float],
             price_out: Optional[float]) -> Dict[str, Any]:
    """Pre-run estimate of judge calls, tokens and cost (no network); cached per dataset token."""
    from evaluator.costs import estimate_run

    return estimate_run(_samples, language, price_in=price_in, price_out=price_out).to_dict()


# --- history ----------------------------------------------------------------------------------
def history_path() -> str:
    """The history database path from the sidebar (default $RAGMETER_HISTORY or ~/.ragmeter)."""
    return st.session_state.get(HISTORY_PATH) or str(default_history_path())


def open_store() -> RunStore:
    """The run history; raises HistoryError with a fix when the path cannot be used."""
    return RunStore(history_path())


# --- the report in session state ----------------------------------------------------------------
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


def open_history_run(store: RunStore, info: RunInfo) -> None:
    """Load a stored run into the Report page."""
    show_report(store.load_report(info.run_id),
                RunMeta(info.dataset_name, info.settings, info.status, info.run_id, info.created_at,
                        total=info.n_samples))


# --- the live run -----------------------------------------------------------------------------
@dataclass(eq=False)
class LiveRun:
    """A run scored on a background thread; pages read its counters to draw the progress."""

    dataset_name: str
    settings: Dict[str, Any]
    total: int  # samples in the whole run
    prior: int = 0  # samples finished before this session (a resumed run)
    run_id: Optional[str] = None
    stop: threading.Event = field(default_factory=threading.Event)
    started: float = field(default_factory=time.perf_counter)
    ended: Optional[float] = None
    done: int = 0
    sums: Dict[str, float] = field(default_factory=dict)
    counts: Dict[str, int] = field(default_factory=dict)
    report: Optional[EvalReport] = None
    status: str = "running"
    error: Optional[str] = None
    warning: Optional[str] = None
    thread: Optional[threading.Thread] = None

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def tally(self, done: int, total: int, result: EvalResult) -> None:
        """on_progress callback: running sums for the live means."""
        for name, ms in result.metric_scores().items():
            if not ms.skipped:
                self.sums[name] = self.sums.get(name, 0.0) + ms.score
                self.counts[name] = self.counts.get(name, 0) + 1
        self.done = done

    def elapsed(self) -> float:
        return (self.ended or time.perf_counter()) - self.started

    def eta(self) -> Optional[float]:
        todo = self.total - self.prior - self.done
        return self.elapsed() / self.done * todo if self.done else None

    def means(self) -> Dict[str, float]:
        return {n: self.sums[n] / self.counts[n] for n in list(self.counts)}


def start_run(pending: List[Tuple[int, EvalSample]], choice: JudgeChoice, *, dataset_name: str,
              all_samples: Optional[List[EvalSample]] = None, run_id: Optional[str] = None,
              prior: int = 0, judge: Any = None) -> LiveRun:
    """Start scoring `pending` ((index, sample) pairs) on a thread; the LiveRun goes in session state.

    A new run (`run_id` None) is created in the history first; a resumed run keeps its id. When
    the history cannot be written the run still goes ahead, with a warning. `judge` overrides
    the one `choice` describes (tests pass a slow one).
    """
    judge = judge if judge is not None else build_judge(choice)
    settings = run_settings(choice, judge)
    live = LiveRun(dataset_name, settings, total=prior + len(pending), prior=prior, run_id=run_id)
    store = None
    try:
        store = open_store()
        if run_id is None:
            live.run_id = store.create_run(dataset_name=dataset_name, samples=all_samples or [s for _, s in pending],
                                           settings=settings)
    except HistoryError as exc:
        live.warning = f"This run is not saved to the history: {exc}"
        store = None
    evaluator = RAGEvaluator(judge, language=choice.language)
    live.thread = threading.Thread(target=_score, args=(live, evaluator, pending, store, choice.workers),
                                   name="ragmeter-dashboard-run", daemon=True)
    st.session_state[LIVE] = live
    live.thread.start()
    return live


def _score(live: LiveRun, evaluator: RAGEvaluator, pending: List[Tuple[int, EvalSample]],
           store: Optional[RunStore], workers: int) -> None:
    """The run's thread: score, persist each row as it finishes, then close the run."""
    def persist(j: int, result: EvalResult) -> None:
        try:
            store.record_result(live.run_id, pending[j][0], result)  # type: ignore[union-attr]
        except Exception as exc:  # a history failure must not lose the run itself
            live.warning = live.warning or f"Some rows could not be saved to the history: {friendly(exc)}"
            log.warning("history write failed", exc_info=True)

    try:
        report = evaluator.evaluate_dataset([s for _, s in pending], max_workers=workers, on_progress=live.tally,
                                            on_result=persist if store else None, stop=live.stop)
        live.status = "stopped" if live.done < len(pending) else "finished"
        live.report = _close_run(live, store, report)
    except Exception as exc:
        log.exception("dashboard run failed")
        live.status, live.error = "failed", friendly(exc)
        _mark(store, live, "failed", None, None)
        live.report = _saved_part(store, live)
    finally:
        live.ended = time.perf_counter()
        close = getattr(evaluator.llm, "close", None)
        if callable(close):
            close()


def _close_run(live: LiveRun, store: Optional[RunStore], report: EvalReport) -> EvalReport:
    """Record the run's end; a resumed run's report is read back whole from the history."""
    if store is None or live.run_id is None:
        return report
    previous = (store.get_run(live.run_id).total_time or 0.0) if live.prior else 0.0
    _mark(store, live, live.status, previous + report.total_time, report.usage or None)
    if not live.prior:
        return report
    full = store.load_report(live.run_id)
    full.usage = report.usage or full.usage
    return full


def _saved_part(store: Optional[RunStore], live: LiveRun) -> Optional[EvalReport]:
    """What a failed run saved before it failed, if anything."""
    try:
        return store.load_report(live.run_id) if store is not None and live.run_id else None
    except Exception:
        return None


def _mark(store: Optional[RunStore], live: LiveRun, status: str, total_time: Optional[float],
          usage: Optional[Dict[str, Any]]) -> None:
    if store is None or live.run_id is None:
        return
    try:
        store.finish_run(live.run_id, status=status, total_time=total_time, usage=usage)
    except Exception:
        live.warning = live.warning or "The run's final status could not be saved to the history."
        log.warning("finish_run failed", exc_info=True)


def collect(live: LiveRun) -> None:
    """Move a finished LiveRun's report into the Report page's keys."""
    st.session_state.pop(LIVE, None)
    report = live.report if live.report is not None else EvalReport()
    show_report(report, RunMeta(live.dataset_name, live.settings, live.status, live.run_id, total=live.total,
                                error=live.error, warning=live.warning))


def run_outcome() -> None:
    """How the last run ended, with the full progress bar and the way to its report."""
    report: Optional[EvalReport] = st.session_state.get(REPORT)
    meta: Optional[RunMeta] = st.session_state.get(RUN)
    live: Optional[LiveRun] = st.session_state.get(LIVE)
    if report is None or meta is None or (live is not None and live.running):
        return
    n, total = len(report.results), meta.total or len(report.results)
    st.progress(n / total if total else 1.0, text=f"{n:,}/{total:,} samples scored")
    saved = f" Saved to the history as run `{meta.run_id}`." if meta.run_id else ""
    if meta.error:
        st.error(f"The run failed: {meta.error} {n:,} finished rows were kept.{saved}", icon=":material/warning:")
    elif meta.status == "stopped":
        st.warning(f"Stopped: {n:,} of {total:,} samples scored, all kept.{saved} Resume it from the History page.")
    else:
        st.success(f"Done: {n:,} samples of **{meta.dataset_name}** in {seconds(report.total_time)}, overall "
                   f"{report.overall_mean():.3f}.{saved}", icon=":material/check_circle:")
    if meta.warning:
        st.warning(meta.warning)
    if n:
        button_link("Open report", REPORT_PAGE, key="btn_open_report", type="primary", icon=":material/bar_chart:")


def estimate_view(dataset: LoadedDataset, choice: JudgeChoice) -> None:
    """Pre-run estimate: judge calls, tokens and cost (zero for the offline judge)."""
    n = len(dataset.samples)
    if choice.offline:
        st.caption(f"Estimate: {n:,} samples · 0 judge calls · no cost · a few seconds per 10,000 rows.")
        return
    with guard("Estimating the run"):
        est = estimate(dataset.token, dataset.samples, choice.language, choice.price_in, choice.price_out)
        c1, c2, c3, c4 = st.columns(4)
        c1.metric("Judge calls (est.)", f"{est['calls']:,}")
        c2.metric("Prompt tokens (est.)", f"{est['prompt_tokens']:,}")
        c3.metric("Completion tokens (est.)", f"{est['completion_tokens']:,}")
        c4.metric("Cost (est.)", "give prices" if est["cost"] is None else f"{est['cost']:.4f}")
        st.caption("Estimated from the prompts' text (~4 characters a token); cached replies cost nothing.")


def watch(live: LiveRun) -> None:
    """Redraw the progress until the run ends (~10 times a second), then collect it."""
    box = st.empty()
    while True:
        running = live.running
        with box.container():
            progress_view(live)
        if not running:
            break
        time.sleep(UI_INTERVAL)
    box.empty()  # the page's run_outcome() shows how it ended
    collect(live)


def seconds(value: Optional[float]) -> str:
    if value is None:
        return "–"
    return f"{value:.1f} s" if value < 90 else f"{int(value // 60)} min {int(value % 60):02d} s"


def progress_view(live: LiveRun) -> None:
    """Progress bar with done/total, elapsed, ETA and the running means."""
    done = live.prior + live.done
    frac = done / live.total if live.total else 1.0
    st.progress(min(frac, 1.0), text=f"{done:,}/{live.total:,} samples scored ({frac:.0%})")
    c1, c2, c3 = st.columns(3)
    c1.metric("Scored", f"{done:,}/{live.total:,}")
    c2.metric("Elapsed", seconds(live.elapsed()))
    c3.metric("ETA", seconds(live.eta()) if live.running else "done")
    means = live.means()
    if means:
        st.caption("Running means: " + " · ".join(f"{n} {v:.3f}" for n, v in means.items()))


# --- shared display widgets -----------------------------------------------------------------------
def badge(score: Optional[float], skipped: bool = False) -> str:
    """A coloured pill with the score and its band (HTML; contains no user text)."""
    if skipped or score is None:
        return (f'<span style="background:{GREY};color:#fff;padding:2px 10px;border-radius:10px;'
                'white-space:nowrap">N/A · skipped</span>')
    name = band(score)
    return (f'<span style="background:{BAND_COLORS[name]};color:#fff;padding:2px 10px;border-radius:10px;'
            f'white-space:nowrap">{score:.3f} · {name}</span>')


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
                f'padding:6px 10px;border-left:3px solid #ddd;margin-bottom:8px">{body}</div>', unsafe_allow_html=True)


def sample_view(sample: Optional[EvalSample]) -> None:
    """Question, answer, reference and each context of a sample."""
    if sample is None:
        st.info("This result carries no sample text.")
        return
    text_block("Question", sample.question)
    text_block("Answer", sample.answer)
    text_block("Ground truth", sample.ground_truth or "(none)")
    for i, ctx in enumerate(sample.contexts, 1):
        text_block(f"Context {i}", ctx)
    if not sample.contexts:
        st.caption("No contexts were retrieved for this sample.")


def _part(value: Optional[float]) -> str:
    return "–" if value is None else f"{value:.3f}"


def metric_view(ms: Any) -> None:
    """One metric: score, method, LLM and heuristic parts, reasoning, verdicts, raw judge reply."""
    with st.container(border=True):
        st.markdown(f"**{ms.name}** &nbsp; {badge(ms.score, ms.skipped)} &nbsp; "
                    f"<span style='color:{GREY}'>{html.escape(METHOD_LABELS.get(ms.method, ms.method))}</span>",
                    unsafe_allow_html=True)
        if ms.method != METHOD_SKIPPED:
            st.caption(f"LLM part: {_part(ms.llm_score)} · heuristic part: {_part(ms.heuristic_score)}")
        text_block("Reasoning", ms.reasoning)
        if ms.error:
            st.warning(f"Judge problem: {ms.error}", icon=":material/warning:")
        if ms.verdicts:
            st.dataframe(verdict_rows(ms.verdicts), hide_index=True, width="stretch")
        if ms.raw_reply:
            with st.expander("Judge's raw reply"):
                st.code(ms.raw_reply, language=None, wrap_lines=True)


def verdict_rows(verdicts: Sequence[Any]) -> List[Dict[str, str]]:
    """Verdicts as uniform string rows (they may be dicts of any shape, or plain values)."""
    return [{k: str(v) for k, v in item.items()} if isinstance(item, dict) else {"verdict": str(item)}
            for item in verdicts]


def result_view(result: EvalResult) -> None:
    """The per-metric drill-down of one result."""
    st.markdown(f"Overall {badge(result.overall())}", unsafe_allow_html=True)
    for ms in result.metric_scores().values():
        metric_view(ms)


# --- sidebar ------------------------------------------------------------------------------------
def sidebar() -> None:
    """Shared sidebar: title, history database path, current dataset and run status."""
    with st.sidebar:
        st.markdown("## :material/straighten: ragmeter")
        st.caption("Scores RAG answers on five metrics, with the reasoning behind every number.")
        st.text_input("History database", value=str(default_history_path()), key=HISTORY_PATH,
                      help="SQLite file where every run is saved (default: $RAGMETER_HISTORY or ~/.ragmeter).")
        dataset = st.session_state.get(DATASET)
        if dataset is not None:
            st.caption(f"Dataset: **{dataset.name}** · {len(dataset.samples):,} samples")
        live: Optional[LiveRun] = st.session_state.get(LIVE)
        report: Optional[EvalReport] = st.session_state.get(REPORT)
        if live is not None and live.running:
            st.caption(f"Run in progress: {live.prior + live.done:,}/{live.total:,}")
        elif report is not None:
            meta: RunMeta = st.session_state[RUN]
            st.caption(f"Report: **{meta.dataset_name}** · {meta.status} · {len(report.results):,} samples · "
                       f"overall {report.overall_mean():.3f}")


_SHELL = threading.local()  # .active is True while app.py runs a page on this script thread


def pages() -> List[Any]:
    """The app's pages, for st.navigation."""
    return [st.Page(EVALUATE_PAGE, title="Evaluate", icon=":material/science:", default=True),
            st.Page(REPORT_PAGE, title="Report", icon=":material/bar_chart:"),
            st.Page(SPOT_PAGE, title="Spot check", icon=":material/search:"),
            st.Page(HISTORY_PAGE, title="History", icon=":material/history:")]


def set_page_config() -> None:
    st.set_page_config(page_title="ragmeter", page_icon=":material/straighten:", layout="wide")


def run_app() -> None:
    """app.py's body: page config, then register the pages and run the chosen one."""
    set_page_config()
    page = st.navigation(pages())
    _SHELL.active = True
    try:
        page.run()
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
    keep_widget_state(title)
    st.html(INPUT_CSS)
    sidebar()


def button_link(label: str, page: str, key: str, **kwargs: Any) -> None:
    """A button that switches page (a real button, so browser tests can click it by its label)."""
    if st.button(label, key=key, **kwargs):
        st.switch_page(page)


def band_legend() -> None:
    """The score bands with their colours."""
    parts = [f'<span style="color:{color}">■</span> {name}' for name, color in BAND_COLORS.items()]
    st.caption("Bands: " + " · ".join(parts) + " (0.9+ / 0.7–0.9 / 0.5–0.7 / < 0.5)", unsafe_allow_html=True)


def records_table(rows: List[Dict[str, Any]], **kwargs: Any) -> None:
    """A small read-only table."""
    st.dataframe(rows, hide_index=True, width="stretch", **kwargs)



# --- Report page building blocks (cached per report token) -----------------------------------------
@st.cache_data(max_entries=8, show_spinner=False)
def summaries(token: str, _report: EvalReport) -> List[Any]:
    """stats.summarize of the report (mean, std, CI, counts per metric)."""
    from evaluator.stats import summarize

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


@st.cache_data(max_entries=4, show_spinner=False)
def results_frame(token: str, _report: EvalReport) -> Any:
    """One row per sample (records.flat_row) with a leading '#' column; empty metric columns dropped."""
    import pandas as pd

    from evaluator.records import flat_row

    frame = pd.DataFrame([flat_row(r) for r in _report.results])
    frame.insert(0, "#", range(len(frame)))
    empty = [c for c in frame.columns if c not in ("#", "sample_id") and frame[c].isna().all()]
    return frame.drop(columns=empty)


@st.cache_data(max_entries=8, show_spinner=False)
def agreement_rows(token: str, _report: EvalReport) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """(per-metric agreement rows, calibration rows) against human labels; empty without labels."""
    from evaluator.agreement import agreement_table

    table, calib = [], []
    for a in agreement_table(_report).values():
        table.append({"metric": a.metric, "rows": a.n, "labels": a.kind, "AUROC": a.auroc,
                      "Spearman": a.spearman, "Kendall": a.kendall, "MAE": a.mae})
        calib += [{"metric": a.metric, "label": b.low if b.low == b.high else (b.low + b.high) / 2,
                   "mean score": b.mean_score, "rows": b.n} for b in a.calibration if b.mean_score is not None]
    return table, calib


def calibration_chart(rows: List[Dict[str, Any]]) -> Any:
    """Mean score per human-label bin, one line per metric (a diagonal means well calibrated)."""
    import altair as alt

    return alt.Chart(alt.Data(values=rows)).mark_line(point=True).encode(
        x=alt.X("label:Q", title="human label (scaled 0-1)", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("mean score:Q", scale=alt.Scale(domain=[0, 1])),
        color="metric:N", tooltip=["metric:N", "label:Q", "mean score:Q", "rows:Q"])


def score_columns(frame: Any) -> List[str]:
    from evaluator.model import METRICS, RULE_METRICS

    return [c for c in (*METRICS, *RULE_METRICS, "overall") if c in frame.columns]


def colour_scores(frame: Any, limit: int = 2_000) -> Any:
    """A Styler colouring scores by band (skipped for big tables: styling 10k rows is slow)."""
    cols = score_columns(frame)
    if len(frame) > limit:
        return frame

    def colour(value: Any) -> str:
        if value is None or value != value:  # None or NaN: skipped
            return ""
        return f"background-color: {BAND_COLORS[band(float(value))]}; color: white"

    return frame.style.map(colour, subset=cols).format("{:.3f}", subset=cols, na_rep="–")


def filter_frame(frame: Any) -> Any:
    """Filter widgets (text, category, metric threshold, method) and the rows they keep."""
    cols = score_columns(frame)
    c1, c2, c3, c4 = st.columns([3, 2, 2, 2])
    text = c1.text_input("Search question / answer / id", key="rep_search")
    categories = sorted(frame["category"].dropna().unique()) if "category" in frame else []
    chosen = c2.multiselect("Category", categories, key="rep_categories") if categories else []
    metric = c3.selectbox("Metric", ["(any)"] + cols, key="rep_metric")
    limit = c4.slider("at most", 0.0, 1.0, 1.0, 0.05, key="rep_max", disabled=metric == "(any)")
    methods = st.multiselect("Scored by (any metric)", list(METHOD_LABELS), format_func=METHOD_LABELS.get,
                             key="rep_methods")
    keep = frame.index == frame.index
    if text:
        hay = (frame["question"].fillna("") + " " + frame["answer"].fillna("") + " " +
               frame["sample_id"].fillna("").astype(str))
        keep &= hay.str.contains(text, case=False, regex=False)
    if chosen:
        keep &= frame["category"].isin(chosen)
    if metric != "(any)":
        keep &= frame[metric].notna() & (frame[metric] <= limit + 1e-9)
    if methods:
        mcols = [c for c in frame.columns if c.endswith("_method")]
        keep &= frame[mcols].isin(methods).any(axis=1)
    return frame[keep]


def sample_label(frame: Any, i: int) -> str:
    row = frame.loc[frame["#"] == i].iloc[0]
    question = str(row.get("question") or "")
    question = question if len(question) <= 70 else question[:67] + "…"
    return f"#{i} · {row.get('sample_id')} · {question} (overall {row['overall']:.3f})"


def downloads(report: EvalReport, meta: RunMeta, charts: Dict[str, Any]) -> None:
    """CSV, JSON, HTML report and each chart as PNG and SVG (generated only when clicked)."""
    from evaluator import charts as chart_io
    from evaluator import export

    stem = f"ragmeter-{Path(meta.dataset_name).stem or 'report'}"
    agreement = {row["metric"]: row for row in agreement_rows(meta.token, report)[0]} or None
    c1, c2, c3 = st.columns(3)
    c1.download_button("Download CSV", lambda: export.results_csv(report), f"{stem}.csv", "text/csv", key="dl_csv")
    c2.download_button("Download JSON", lambda: export.results_json(report, settings=meta.settings),
                       f"{stem}.json", "application/json", key="dl_json")
    c3.download_button("Download HTML report", lambda: export.html_report(
        report, title=f"ragmeter report: {meta.dataset_name}", dataset_name=meta.dataset_name,
        settings=meta.settings, labels_agreement=agreement), f"{stem}.html", "text/html", key="dl_html",
        type="primary")
    for i, (name, chart) in enumerate(charts.items()):
        slug = name.split()[0].lower()
        c1, c2, _ = st.columns(3)
        c1.download_button(f"{name} chart (PNG)", lambda c=chart: chart_io.chart_png(c), f"{stem}-{slug}.png",
                           "image/png", key=f"dl_png_{i}")
        c2.download_button(f"{name} chart (SVG)", lambda c=chart: chart_io.chart_svg(c), f"{stem}-{slug}.svg",
                           "image/svg+xml", key=f"dl_svg_{i}")


def empty_report() -> None:
    """No report yet: say where to get one, and offer the one-click sample run."""
    meta: Optional[RunMeta] = st.session_state.get(RUN)
    if meta is not None and meta.error:
        st.error(f"The last run failed before scoring anything: {meta.error}", icon=":material/warning:")
    st.info("No report yet. Score a dataset on the **Evaluate** page, or try the bundled sample right now: "
            "offline, no API key, a few seconds.", icon=":material/waving_hand:")
    c1, c2, _ = st.columns([2, 2, 3])
    if c1.button("Run the sample data offline", key="btn_quick_run", type="primary", icon=":material/play_arrow:"):
        with guard("Running the sample"):
            dataset = load_sample()
            watch(start_run(list(enumerate(dataset.samples)), JudgeChoice(), dataset_name=dataset.name))
            st.rerun()
    with c2:
        button_link("Go to Evaluate", EVALUATE_PAGE, key="btn_go_evaluate")


def report_caption(report: EvalReport, meta: RunMeta) -> str:
    judge = meta.settings.get("model") if meta.settings.get("judge") == "openai" else "offline heuristics"
    parts = [f"**{meta.dataset_name}**", f"{len(report.results):,} samples", f"judge: {judge}",
             f"{seconds(report.total_time)}", f"status: {meta.status}"]
    if meta.run_id:
        parts.append(f"run `{meta.run_id}`")
    return " · ".join(parts)


def metric_cards(report: EvalReport, sums: Sequence[Any]) -> None:
    """One card per metric: mean, band, ±std, 95% CI, scored/total and fallbacks."""
    meta: RunMeta = st.session_state[RUN]
    if meta.status == "stopped" and meta.total > len(report.results):
        st.warning(f"This run was stopped: {len(report.results):,} of {meta.total:,} samples are scored. "
                   "Resume it from the History page.")
    cards = [("overall", report.overall_mean(), None)] + [(s.name, s.mean, s) for s in sums]
    for start in range(0, len(cards), 4):
        for col, (name, mean, s) in zip(st.columns(4), cards[start:start + 4]):
            with col.container(border=True):
                st.metric(name, "N/A" if mean is None else f"{mean:.3f}",
                          help="Mean of the five judged metrics per sample" if s is None else
                          "Mean over the samples this metric could score.")
                st.markdown(badge(mean, mean is None), unsafe_allow_html=True)
                st.caption(card_caption(s) if s is not None else f"{len(report.results):,} samples")


def card_caption(s: Any) -> str:
    if s.mean is None:
        return f"not scored on any of {s.n_total} samples"
    text = f"± {s.std:.3f}" if s.std is not None else "± –"
    if s.ci_low is not None:
        text += f" · 95% CI {s.ci_low:.3f}–{s.ci_high:.3f}"
    text += f" · scored {s.n_scored}/{s.n_total}"
    return text + (f" · :material/warning: {s.n_fallback} fallback" if s.n_fallback else "")


SUMMARY_FORMAT = {name: st.column_config.NumberColumn(format="%.3f")
                  for name in ("mean", "std", "95% CI low", "95% CI high")}


def summary_rows(sums: Sequence[Any]) -> List[Dict[str, Any]]:
    """The per-metric summary table."""
    return [{"metric": s.name, "mean": s.mean, "std": s.std, "95% CI low": s.ci_low, "95% CI high": s.ci_high,
             "scored": s.n_scored, "total": s.n_total, "fallback": s.n_fallback, "skipped": s.n_skipped,
             "band": band(s.mean) if s.mean is not None else "N/A",
             "how": ", ".join(f"{METHOD_LABELS.get(m, m)}: {n}" for m, n in s.methods.items())} for s in sums]


def usage_view(report: EvalReport, meta: RunMeta) -> None:
    """Judge calls, cache hits, tokens, retries and cost."""
    from evaluator.costs import price

    st.subheader("Judge usage")
    usage = report.usage or {}
    if meta.settings.get("judge") != "openai":
        st.caption("Offline judge: 0 judge calls, no tokens, no cost.")
        return
    cost = price(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0),
                 meta.settings.get("price_in"), meta.settings.get("price_out"))
    cells = [("Judge calls", usage.get("calls", 0)), ("Cache hits", usage.get("cache_hits", 0)),
             ("Prompt tokens", usage.get("prompt_tokens", 0)), ("Completion tokens", usage.get("completion_tokens", 0)),
             ("Retries", usage.get("retries", 0)), ("Cost", "no prices given" if cost is None else f"{cost:.4f}")]
    for col, (label, value) in zip(st.columns(len(cells)), cells):
        col.metric(label, f"{value:,}" if isinstance(value, int) else value)


def agreement_view(report: EvalReport, meta: RunMeta) -> None:
    """Agreement with human labels (human_<metric> columns), when the data has any."""
    table, calib = agreement_rows(meta.token, report)
    if not table:
        return
    st.subheader("Agreement with human labels")
    st.caption("AUROC for 0/1 labels (0.5 = chance, 1 = perfect ranking); Spearman/Kendall for graded labels; "
               "MAE against labels scaled to 0–1. Trust a metric's chart only as far as it agrees with people.")
    records_table(table)
    if calib:
        st.altair_chart(calibration_chart(calib), width="stretch")


def table_columns(frame: Any) -> List[str]:
    """Columns of the samples table, scores before the long texts (methods and timing are in the CSV)."""
    head = [c for c in ("#", "sample_id", "category") if c in frame.columns]
    texts = [c for c in ("question", "answer", "ground_truth") if c in frame.columns]
    return head + ["overall"] + [c for c in score_columns(frame) if c != "overall"] + texts


# --- Spot check ---------------------------------------------------------------------------------
SPOT_EXAMPLES = {
    "en": {
        "spot_question": "How long does the warranty on the kettle last?",
        "spot_answer": "The kettle has a two-year warranty that covers manufacturing defects.",
        "spot_contexts": "Warranty: every kettle is covered for two years against manufacturing defects.\n"
                         "Shipping: orders over $40 ship for free within the country.",
        "spot_ground_truth": "Two years, covering manufacturing defects.",
    },
    "ar": {
        "spot_question": "كم تستغرق مدة الضمان على الغلاية؟",
        "spot_answer": "تتمتع الغلاية بضمان لمدة سنتين يغطي عيوب التصنيع.",
        "spot_contexts": "الضمان: كل غلاية مضمونة لمدة سنتين ضد عيوب التصنيع.\n"
                         "الشحن: الطلبات التي تزيد على ٤٠ دولارًا تُشحن مجانًا داخل البلد.",
        "spot_ground_truth": "سنتان، ويغطي الضمان عيوب التصنيع.",
    },
}


def fill_spot_example(lang: str) -> None:
    """Button callback: put an example sample in the Spot check fields."""
    st.session_state.update(SPOT_EXAMPLES[lang])
    st.session_state.pop(SPOT, None)


def split_contexts(text: str) -> List[str]:
    """Contexts typed in one box: one per line, or blocks separated by a line of ---."""
    lines = (text or "").splitlines()
    if not any(line.strip() == "---" for line in lines):
        return [line.strip() for line in lines if line.strip()]
    blocks, current = [], []
    for line in lines + ["---"]:
        if line.strip() == "---":
            blocks.append("\n".join(current).strip())
            current = []
        else:
            current.append(line)
    return [b for b in blocks if b]


def score_one(sample: EvalSample, choice: JudgeChoice) -> EvalResult:
    """Score one sample with the chosen judge (closed afterwards)."""
    judge = build_judge(choice)
    try:
        return RAGEvaluator(judge, language=choice.language).evaluate(sample)
    finally:
        close = getattr(judge, "close", None)
        if callable(close):
            close()


# --- History ------------------------------------------------------------------------------------
def run_label(info: RunInfo) -> str:
    return f"{info.label} · {info.status} · {info.run_id}"


def runs_table(runs: Sequence[RunInfo]) -> List[Dict[str, Any]]:
    return [{"name": r.name or "", "dataset": r.dataset_name, "created": r.created_at.replace("T", " ")[:19],
             "status": r.status, "scored": f"{r.n_done}/{r.n_samples}", "overall": r.overall_mean,
             "judge": r.settings.get("model") or r.settings.get("judge", ""),
             "time": seconds(r.total_time) if r.total_time else "", "run id": r.run_id} for r in runs]


def confirm_delete(store: RunStore, info: RunInfo) -> None:
    """The second step of deleting a run."""
    st.warning(f"Delete **{info.label}** and its {info.n_done} saved results? This cannot be undone.")
    c1, c2, _ = st.columns([1, 1, 4])
    if c1.button("Yes, delete", key="btn_hist_delete_yes", type="primary"):
        with guard("Deleting"):
            store.delete_run(info.run_id)
            st.session_state.pop(DELETE_PENDING, None)
            st.session_state.pop(COMPARISON, None)
            st.rerun()
    if c2.button("Cancel", key="btn_hist_delete_no"):
        st.session_state.pop(DELETE_PENDING, None)
        st.rerun()


def resumable(info: RunInfo) -> bool:
    """Stopped, failed or crashed (still 'running' but not in this session) with samples left."""
    live: Optional[LiveRun] = st.session_state.get(LIVE)
    mine = live is not None and live.running and live.run_id == info.run_id
    return info.n_done < info.n_samples and info.status in ("stopped", "failed", "running") and not mine


def resume_controls(store: RunStore, info: RunInfo) -> None:
    """Resume a run with its stored settings; asks for the API key again (it was never stored)."""
    if not resumable(info):
        return
    with st.container(border=True):
        st.markdown(f"**Resume** · {info.n_samples - info.n_done} of {info.n_samples} samples left, "
                    "same judge and settings.")
        if info.status == "running":
            st.caption("Marked running but not scored in this window: it probably crashed. If another window "
                       "is still scoring it, resuming here would score its remaining samples twice.")
        key = ""
        if info.settings.get("judge") == "openai":
            key = st.text_input("API key for this run", type="password", key="hist_resume_key",
                                help="Keys are never stored, so a resumed run needs it again "
                                     "(empty: OPENAI_API_KEY from the environment).")
        if st.button("Resume run", key="btn_hist_resume", icon=":material/play_arrow:"):
            with guard("Resuming the run"):
                start_run(store.pending_samples(info.run_id), choice_from_settings(info.settings, key),
                          dataset_name=info.dataset_name, run_id=info.run_id, prior=info.n_done)
                st.switch_page(EVALUATE_PAGE)


def comparison_view(cmp: Any) -> None:
    """Per-metric mean deltas with the paired bootstrap CI, and the samples that moved most."""
    st.caption(f"B = **{cmp.run_b.label}** against A = **{cmp.run_a.label}**: {cmp.n_paired} samples paired by "
               f"sample_id ({cmp.only_a} only in A, {cmp.only_b} only in B). A change is clear when its 95% CI "
               "excludes 0.")
    rows = []
    for d in cmp.metrics:
        verdict = "–" if d.delta is None else ("clearly better" if d.significant and d.delta > 0 else
                                               "clearly worse" if d.significant else "no clear change")
        rows.append({"metric": d.metric, "mean A": d.mean_a, "mean B": d.mean_b, "delta (B−A)": d.delta,
                     "95% CI low": d.ci_low, "95% CI high": d.ci_high, "pairs": d.n_pairs, "verdict": verdict})
    records_table(rows)
    if cmp.movers:
        st.markdown("**Samples that moved most**")
        records_table([{"sample": m.sample_id, "metric": m.metric, "A": m.a, "B": m.b, "delta": m.delta,
                        "question": m.question} for m in cmp.movers])
    else:
        st.caption("No sample's score changed between the two runs.")
