"""The judge picker (judge, language, model, key, run options), its pre-run estimate and its key.

The same widgets are drawn under a key prefix on several pages ("eval", "spot", "hist_rescore");
`_state.judge_key(prefix, field)` names each one. The API key is never part of a RunConfig (it is
never stored): read it with `api_key(prefix)` when the judge is built.
"""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Dict, List

import streamlit as st

from evaluator import service
from evaluator.model import EvalSample

from pages import _errors as errors
from pages import _state as state
from pages import _team as team

OFFLINE, OPENAI = "Offline (no API key)", "OpenAI-compatible API"
OPENAI_JUDGE = service.OPENAI_JUDGE
LANGUAGES = {"auto": "Auto-detect", "en": "English", "ar": "Arabic (العربية)"}


def env_api_key(base_url: str = "") -> str:
    """OPENAI_API_KEY from the environment or .streamlit/secrets.toml, else '' -- for OpenAI's own URL
    (or $OPENAI_BASE_URL's, or none typed) only, as the CLI's judge decides (judges/base.key_variable): a base URL typed in the page never receives the server's key. In team mode
    never: a configured judge's key is read from its api_key_env when the judge is built."""
    variable = service.key_variable_for(base_url or service.DEFAULT_BASE_URL)
    if team.config().team or not variable:
        return ""
    key = service.environment_key(variable)
    if key:
        return key
    try:
        return str(st.secrets.get(variable, "") or "")
    except Exception:  # no secrets file at all: Streamlit raises rather than returning empty
        return ""


def api_key(prefix: str) -> str:
    """The key typed in `prefix`'s API key field, read from its state at the moment of use (a key left
    with Tab counts as much as one confirmed with Enter), else OPENAI_API_KEY from the environment/secrets."""
    typed = "" if team.config().team else str(state.get(state.judge_key(prefix, "api_key")) or "")
    if state.get(state.judge_key(prefix, "judge"), OPENAI) != OPENAI:
        return typed  # another judge reads its own variable when it is built
    return typed or env_api_key(str(state.get(state.judge_key(prefix, "base_url")) or ""))


def judge_widgets(prefix: str, *, run_options: bool = True) -> service.RunConfig:
    """Judge, language and (for runs) workers/cache/prices; widget keys start with `prefix`.

    The API key is not part of the config (it is never stored): read it with `api_key(prefix)`.
    """
    key = lambda field: state.judge_key(prefix, field)  # noqa: E731
    if team.config().team:  # judges by name from [[judges]]: no base URL, no key field
        c1, c2 = st.columns([3, 2])
        language: Any = c2.selectbox("Language", list(LANGUAGES), format_func=LANGUAGES.__getitem__,
                                     key=key("language"), persist_state=state.KEEP)
        with c1:
            config = team.judge_picker(prefix, language)
        return replace(config, **run_option_widgets(prefix)) if run_options and not config.offline else config
    for problem in service.judge_plugin_errors():  # a judge package that fails to load: said, not a traceback
        errors.error("{problem}", problem=problem, icon=":material/extension_off:")
    entries = {e.label: e for e in service.judge_entries()}  # the registered judges, built-ins first
    c1, c2 = st.columns([3, 2])
    label = c1.radio("Judge", list(entries), key=key("judge"), horizontal=True, persist_state=state.KEEP)
    language = c2.selectbox("Language", list(LANGUAGES), format_func=LANGUAGES.__getitem__, key=key("language"),
                            persist_state=state.KEEP)
    entry = entries.get(label) or next(e for e in entries.values() if e.offline)
    if entry.offline:
        st.caption("Lexical heuristics score every metric: no network, no key, no cost.")
        return service.RunConfig(language=language)
    if entry.kind != OPENAI_JUDGE:
        return plugin_judge_widgets(prefix, entry, language, run_options)
    c1, c2, c3 = st.columns(3)
    base_url = c1.text_input("Base URL", key=key("base_url"), placeholder="https://api.openai.com/v1",
                             help="Any OpenAI-compatible server: OpenAI, Azure, vLLM, Ollama, llama.cpp.",
                             persist_state=state.KEEP)
    model = c2.text_input("Model", value="gpt-4o-mini", key=key("model"), persist_state=state.KEEP)
    # The field starts empty on purpose: a pre-filled value would travel to the browser.
    # A password field left with Tab never commits (focus moves to its own show-password eye, so the
    # field is not blurred) and Run would go without the key. live="0ms" + "ignore": every keystroke
    # stages the value in the browser, which sends it with the next rerun (the Run click) without
    # rerunning by itself, so even a click right after typing carries the key.
    typed = c3.text_input("API key", type="password", key=key("api_key"), live="0ms", on_change="ignore",
                          help="Used for this session's judge calls only; never saved or exported.",
                          persist_state=state.KEEP)
    if not typed:
        st.caption("API key empty: " + ("using OPENAI_API_KEY from the environment/secrets."
                                        if env_api_key(base_url) else "fine for local servers; hosted APIs need one "
                                        "(the server's own key goes only to OpenAI's URL)."))
    config = service.RunConfig(judge=OPENAI_JUDGE, model=model.strip(), base_url=base_url.strip(),
                               language=language, max_workers=1)
    return replace(config, **run_option_widgets(prefix)) if run_options else config


