"""Team mode in the dashboard: who the user is, what their role lets them do, and what they may pick.

Off on a laptop (no $RAGMETER_CONFIG): every function here then answers "allowed" and the pages
behave as before. In team mode (README "Team mode"):
- the user is the value of the SSO proxy's header from a trusted proxy (`auth = "proxy"`) or the
  verified e-mail of Streamlit's own sign-in (`auth = "oidc"`, st.login / st.user), normalised and
  checked for look-alikes (service.identify, pages/_sessions.py); an unknown user, or one in no
  [roles] list, sees a sign-in message and nothing else;
- a server that must not start (service.startup_problems: reachable by anyone, upload limit not the
  operator's, OIDC without Authlib or [auth]) shows why instead of any page;
- every write checks the session's `access()` (service.access_of) right before it happens: each write of
  the service takes it (`authorize(action, owner)` asks it for a script's own writes);
- judges are picked by name from [[judges]]; no base URL or key field exists, and the key is read
  on the server from the entry's api_key_env, for that entry's base URL only;
- the history is [server].history, never a field in the page.
"""
from __future__ import annotations

from typing import Any, NoReturn, Optional
from urllib.parse import quote

import streamlit as st
from streamlit import config as st_config

from evaluator import service

from pages import _errors as errors
from pages import _sessions as sessions

LOCAL_USER = service.LOCAL_USER
ROLE_HELP = {"viewer": "open reports and the history", "evaluator": "upload datasets and run evaluations",
             "admin": "rename and delete any run"}


def config() -> service.Config:
    """The server's configuration; a broken one, or a team server that must not start, stops the page."""
    try:
        cfg = service.server_config()
    except service.ConfigError as exc:
        _cannot_start(str(exc))
    if cfg.team:
        if not st_config.get_option("global.appTest"):  # AppTest shares one process: leave its tests' option
            st.set_option("client.showErrorDetails", "none")  # no traceback, type or message reaches a user
        sessions.guard_uploads()
        found = service.startup_problems(cfg, sessions.server_options(cfg))
        if found:
            _cannot_start("; ".join(found))
    return cfg


def _cannot_start(problem: str) -> NoReturn:
    errors.error("The dashboard cannot start: {problem}", problem=problem, icon=":material/error:")
    st.stop()
    raise AssertionError("st.stop returned")  # it raises; this line only tells type checkers so


def decision() -> service.Decision:
    """Who this session's user is in team mode, or why nobody (service.identify)."""
    cfg = config()
    return sessions.decision(cfg, sessions.current_session()) if cfg.team else service.Decision()


def user() -> Optional[str]:
    """The signed-in user's name, one spelling per person (team mode); None on a laptop or when unknown."""
    return decision().user


def access() -> service.Access:
    """This session's standing, which every write of the service checks (everything allowed on a laptop)."""
    cfg = config()
    return service.access_of(cfg, user() if cfg.team else None)


def authorize(action: str, owner: Optional[str] = None) -> None:
    """NotAllowed unless this session's user may do `action` (to a run owned by `owner`): called right
    before every write, whatever button led there."""
    access().check(action, owner)


def may(action: str, owner: Optional[str] = None) -> bool:
    """Whether to draw the control for `action` (the write itself still checks access())."""
    return access().may(action, owner)


def allowed(role: str) -> bool:
    """Whether the current user holds `role` (always on a laptop)."""
    cfg = config()
    if not cfg.team:
        return True
    name = user()
    return name is not None and cfg.roles.allows(name, role)


def gate() -> None:
    """Before any page draws: in team mode an unknown user sees how to sign in, and nothing else."""
    cfg = config()
    if not cfg.team:
        return
    found = decision()
    name = found.user
    if name is None:
        st.title("ragmeter")
        if found.problem:
            errors.warning("Not signed in: {problem}.", problem=found.problem, icon=":material/gpp_bad:")
        if cfg.server.auth == "oidc" and found.problem:  # signed in, but not as anyone we can trust
            errors.info("Sign out, then sign in with an account whose e-mail address is verified.",
                        icon=":material/login:")
            st.button("Sign out", key="btn_team_logout", on_click=st.logout)
        elif cfg.server.auth == "oidc":
            errors.info("Sign in to see this team's evaluations.", icon=":material/login:")
            st.button("Sign in", key="btn_team_login", on_click=st.login)
        else:
            errors.info("Sign in through your organisation's single sign-on to see this team's evaluations. "
                        "(This server only accepts users its sign-in proxy has identified.)", icon=":material/login:")
        st.stop()
    if cfg.roles.role_of(name) is None:
        st.title("ragmeter")
        errors.warning("You are signed in, but this dashboard has not been shared with you. Ask its admins for "
                       "access.", icon=":material/lock:")
        st.text(f"Signed in as {name}")
        st.stop()


def require(role: str) -> None:
    """Stop the page with a note when the user's role does not allow `role`'s actions."""
    if not allowed(role):
        errors.info("Your role does not let you {action}; ask this dashboard's admins.", action=ROLE_HELP[role],
                    icon=":material/lock:")
        st.stop()


def owner() -> Optional[str]:
    """The owner to record for a run started in this session (None on a laptop: history's default)."""
    return user() if config().team else None


def identity_line() -> None:
    """Who is signed in and as what (sidebar), shown as text."""
    cfg = config()
    name = user()
    if cfg.team and name is not None:
        st.text(f"Signed in as {name} ({cfg.roles.role_of(name)})")


def judge_picker(prefix: str, language: Any) -> service.RunConfig:
    """Team mode's judge choice: one of [[judges]] by name, nothing typed."""
    cfg = config()
    names = ["Offline (no API key)"] + [j.name for j in cfg.judges]
    chosen = st.selectbox("Judge", names, key=f"{prefix}_team_judge",
                          help="The judges this server's operator configured; their keys stay on the server.")
    base = service.RunConfig(language=language)
    if chosen == names[0]:
        st.caption("Lexical heuristics score every metric: no network, no key, no cost.")
        return base
    return cfg.judge(chosen).run_config(base)


def share_link(page: str, **params: str) -> str:
    """A link to `page` with `params` (relative to the dashboard's own address)."""
    query = "&".join(f"{k}={quote(v, safe=',')}" for k, v in params.items())
    return f"/{page}" + (f"?{query}" if query else "")


__all__ = ["LOCAL_USER", "access", "allowed", "authorize", "config", "gate", "judge_picker", "may", "owner", "require",
           "share_link", "user"]


def resumed_config(settings: dict) -> Optional[service.RunConfig]:
    """The judge to resume a stored run with: None on a laptop (the run's own settings); in team mode only the
    [[judges]] entry of the run's model and base URL (service.resumed_config says why)."""
    return service.resumed_config(config(), settings)
