"""Counted clicks: every click of a button reaches the page, however fast they come.

A Streamlit button is a trigger, not a count: two clicks that reach the server while the page's script
runs are merged into one rerun, and one of them is lost (issue 28: three quick "Agree with all and
next" clicks stored one review). `counted(key, scope)` mounts an invisible component whose script
catches mouse clicks on the button with that key before Streamlit sees them, and sends the browser's
running count instead (a state value: the server always gets the latest total, so merged reruns lose
nothing). The page then acts once per new click.

The button itself stays an ordinary `st.button`: its keyboard shortcut, AppTest, and a browser where
the script did not load still reach its callback, one trigger at a time, exactly as before. A click
the script counted never also triggers the button (it stops the event), so nothing is done twice.
"""
from __future__ import annotations

from typing import Any, Dict

import streamlit as st

from pages import _state as state

# Trusted, constant code (no page data is ever put in it). One capture listener on the document
# (installed once per browser tab) sees a click before React's handlers on the app root do.
_JS = """
export default function(component) {
    const { data, setStateValue } = component;
    const counts = (window.__ragmeterClicks = window.__ragmeterClicks || {});
    const slot = data.key + "|" + data.scope;
    counts[slot] = Math.max(counts[slot] || 0, data.seen || 0);
    window.__ragmeterClickSenders = window.__ragmeterClickSenders || {};
    window.__ragmeterClickSenders[data.key] = { scope: data.scope, send: setStateValue };
    if (!window.__ragmeterClickListener) {
        window.__ragmeterClickListener = true;
        document.addEventListener("click", (event) => {
            const senders = window.__ragmeterClickSenders;
            for (const key of Object.keys(senders)) {
                const button = event.target.closest && event.target.closest(".st-key-" + key + " button");
                if (!button || button.disabled) continue;
                event.stopPropagation();
                event.preventDefault();
                const sender = senders[key];
                const at = key + "|" + sender.scope;
                counts[at] = (counts[at] || 0) + 1;
                sender.send("clicks", { scope: sender.scope, n: counts[at] });
                return;
            }
        }, true);
    }
}
"""
_COMPONENT: Any = None


def _component() -> Any:
    global _COMPONENT
    if _COMPONENT is None:  # registered on first use: pages that count no clicks pay nothing
        _COMPONENT = st.components.v2.component("ragmeter_counted_clicks", js=_JS)
    return _COMPONENT


def counted(key: str, scope: str) -> int:
    """How many clicks of the button keyed `key` the browser counted since the last call, for `scope`
    (e.g. a run id: a new scope starts a new count). Call it on every run of the page, once."""
    seen_key = f"clicks_seen_{key}"
    seen: Dict[str, int] = dict(state.get(seen_key) or {})
    before = int(seen.get(scope, 0))
    result = _component()(key=f"clicks_{key}", data={"key": key, "scope": scope, "seen": before},
                          on_clicks_change=lambda: None)
    sent = getattr(result, "clicks", None)  # {"scope": ..., "n": total}: a count sent for another scope is stale
    total = sent.get("n") if isinstance(sent, dict) and sent.get("scope") == scope else None
    now = int(total) if isinstance(total, (int, float)) and total > before else before
    seen[scope] = now
    state.put(seen_key, seen)
    return now - before
