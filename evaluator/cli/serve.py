"""`ragmeter dashboard` and `ragmeter serve`: the dashboard with the right Streamlit flags, and a whole
deployment from its team file, supervised.

    ragmeter dashboard [--port 8501] [--address 127.0.0.1] [--config team.toml] [--history H]
    ragmeter serve [--config team.toml] [--workers N] [--port 8501] [--address 127.0.0.1] [--history H]

`dashboard` replaces itself with `streamlit run app.py` (the same process: Ctrl-C and SIGTERM reach
Streamlit) on 127.0.0.1, usage statistics off, headless, no file watcher, the upload limit of the team
file. `serve` starts, under one supervisor (runs/supervisor.py), the dashboard, N `ragmeter worker`
processes ([runs] engine local or Ray: each worker reads it) and a `ragmeter collect --project P` for
each [[collect]] entry with `listen` (the dashboard is told so and starts none of its own:
collect/beside.py SUPERVISED_ENV). Their output is one stream, each line prefixed by its process.

Both refuse to start, exit 2, with the words the dashboard's page would show (team/startup.py): a
proxy sign-in listening beyond loopback, a proxy secret or sign-in part missing; `serve` also when a
receiver's token or webhook variable is not set, when a port it would listen on (the dashboard's,
a receiver's) is taken, and when another `serve` holds the same team file (issue 49: the second one used
to restart its receivers forever on a taken port). Every setting comes from team/settings.py: --config,
else $RAGMETER_CONFIG, else none (a laptop: the offline judge, the sample data, the dashboard's own
worker); --history, else $RAGMETER_HISTORY, else [server] history, else ~/.ragmeter.
"""
from __future__ import annotations

import argparse
import fcntl
import hashlib
import importlib.util
import os
import socket
import sys
import tempfile
import time
import tomllib
import urllib.request
from pathlib import Path
from typing import IO, Any, Dict, List, Optional

from ..errors import RagmeterError
from ..service.team import CONFIG_ENV, HISTORY_ENV, LOOPBACK_HOSTS, SUPERVISED_ENV, Config, ServerOptions
from ..service.team import is_postgres_url, listen_address, problems, settings
from ..environment import for_child, variables

DEFAULT_PORT = 8501
DEFAULT_ADDRESS = "127.0.0.1"
EXTERNAL_WORKERS = 2  # workers `serve` starts when [runs] workers = "external" and --workers is not given


class ServeError(RagmeterError):
    """A deployment that must not start: printed as one line, exit 2."""


def add_serve_parsers(sub: Any) -> None:
    """`ragmeter dashboard` and `ragmeter serve` (run_serve_command runs both)."""
    dash = sub.add_parser("dashboard", help="start the dashboard (Streamlit) on 127.0.0.1 with the right flags",
                          description="Start the dashboard: `streamlit run app.py` on --address:--port, usage "
                                      "statistics off, headless. Without a team file: the offline judge and the "
                                      "bundled sample data, scored by the dashboard's own worker process.")
    serve = sub.add_parser("serve", help="start a deployment from its team file: the dashboard, workers and trace "
                                         "receivers, supervised",
                           description="Start the dashboard, --workers `ragmeter worker` processes and a trace "
                                       "receiver per [[collect]] entry with listen = ..., all with the same "
                                       "settings; restart any that exits (back-off 1 s to 30 s); their output in "
                                       "one stream, each line prefixed by its process; SIGTERM or Ctrl-C stops "
                                       "them all. Without a team file: what `ragmeter dashboard` starts.")
    for p in (dash, serve):
        p.add_argument("--port", type=int, default=DEFAULT_PORT, help="the dashboard's port (default %(default)s)")
        p.add_argument("--address", default=DEFAULT_ADDRESS, metavar="HOST",
                       help="the address the dashboard listens on (default %(default)s; a team file with "
                            "auth = \"proxy\" refuses any other unless [server] trusted_proxies or "
                            "proxy_secret_env is set)")
        p.add_argument("--config", default=None, metavar="FILE",
                       help="the team file (default $RAGMETER_CONFIG; none: a laptop's defaults)")
        p.add_argument("--history", default=None, help="run history for every process started: a SQLite file or a "
                                                        "postgresql:// URL (default $RAGMETER_HISTORY, else the team "
                                                        "file's [server] history, else ~/.ragmeter)")
    serve.add_argument("--workers", type=int, default=None, metavar="N",
                       help=f"`ragmeter worker` processes to start (default: {EXTERNAL_WORKERS} with [runs] workers = "
                            "\"external\", else 0: the dashboard scores in its own worker process)")


def run_serve_command(args: argparse.Namespace) -> int:
    plan = Plan.of(args)
    if args.command == "dashboard":
        return plan.exec_dashboard()
    return plan.serve()


