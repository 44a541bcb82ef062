"""The Evaluate page's "call my pipeline" form: the HTTP target, and the Test target button.

Header lines may name environment variables (${RAG_TOKEN}); their values are read at call time,
and only the header names reach the run's settings.
"""
from __future__ import annotations

from typing import Any, List, Optional

import streamlit as st

from evaluator import service
from evaluator.model import EvalSample

from pages import _errors as errors
from pages import _state as state

FROM_FILE, FROM_PIPELINE = "from the file", "call my pipeline (HTTP endpoint)"


def answers_source() -> str:
    """Where the answers come from: the file, or the user's pipeline called for each question."""
    return st.radio("Answers", [FROM_FILE, FROM_PIPELINE], key="eval_answers", horizontal=True, persist_state=state.KEEP,
                    help="Call my pipeline: the file needs only questions; ragmeter asks your endpoint each one.")


def target_form() -> Optional[service.TargetConfig]:
    """The endpoint and how to read its replies; None (with the reason shown) while unusable."""
    url = st.text_input("Endpoint URL", key="eval_target_url", persist_state=state.KEEP, placeholder="http://127.0.0.1:8765/ask",
                        help="ragmeter POSTs JSON to it for each question. Try the demo: python -m evaluator.demo")
    with st.expander("Request and reply fields"):
        body = st.text_input("Body template", value=service.DEFAULT_BODY, key="eval_target_body", persist_state=state.KEEP,
                             help="{question} is replaced by the question, JSON-escaped.")
        headers = st.text_area("Headers", key="eval_target_headers", height=68, persist_state=state.KEEP,
                               placeholder="Authorization: Bearer ${RAG_TOKEN}",
                               help="One 'Name: value' a line. ${VAR} is read from the environment at each call; "
                                    "header values are never saved.")
        c1, c2, c3 = st.columns(3)
        fields = [f"{name}={path.strip()}" for name, path in (
            ("answer", c1.text_input("Answer path", key="eval_target_answer", persist_state=state.KEEP, placeholder="found automatically")),
            ("contexts", c2.text_input("Contexts path", key="eval_target_contexts", persist_state=state.KEEP,
                                        placeholder="e.g. data.hits[].passage")),
            ("tool_calls", c3.text_input("Tool calls path", key="eval_target_tools", persist_state=state.KEEP, placeholder="e.g. steps")),
        ) if path.strip()]
        c1, c2 = st.columns(2)
        workers = int(c1.number_input("Target workers", 1, 64, 4, key="eval_target_workers", persist_state=state.KEEP,
                                      help="Questions sent to your endpoint at once."))
        timeout = float(c2.number_input("Timeout (s)", 1.0, 600.0, 60.0, key="eval_target_timeout",
                                        persist_state=state.KEEP))
    if not url.strip():
        errors.info("Enter your endpoint's URL, then press Test target to check how its reply is read.")
        return None
    if not url.strip().lower().startswith(("http://", "https://")):
        errors.error("Cannot use this target: an HTTP target needs an http:// or https:// URL.",
                     icon=":material/block:")
        return None
    try:  # the URL, body template, headers and paths are checked now
        config = service.target_config(url.strip(), body=body.strip() or None, headers=_lines(headers),
                                       fields=fields, timeout=timeout, workers=workers)
    except service.TargetError as exc:
        errors.error("Cannot use this target: {problem}", problem=exc, icon=":material/block:")
        return None
    return config


def _lines(text: str) -> List[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def try_target_button(config: Optional[service.TargetConfig], samples: Optional[List[EvalSample]]) -> None:
    """Send the first question and show the parsed answer, contexts and tool calls (or the failure)."""
    clicked = st.button("Test target", key="btn_test_target", icon=":material/network_check:",
                        disabled=config is None or not samples)
    if clicked and config is not None and samples:
        with st.spinner("Asking your endpoint the first question…"):
            state.put(state.TARGET_TEST, (config, service.try_target(config, samples[0].question)))
    shown = state.get(state.TARGET_TEST)
    if shown is not None and shown[0] == config:
        response_view(samples[0].question if samples else "", shown[1])


def response_view(question: str, response: Any) -> None:
    """What one call returned, as ragmeter read it."""
    with st.container(border=True):
        errors.caption("Question sent: {question}", question=question)
        if response.error:
            errors.error("The call failed: {problem}", problem=response.error, icon=":material/error:")
            return
        errors.success("Answer ({ms:,.0f} ms): {answer}", ms=response.latency_ms, answer=response.answer)
        st.markdown(f"**Contexts** ({len(response.contexts)})")
        for i, context in enumerate(response.contexts, 1):
            st.text(f"{i}. {context[:500]}")
        if not response.contexts:
            st.caption("No contexts found in the reply: set the contexts path if your endpoint returns them.")
        if response.tool_calls:
            st.markdown(f"**Tool calls** ({len(response.tool_calls)})")
            st.json(response.tool_calls, expanded=False)
