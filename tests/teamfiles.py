"""Team set-ups the tests share: the operator's configuration file (RAGMETER_CONFIG, evaluator/config.py)
written from keyword options, and the real dashboard started the way a team deploys it.

    path = write_team(tmp_path, monkeypatch, history=db, evaluators=[ALICE], judges=[team_judge(url)])
    with team_dashboard(path, tmp_path / "server.log", TEAM_JUDGE_KEY="sk-test") as server:
        ...  # server.url: through the sign-in proxy (tests/signin_proxy.py); server.direct: the app itself

`team_toml` gives team mode's defaults (`[server] shared = true`, `auth = "proxy"`, every signed-in user a
viewer); `config_toml` writes any sections as given (a laptop file, a [[collect]]-only file).
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tomllib
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from evaluator.config import DEFAULT_MAX_UPLOAD_MB, DEFAULT_USER_HEADER
from ports import serve_on_free_port, stop
from signin_proxy import SignInProxy

ROOT = Path(__file__).resolve().parent.parent
HEADER = DEFAULT_USER_HEADER  # the identity header the sign-in proxy sends
SERVER_START_TIMEOUT = 60.0


# --- the configuration file ----------------------------------------------------------------------
def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, (str, Path)):
        return json.dumps(str(value), ensure_ascii=False)  # a JSON string is a TOML basic string
    return "[" + ", ".join(_toml(v) for v in value) + "]"


def config_toml(**sections: Any) -> str:
    """TOML for `sections`, in the order given: a dict is a table (`server={...}`: [server]), a list of
    dicts an array of tables (`judges=[...]`: [[judges]]). Keys whose value is None are left out, and
    so are sections left empty."""
    lines: List[str] = []
    for name, body in sections.items():
        many = isinstance(body, (list, tuple))
        for table in (body if many else [body]):
            keys = {k: v for k, v in (table or {}).items() if v is not None}
            if keys:
                lines += [f"[[{name}]]" if many else f"[{name}]", *(f"{k} = {_toml(v)}" for k, v in keys.items()), ""]
    return "\n".join(lines)


def team_toml(*, history: Any = None, auth: Optional[str] = "proxy", viewers: Sequence[str] = ("*",),
              evaluators: Sequence[str] = (), admins: Sequence[str] = (), judges: Sequence[Dict[str, Any]] = (),
              targets: Optional[Dict[str, Any]] = None, runs: Optional[Dict[str, Any]] = None,
              collect: Sequence[Dict[str, Any]] = (), **server: Any) -> str:
    """A team-mode file: [server] with shared = true, `history`, `auth` (None leaves it out, which the
    config refuses) and any other [server] key by name (user_header, max_upload_mb, trusted_proxies...);
    [roles]; then [[judges]], [targets], [runs] and [[collect]] where given."""
    roles = {"viewers": list(viewers), "evaluators": list(evaluators) or None, "admins": list(admins) or None}
    return config_toml(server={"shared": True, "history": history, "auth": auth, **server}, roles=roles,
                       judges=list(judges), targets=targets, runs=runs, collect=list(collect))


def team_judge(base_url: str, *, name: str = "team judge", model: str = "test-model",
               api_key_env: str = "TEAM_JUDGE_KEY", **more: Any) -> Dict[str, Any]:
    """A [[judges]] entry: the operator's judge, its key read from `api_key_env` on the server."""
    return {"name": name, "base_url": base_url, "model": model, "api_key_env": api_key_env, **more}


def write_config(folder: Path, text: str, monkeypatch: Any = None, name: str = "team.toml") -> Path:
    """`text` written to folder/name; with `monkeypatch`, RAGMETER_CONFIG names it for the rest of the test."""
    path = Path(folder) / name
    path.write_text(text, encoding="utf-8")
    if monkeypatch is not None:
        monkeypatch.setenv("RAGMETER_CONFIG", str(path))
        if tomllib.loads(text).get("server", {}).get("history"):  # the file names it: the operator's choice,
            monkeypatch.delenv("RAGMETER_HISTORY", raising=False)  # not the test home's (the environment wins)
    return path


def write_team(folder: Path, monkeypatch: Any = None, **options: Any) -> Path:
    """A team-mode file (`team_toml(**options)`) written to folder/team.toml; see `write_config`."""
    return write_config(folder, team_toml(**options), monkeypatch)


# --- the dashboard ---------------------------------------------------------------------------------
def healthy(url: str) -> bool:
    """Whether the Streamlit server at `url` answers its health check."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
            return reply.status == 200 and reply.read().strip() == b"ok"
    except OSError:
        return False


def start_dashboard(env: Dict[str, str], log_path: Path) -> Tuple[subprocess.Popen, str]:
    """`streamlit run app.py` with `env` on a free loopback port, its output in `log_path`: (process, URL).

    Several pytest-xdist workers start servers at once: a port taken meanwhile means a new port
    (tests/ports.py), never a failed test.
    """
    def command(port: int) -> List[str]:
        return [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1",
                "--server.port", str(port), "--browser.gatherUsageStats", "false", "--server.headless", "true"]

    proc, port = serve_on_free_port(command, lambda port: healthy(f"http://127.0.0.1:{port}"), log_path,
                                    SERVER_START_TIMEOUT, cwd=ROOT, env=env)
    return proc, f"http://127.0.0.1:{port}"


@contextlib.contextmanager
def serve_dashboard(env: Dict[str, str], log_path: Path) -> Iterator[str]:
    """`start_dashboard`, stopped on the way out; yields its URL."""
    proc, url = start_dashboard(env, log_path)
    try:
        yield url
    finally:
        stop(proc)


def team_env(config: Path, **extra: str) -> Dict[str, str]:
    """A team server's environment: this process's, RAGMETER_CONFIG naming `config`, Streamlit's upload
    limit set to the file's max_upload_mb (a team server refuses any other), no RAGMETER_HISTORY (the
    file names the history); then `extra`."""
    server = tomllib.loads(Path(config).read_text(encoding="utf-8")).get("server", {})
    env = {**os.environ, "RAGMETER_CONFIG": str(config),
           "STREAMLIT_SERVER_MAX_UPLOAD_SIZE": str(server.get("max_upload_mb", DEFAULT_MAX_UPLOAD_MB))}
    env.pop("RAGMETER_HISTORY", None)
    return {**env, **extra}


def signin_proxy(url: str, values: Optional[Sequence[str]] = None) -> SignInProxy:
    """A sign-in proxy in front of the dashboard at `url` (values: fixed header lines, see SignInProxy)."""
    return SignInProxy(int(url.rsplit(":", 1)[1]), HEADER, values)


@dataclass(frozen=True)
class TeamServer:
    url: str  # what users open: through the sign-in proxy, or the dashboard itself with signin=False
    direct: str  # the dashboard itself
    log: Path


@contextlib.contextmanager
def team_dashboard(config: Path, log: Path, *, signin: bool = True, **env: str) -> Iterator[TeamServer]:
    """The real dashboard in team mode (`team_env(config, **env)`), behind a sign-in proxy that turns each
    browser context's cookie into the identity header (signin=False: none, the caller brings its own)."""
    with serve_dashboard(team_env(config, **env), log) as direct:
        if not signin:
            yield TeamServer(direct, direct, log)
            return
        with signin_proxy(direct) as proxy:
            yield TeamServer(proxy.url, direct, log)