class Plan:
    """What `dashboard` or `serve` starts, checked before anything starts."""

    def __init__(self, args: argparse.Namespace, config: Config, config_path: Optional[str], root: Path) -> None:
        self.args, self.config, self.config_path, self.root = args, config, config_path, root

    @classmethod
    def of(cls, args: argparse.Namespace) -> "Plan":
        if not 0 < args.port < 65536:
            raise ServeError(f"--port {args.port}: give a port from 1 to 65535")
        where = settings.config_file(args.config)
        path = str(Path(str(where.value)).expanduser().resolve()) if where.value else None
        config = settings.read_team_file(where)  # ConfigError (exit 2) naming the file and key
        plan = cls(args, config, path, app_root())
        plan.check()
        return plan

    # -- checks -------------------------------------------------------------------------------------
    def check(self) -> None:
        if importlib.util.find_spec("streamlit") is None:
            raise ServeError("the dashboard needs Streamlit: pip install -e '.[dashboard]'")
        server = self.config.server
        options = ServerOptions(address=self.args.address, max_upload_mb=server.max_upload_mb,
                                authlib=importlib.util.find_spec("authlib") is not None,
                                auth_secrets=server.auth == "oidc" and auth_secrets(self.root))
        found = problems(self.config, options)
        if getattr(self.args, "workers", None) is not None and self.args.workers < 0:
            found.append(f"--workers {self.args.workers}: give 0 or more")
        if self.args.command == "serve":
            found += receiver_problems(self.config)
        if found:
            raise ServeError("the dashboard cannot start: " + "; ".join(found))

    # -- what runs ----------------------------------------------------------------------------------
    def env(self, **extra: str) -> Dict[str, str]:
        from ..service.team import python_path

        env = for_child(PYTHONUNBUFFERED="1", PYTHONPATH=python_path(), **extra)
        if self.config_path:
            env[CONFIG_ENV] = self.config_path
        history = self.args.history or env.get(HISTORY_ENV, "")
        if history.strip():  # not argv: a PostgreSQL URL may carry a password
            env[HISTORY_ENV] = absolute(history)  # the children start in the checkout, not here
        return env

    def dashboard_argv(self) -> List[str]:
        return [sys.executable, "-m", "streamlit", "run", str(self.root / "app.py"),
                "--server.address", self.args.address, "--server.port", str(self.args.port),
                "--server.headless", "true", "--browser.gatherUsageStats", "false",
                "--server.maxUploadSize", str(self.config.server.max_upload_mb),
                "--server.fileWatcherType", "none", "--server.enableXsrfProtection", "true"]

    def url(self) -> str:
        host = self.args.address
        shown = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host
        return f"http://{'[' + shown + ']' if ':' in shown else shown}:{self.args.port}"

    def workers(self) -> int:
        if self.args.workers is not None:
            return int(self.args.workers)
        return EXTERNAL_WORKERS if self.config.runs.workers == "external" else 0

    def receivers(self) -> List[str]:
        return [entry.project for entry in self.config.collect if entry.listen]

    # -- the two commands ---------------------------------------------------------------------------
    def exec_dashboard(self) -> int:
        """Become `streamlit run app.py` (never returns unless exec fails)."""
        self.check_ports(serving=False)
        print(f"ragmeter dashboard: {self.url()} ({self.describe()})", file=sys.stderr, flush=True)
        os.chdir(self.root)  # .streamlit/config.toml and secrets.toml are read from here
        os.execve(sys.executable, self.dashboard_argv(), self.env())
        return 1  # pragma: no cover

    def serve(self) -> int:
        from ..service.team import Program, Supervisor

        held = supervisor_lock(self.config_path)  # held until this process ends; children do not inherit it
        self.check_ports(serving=True)
        receivers = self.receivers()
        dashboard_env = self.env(**({SUPERVISED_ENV: "1"} if receivers else {}))
        programs = [Program("dashboard", tuple(self.dashboard_argv()), dashboard_env, str(self.root))]
        worker = (sys.executable, "-m", "evaluator", "worker")
        programs += [Program(f"worker-{i}", worker, self.env()) for i in range(1, self.workers() + 1)]
        programs += [Program(f"collect-{project}", (sys.executable, "-m", "evaluator", "collect", "--project", project),
                             self.env()) for project in receivers]
        print(f"ragmeter serve: {self.url()} ({self.describe()}); {self.workers()} workers"
              + (f"; trace receivers for {', '.join(receivers)}" if receivers else "") + self.worker_note(),
              flush=True)
        ready = Readiness(self.url())
        try:
            return Supervisor(programs, on_tick=ready.tick).run()
        finally:
            if held is not None:
                held.close()

    def check_ports(self, serving: bool) -> None:
        """ServeError when the dashboard's port, or (serve) a receiver's, is taken: one line, not a child
        restarted forever on a port it can never have."""
        found = []
        why = port_taken(self.args.address, self.args.port)
        if why:
            found.append(f"the dashboard's port {self.args.port} on {self.args.address or '*'} is taken ({why}): stop "
                         "what listens there, or pick another with --port")
        for entry in self.config.collect if serving else ():
            address = listen_address(entry.listen) if entry.listen else None
            why = port_taken(*address) if address is not None else None
            if why:
                found.append(f"{self.config.source or 'the team file'} [[collect]] project {entry.project!r}: listen = "
                             f"{entry.listen!r} is taken ({why}): stop the `ragmeter collect` or other program on it, "
                             "or change listen")
        if found:
            raise ServeError("cannot start: " + "; ".join(found))

    def describe(self) -> str:
        history = settings.history(self.args.history, None, self.config)
        team = f"team file {self.config_path}" if self.config_path else "no team file: the offline judge and sample data"
        return f"{team}; history {absolute(str(history.shown))} ({history.origin})"

    def worker_note(self) -> str:
        if self.workers() and self.config.runs.workers != "external":
            return ("; the dashboard also scores in its own worker ([runs] workers = \"external\" leaves the "
                    "runs to these)")
        if not self.workers() and self.config.runs.workers == "external":
            return "; no worker here: runs wait for `ragmeter worker`s started elsewhere"
        return ""