def plugin_judge_widgets(prefix: str, entry: service.JudgeEntry, language: Any,
                         run_options: bool) -> service.RunConfig:
    """A registered judge other than the built-ins: a model name and a key when its entry asks for them."""
    kind = entry.kind
    c1, c2 = st.columns(2)
    model = c1.text_input("Model", key=state.judge_key(prefix, f"{kind}_model"),
                          persist_state=state.KEEP) if entry.needs_model else ""
    if entry.needs_key:  # the field starts empty: a pre-filled value would travel to the browser
        c2.text_input("API key", type="password", key=state.judge_key(prefix, "api_key"), live="0ms",
                      on_change="ignore", persist_state=state.KEEP,
                      help=f"Used for this session's judge calls only; empty: {entry.key_env or 'none'} "
                           "from the environment.")
    config = service.RunConfig(judge=kind, model=model.strip(), language=language, max_workers=1)
    return replace(config, **run_option_widgets(prefix, entry.batch_api)) if run_options else config


def run_option_widgets(prefix: str, batch_api: bool = True) -> Dict[str, Any]:
    """Workers, judge cache, token prices and Batch API of a run with an API judge (RunConfig fields)."""
    key = lambda field: state.judge_key(prefix, field)  # noqa: E731
    c1, c2, c3, c4 = st.columns(4)
    batch = batch_api and st.checkbox("Batch API", key=key("batch"), persist_state=state.KEEP,
                        help="Send every judge call in one OpenAI Batch API job (/files + /batches): half price "
                             "on OpenAI and Azure, replies within 24 h. Give batch prices below. You may stop "
                             "or leave: resuming the run from History picks the batch up.")
    cache = c2.checkbox("Judge cache", value=True, key=key("cache"), persist_state=state.KEEP,
                        help=f"Re-running unchanged data costs no calls. File: {service.judge_cache_file()}")
    return {
        "batch": batch,
        "judge_max_tokens": int(st.number_input(
            "Max tokens per judge call", 0, 32768, 0, step=64, key=key("max_tokens"), persist_state=state.KEEP,
            help="The completion cap of every judge call; 0 = each metric's own (128 for a score, ~500 for "
                 "verdict lists). Small local models ramble without one.")),
        "max_workers": int(c1.number_input("Max workers", 1, 64, 4, key=key("workers"), persist_state=state.KEEP,
                                           help="Samples scored at once; backs off by itself on rate limits.")),
        "cache": service.judge_cache_file() if cache else "",
        "price_in": c3.number_input("Price / 1M input tokens", 0.0, None, None, key=key("price_in"),
                                    persist_state=state.KEEP),
        "price_out": c4.number_input("Price / 1M output tokens", 0.0, None, None, key=key("price_out"),
                                     persist_state=state.KEEP),
    }


@st.cache_data(max_entries=8, show_spinner="Estimating judge calls…")
def estimate(token: str, _samples: List[EvalSample], config_json: str) -> Dict[str, Any]:
    """Pre-run estimate of judge calls, tokens and cost (no network); cached per dataset token and
    run config (`config_json`: RunConfig.to_dict() as sorted JSON)."""
    return service.estimate(_samples, service.RunConfig.from_dict(json.loads(config_json)))


def dashboard_hint(message: str) -> str:
    """A library error's advice in the dashboard's own words."""
    return message.replace(service.key_hint(), "check the API key (type it under Judge, or set OPENAI_API_KEY)")


CHECK_LIMITS = {"Quick (12 items per metric)": 12, "Full exam (all items)": 0}


def check_panel(prefix: str, config: service.RunConfig) -> None:
    """"Check this judge": the judge exam for the judge configured above, on an explicit button (it calls the
    judge: up to service.EXAM_ITEMS calls), beside the exam's baselines; a red box when it is unusable."""
    if config.offline:
        return
    with st.expander("Check this judge", icon=":material/fact_check:"):
        st.caption(f"Asks the judge a built-in exam of {service.EXAM_ITEMS} short items (English and Arabic, "
                   "labels by construction, written so that counting shared words fails) and probes it (injected "
                   "instructions, order, padding, repeats). It says whether the judge is fit to gate releases, "
                   "fit for trends or unusable, beside a constant judge, a random judge and the offline "
                   "heuristics (never fit). The result is kept with the judge's settings and shown beside every "
                   "run it scores.")
        size = st.radio("Exam", list(CHECK_LIMITS), horizontal=True, key=state.judge_key(prefix, "exam_size"))
        if st.button("Check this judge", key=state.judge_key(prefix, "check"), icon=":material/play_arrow:"):
            with errors.guard("Checking the judge"), st.spinner("The judge is sitting the exam…"):
                from pages._runs import open_store

                state.put(state.judge_key(prefix, "exam"), service.check_judge(
                    open_store(), config, access=team.access(), api_key=api_key(prefix), limit=CHECK_LIMITS[size],
                    owner=team.owner()))
        shown = state.get(state.judge_key(prefix, "exam"))
        if shown:
            show_exam(shown)


def show_exam(found: Dict[str, Any]) -> None:
    """The exam's verdict (a red box when unusable), what to try, and the figures beside the baselines."""
    result = found["result"]
    verdict = result["verdict"]
    say = {"fit to gate releases": errors.success, "fit for trends": errors.warning,
           "no verdict": errors.warning}.get(verdict, errors.error)
    say("Verdict: {verdict} ({judge})", verdict=verdict, judge=result["judge"])
    for line in found["lines"][1:]:
        st.text(line)
    st.dataframe(service.exam_rows([result, *found["baselines"]]), hide_index=True, width="stretch")
