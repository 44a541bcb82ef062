"""What the server knows about a browser session, read from its connection rather than from a page.

- `decision(session_id)`: who the session's user is (service.identify), from the
  headers and peer address of the session's websocket handshake (every copy of a repeated header,
  which st.context.headers would hide), or from Streamlit's OIDC sign-in;
- `guard_uploads()`: Streamlit stores an upload (PUT /_stcore/upload_file/SESSION/FILE) for any live
  session before any page runs, signed in or not. In team mode the runtime's live-session check,
  which only that route asks, also asks whether the session's user may run evaluations (uploads
  are for evaluators); any other session's upload is refused with 400 before its body is read.
"""
from __future__ import annotations

import importlib.util
import logging
from typing import Any, Dict, List, Optional, Tuple

import streamlit as st
from streamlit import config as st_config

from evaluator import service

log = logging.getLogger("ragmeter.dashboard")
_GUARDED = "_ragmeter_upload_guard"  # marks the runtime whose session check is already wrapped


def server_options(cfg: service.Config) -> service.ServerOptions:
    """The running server's address, upload limit and (for OIDC) sign-in parts, for the startup checks."""
    oidc = cfg.server.auth == "oidc"
    return service.ServerOptions(address=str(st_config.get_option("server.address") or ""),
                         max_upload_mb=int(st_config.get_option("server.maxUploadSize")),
                         authlib=oidc and importlib.util.find_spec("authlib") is not None,
                         auth_secrets=oidc and _auth_secrets())


def _auth_secrets() -> bool:
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets.toml at all, or one that does not parse: no [auth] either way
        return False


def _runtime() -> Any:
    from streamlit import runtime

    return runtime.get_instance() if runtime.exists() else None


def connection(session_id: Optional[str]) -> Tuple[List[Tuple[str, str]], Optional[str]]:
    """The handshake's headers (every copy) and the peer address of a session; nothing under AppTest."""
    rt = _runtime()
    client = rt.get_client(session_id) if rt is not None and session_id else None
    context = getattr(client, "client_context", None)
    if context is None:
        return [], None
    return list(context.headers), context.remote_ip


def _claims(session_id: Optional[str]) -> Dict[str, Any]:
    """The OIDC claims of a session: st.user on its script thread, else the runtime's session record."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is not None and ctx.session_id == session_id:
        return dict(st.user.to_dict()) if hasattr(st.user, "to_dict") else dict(st.user)
    rt = _runtime()
    info = rt._session_mgr.get_active_session_info(session_id) if rt is not None else None  # no public way
    return dict(getattr(getattr(info, "session", None), "_user_info", None) or {})


def decision(cfg: service.Config, session_id: Optional[str]) -> service.Decision:
    headers, peer = connection(session_id)
    claims = _claims(session_id) if cfg.server.auth == "oidc" else {}
    return service.identify(cfg, server_options(cfg), headers, peer, claims)


def current_session() -> Optional[str]:
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else None


def may_upload(session_id: str) -> bool:
    """Team mode: only a session whose user may start runs may store uploads (a laptop: anyone)."""
    try:
        cfg = service.server_config()
        if not cfg.team:
            return True
        return service.access_of(cfg, decision(cfg, session_id).user).may("run")
    except Exception:  # a broken config or an unreadable session: refuse, and say why in the log
        log.exception("upload refused: the session's identity could not be decided")
        return False


def guard_uploads() -> None:
    """Wrap the runtime's live-session check (asked only by the upload route) once per server."""
    rt = _runtime()
    if rt is None or getattr(rt, _GUARDED, False):
        return
    live = rt.is_active_session

    def active_and_allowed(session_id: str) -> bool:
        if not live(session_id):
            return False
        allowed = may_upload(session_id)
        if not allowed:
            log.warning("upload refused: session %s has no user allowed to upload", session_id[:8])
        return allowed

    rt.is_active_session = active_and_allowed
    setattr(rt, _GUARDED, True)