class Readiness:
    """Says once, in the stream, when the dashboard answers its health check (again after a restart)."""

    def __init__(self, url: str) -> None:
        self.url, self.said, self.next = url, False, 0.0

    def tick(self) -> None:
        now = time.monotonic()
        if now < self.next:
            return
        self.next = now + 1.0
        up = healthy(self.url)
        if up and not self.said:
            print(f"ragmeter serve: the dashboard is ready at {self.url}", flush=True)
        self.said = up


def port_taken(host: str, port: int) -> Optional[str]:
    """Why nothing could listen on (host, port) now ("Address already in use"), or None when it is free.
    SO_REUSEADDR as servers set it: a port whose last connections are in TIME_WAIT is free."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def supervisor_lock(config_path: Optional[str]) -> Optional[IO[str]]:
    """An exclusive lock on the team file's name for this supervisor's life (none without a team file);
    ServeError naming the other supervisor's pid when one holds it."""
    if not config_path:
        return None
    digest = hashlib.sha256(config_path.encode("utf-8")).hexdigest()[:16]
    held = open(Path(tempfile.gettempdir()) / f"ragmeter-serve-{digest}.lock", "a+", encoding="utf-8")
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        held.seek(0)
        other = held.read().strip() or "?"
        held.close()
        raise ServeError(f"another `ragmeter serve` (pid {other}) is running with the team file {config_path}: "
                         "one supervisor per team file; stop it first") from None
    held.truncate(0)
    held.write(str(os.getpid()))
    held.flush()
    return held


def absolute(location: str) -> str:
    """A history location that means the same from any folder: a relative SQLite path made absolute."""
    if is_postgres_url(location):
        return location
    return str(Path(location.strip()).expanduser().resolve())


def healthy(url: str) -> bool:
    """Whether the dashboard at `url` answers its health check."""
    return answers(f"{url}/_stcore/health")


def answers(url: str, timeout: float = 0.5) -> bool:
    """Whether a GET of `url` is answered 200 within `timeout` seconds (a server started and ready)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False


def app_root() -> Path:
    """The checkout holding app.py and pages/ (the dashboard ships with the source, not inside the package)."""
    from ..service.team import PACKAGE_ROOT

    root = Path(PACKAGE_ROOT)
    if not (root / "app.py").is_file() or not (root / "pages").is_dir():
        raise ServeError(f"the dashboard's app.py and pages/ are not beside this ragmeter ({root}): they come "
                         "with a clone of the repository; install it from there with pip install -e '.[dashboard]'")
    return root


def auth_secrets(root: Path) -> bool:
    """Whether a secrets.toml Streamlit reads (the project's, then the user's) holds an [auth] section."""
    for path in (root / ".streamlit" / "secrets.toml", Path.home() / ".streamlit" / "secrets.toml"):
        try:
            if "auth" in tomllib.loads(path.read_text(encoding="utf-8")):
                return True
        except (OSError, tomllib.TOMLDecodeError):
            continue
    return False


def receiver_problems(config: Config, environ: Optional[Dict[str, str]] = None) -> List[str]:
    """Why a [[collect]] receiver would exit at once: its token or webhook variable not set."""
    env = variables() if environ is None else environ
    found = []
    for entry in config.collect:
        if not entry.listen:
            continue
        where = f"{config.source or 'the team file'} [[collect]] project {entry.project!r}"
        address = listen_address(entry.listen)
        for key, name in (("token_env", entry.token_env), ("webhook_env", entry.webhook_env)):
            if name and not env.get(name, "").strip():
                found.append(f"{where}: {key} names {name}, which is not set: export {name}=... first")
        if address is not None and address[0] not in LOOPBACK_HOSTS and not entry.token_env:
            found.append(f"{where}: listen = {entry.listen!r} is not loopback: set token_env")
    return found
