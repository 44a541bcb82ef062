"""The operator's configuration: one TOML file named by $RAGMETER_CONFIG, read into frozen dataclasses.

No file (the laptop default) means today's behaviour: one user, every feature open. A file with
`[server] shared = true` switches on team mode (README "Team mode"):

    [server]   shared, history, auth ("proxy" | "oidc"), user_header, max_upload_mb,
               trusted_proxies (CIDRs), proxy_secret_header + proxy_secret_env, identity_claim (oidc)
    [roles]    viewers, evaluators, admins: lists of user names, "*" = any signed-in user;
               viewers_may_comment (false: only evaluators and admins write notes on runs and samples)
    [[judges]] name, base_url, model, api_key_env (+ kind, temperature, max_workers, json_mode)
    [judge]    max_tokens: every judge call's completion cap (0 or absent: each metric's own)
    [inputs]   max_rows, max_mb: the most rows and megabytes a dataset the command line reads may hold
    [targets]  allow (URL prefixes a target may call), allow_env (variables a header may use)
    [runs]     max_running_per_user, max_queued (0 = no cap), max_queued_per_user (team mode 20, else 0; admins
               exempt), lease_s, workers ("local" | "external"),
               engine ("local" | "ray"), ray_address (none = a local cluster), ray_workers: how runs wait
               and who executes them (runs/worker.py; "ray": workers score on a Ray cluster, runs/ray_run.py)
    [[collect]] project, judge (a [[judges]] name; none = offline), sample (0-1), rules (["KEY = VALUE", ...]),
               max_per_hour: what `ragmeter collect --project NAME` samples and judges (evaluator/collect/);
               listen ("HOST:PORT": the dashboard starts that receiver beside it), token_env, alerts, webhook_env

Every mistake is a ConfigError naming the file and the key. Team mode without `auth` is refused
here, so a shared dashboard cannot start without knowing who its users are.
"""
from __future__ import annotations

import difflib
import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple

from .errors import ConfigError
from .store.jobs import Limits
from .team.identity import config_name, parse_networks
from .environment import read

ENV_VAR = "RAGMETER_CONFIG"
AUTH_KINDS = ("proxy", "oidc")
DEFAULT_USER_HEADER = "X-Forwarded-Email"
DEFAULT_SECRET_HEADER = "X-Ragmeter-Proxy-Secret"
DEFAULT_MAX_UPLOAD_MB = 200  # Streamlit's own default upload limit
ANYONE = "*"
ROLES = ("viewer", "evaluator", "admin")  # each role can do everything the one before it can
LOCAL_USER = "local"  # the owner recorded for runs started without team mode
WORKER_KINDS = ("local", "external")
RUN_ENGINES = ("local", "ray")


@dataclass(frozen=True)
class ServerConfig:
    shared: bool = False
    history: str = ""  # a SQLite path or a postgresql:// URL; "" = $RAGMETER_HISTORY or the default file
    auth: str = ""
    user_header: str = DEFAULT_USER_HEADER
    max_upload_mb: int = DEFAULT_MAX_UPLOAD_MB
    trusted_proxies: Tuple[str, ...] = ()  # peers whose user header counts (evaluator.team.identity)
    proxy_secret_header: str = DEFAULT_SECRET_HEADER
    proxy_secret_env: str = ""  # the variable holding the secret the proxy sends; never the secret itself
    identity_claim: str = ""  # oidc: "" = the e-mail claim, only when email_verified is true
    fold_unicode_names: bool = False  # merge names NFKC/casefold would merge ("ａlice" = "alice"); off: refused


@dataclass(frozen=True)
class RolesConfig:
    """Who may do what. Admins may also evaluate and view; evaluators may also view."""

    viewers: Tuple[str, ...] = (ANYONE,)
    evaluators: Tuple[str, ...] = ()
    admins: Tuple[str, ...] = ()
    viewers_may_comment: bool = False  # notes on runs and samples (service/notes.py): evaluators and admins only

    def role_of(self, user: str) -> Optional[str]:
        """The user's highest role, or None when they may not even view."""
        # Names are normalised when the file is read and when the user signs in (evaluator.team.identity).
        for role, names in (("admin", self.admins), ("evaluator", self.evaluators), ("viewer", self.viewers)):
            if ANYONE in names or user in names:
                return role
        return None

    def allows(self, user: str, role: str) -> bool:
        """Whether `user` holds `role` or a higher one."""
        held = self.role_of(user)
        return held is not None and ROLES.index(held) >= ROLES.index(role)


@dataclass(frozen=True)
class ConfiguredJudge:
    """One judge team users can pick by name; its key is read on the server from `api_key_env`."""

    name: str
    model: str
    base_url: str = ""
    api_key_env: str = ""
    kind: str = "openai"
    temperature: float = 0.0
    max_workers: int = 4

    def run_config(self, base: Any) -> Any:
        """`base` (a RunConfig) judged by this entry: config.py sits below runs.py, so the caller passes one."""
        return replace(base, judge=self.kind, model=self.model, base_url=self.base_url,
                       api_key_env=self.api_key_env, temperature=self.temperature, max_workers=self.max_workers)


@dataclass(frozen=True)
class TargetsConfig:
    """What an HTTP target may call. `restricted` is off on a laptop: any URL, any variable."""

    allow: Tuple[str, ...] = ()
    allow_env: Tuple[str, ...] = ()
    restricted: bool = False


@dataclass(frozen=True)
class RunsConfig:
    """How runs wait and run. `workers = "local"`: each dashboard/CLI process runs its users' runs in a
    worker of its own; "external": only `ragmeter worker` processes do (a team deployment)."""

    max_running_per_user: int = 0
    max_queued: int = 0
    lease_s: float = 30.0
    max_queued_per_user: int = 0  # one user's runs queued or running at once (admins exempt); 0 = no cap
    exempt: Tuple[str, ...] = ()  # the [roles] admins, set when the file is read
    workers: str = "local"
    engine: str = "local"
    ray_address: str = ""  # engine "ray": the cluster to join ("auto", "ray://host:10001"); "" starts a local one
    ray_workers: int = 2  # engine "ray": Ray workers scoring each run (the judge concurrency is shared among them)

    @property
    def limits(self) -> Limits:
        return Limits(self.max_running_per_user, self.max_queued, self.lease_s, self.max_queued_per_user, self.exempt)


@dataclass(frozen=True)
class ConfiguredCollect:
    """A project's production-trace sampling (`ragmeter collect`): rate, rules, hourly cap and judge."""

    project: str
    judge: str = ""  # a [[judges]] entry's name; "" = the offline judge
    sample: float = 1.0
    rules: Tuple[str, ...] = ()
    max_per_hour: int = 0
    # Set `listen` and the dashboard starts `ragmeter collect --project P` beside it (collect/beside.py),
    # which reads the rest from here: the bearer token's variable, the alert rules, the webhook URL's variable.
    listen: str = ""  # HOST:PORT
    token_env: str = ""
    alerts: Tuple[str, ...] = ()
    webhook_env: str = ""


MAX_JUDGE_TOKENS = 32768  # a completion cap above this is a typo, not a setting


@dataclass(frozen=True)
class JudgeDefaults:
    """[judge]: what every judge call of this team gets unless a flag says otherwise. `max_tokens` 0 = each
    metric's own completion cap (metrics/*.py); more = that cap for every call (`--judge-max-tokens`)."""

    max_tokens: int = 0


DEFAULT_MAX_ROWS = 100_000  # the dashboard's own default (pages/_data.py): a run of more is split or raised
DEFAULT_MAX_MB = 1_000  # a dataset file, and the text it unpacks to (a workbook is a zip), in MB


@dataclass(frozen=True)
class InputLimits:
    """[inputs]: the most a dataset file read by the command line may hold (issue 49: a 1,048,575-row workbook
    took 587 s and 3.2 GB with no cap). `--max-rows`/`--max-mb` and RAGMETER_MAX_ROWS/_MB win (team/settings.py)."""

    max_rows: int = DEFAULT_MAX_ROWS
    max_mb: int = DEFAULT_MAX_MB


@dataclass(frozen=True)
class Config:
    server: ServerConfig = field(default_factory=ServerConfig)
    roles: RolesConfig = field(default_factory=RolesConfig)
    judges: Tuple[ConfiguredJudge, ...] = ()
    targets: TargetsConfig = field(default_factory=TargetsConfig)
    runs: RunsConfig = field(default_factory=RunsConfig)
    source: str = ""  # the file it was read from ("" = none)
    collect: Tuple[ConfiguredCollect, ...] = ()
    given: Tuple[str, ...] = ()  # the keys the file sets ("runs.engine", "judges[0].model"): where a value came from
    judge_defaults: JudgeDefaults = field(default_factory=JudgeDefaults)  # [judge]
    inputs: InputLimits = field(default_factory=InputLimits)  # [inputs]

    @property
    def team(self) -> bool:
        return self.server.shared

    def judge(self, name: str) -> ConfiguredJudge:
        for entry in self.judges:
            if entry.name == name:
                return entry
        raise ConfigError(f"no judge named {name!r} in {self.source or 'the configuration'}; "
                          f"the configured judges are: {', '.join(j.name for j in self.judges) or 'none'}")


    def collect_for(self, project: str) -> Optional[ConfiguredCollect]:
        """The [[collect]] entry of `project`, or None."""
        return next((c for c in self.collect if c.project == project), None)


LAPTOP = Config()


def load(path: Optional[os.PathLike | str] = None) -> Config:
    """The configuration at `path`, else at $RAGMETER_CONFIG, else LAPTOP (no file: nothing changes)."""
    chosen = str(path) if path is not None else read(ENV_VAR)
    if not chosen:
        return LAPTOP
    file = Path(chosen).expanduser()
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read the configuration {file} ({exc.strerror or exc}); "
                          f"fix the path in {ENV_VAR} or unset it") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(_syntax_error(file, exc)) from None
    return from_dict(data, str(file))


def _syntax_error(file: Path, exc: tomllib.TOMLDecodeError) -> str:
    """FILE:LINE:COLUMN first, as compilers say it, so an editor jumps there; tomllib puts them at the end."""
    found = re.search(r"\(at line (\d+), column (\d+)\)$", str(exc))
    if found is None:
        return f"{file} is not valid TOML: {exc}"
    what = str(exc)[:found.start()].strip()
    return (f"{file}:{found.group(1)}:{found.group(2)}: not valid TOML ({what} at line {found.group(1)}, "
            f"column {found.group(2)}); fix it, or point {ENV_VAR} elsewhere")


_loaded: Dict[Tuple[str, float], Config] = {}


def current(path: Optional[str] = None) -> Config:
    """The configuration at `path`, else the one $RAGMETER_CONFIG names now (read again only when the file
    changes)."""
    chosen = read(ENV_VAR) if path is None else path.strip()
    if not chosen:
        return LAPTOP
    try:
        key = (chosen, os.stat(Path(chosen).expanduser()).st_mtime)
    except OSError:
        return load(chosen)  # raises the ConfigError that names the file
    if key not in _loaded:
        _loaded.clear()
        _loaded[key] = load(chosen)
    return _loaded[key]


def from_dict(data: Mapping[str, Any], source: str = "the configuration") -> Config:
    """A Config from parsed TOML; ConfigError naming `source` and the key for anything wrong."""
    _known(data, ("server", "roles", "judges", "targets", "runs", "collect", "judge", "inputs"), "", source)
    server = _server(_table(data, "server", source), source)
    judges = tuple(_judge(item, i, source) for i, item in enumerate(_list(data, "judges", source, dict)))
    names = [j.name for j in judges]
    if len(set(names)) != len(names):
        raise ConfigError(f"{source}: [[judges]] names must be unique (found {sorted(names)})")
    roles = _roles(_table(data, "roles", source), source, server.fold_unicode_names)
    config = Config(server=server, roles=roles, judges=judges,
                    targets=_targets(_table(data, "targets", source), server.shared, source),
                    runs=replace(_runs(_table(data, "runs", source), source,
                                       TEAM_QUEUED_PER_USER if server.shared else 0), exempt=roles.admins),
                    source=source,
                    collect=_collects(data, names, source),
                    given=_given_keys(data),
                    judge_defaults=_judge_defaults(_table(data, "judge", source), source),
                    inputs=_inputs(_table(data, "inputs", source), source))
    return config


def _given_keys(data: Mapping[str, Any]) -> Tuple[str, ...]:
    """The keys the file sets ("runs.engine", "judges[0].model"): where `ragmeter config` says a value came from."""
    tables = [f"{table}.{key}" for table in ("server", "roles", "targets", "runs", "judge", "inputs")
              for key in data.get(table, {})]
    entries = [f"{kind}[{i}].{key}" for kind in ("judges", "collect") for i, item in enumerate(data.get(kind, []))
               for key in item]
    return tuple(tables + entries)


def _collects(data: Mapping[str, Any], judges: list, source: str) -> Tuple[ConfiguredCollect, ...]:
    entries = tuple(_collect(item, i, judges, source) for i, item in enumerate(_list(data, "collect", source, dict)))
    projects = [c.project for c in entries]
    if len(set(projects)) != len(projects):
        raise ConfigError(f"{source}: one [[collect]] entry per project (found {sorted(projects)})")
    return entries


def _collect(item: Mapping[str, Any], i: int, judges: list, source: str) -> ConfiguredCollect:
    where = f"collect[{i}]"
    _known(item, ("project", "judge", "sample", "rules", "max_per_hour", "listen", "token_env", "alerts",
                  "webhook_env"), where, source)
    project = _get(item, "project", str, "", where, source).strip()
    if not project:
        raise ConfigError(f"{source}: {where}.project is required (the project the live runs are listed under)")
    judge = _get(item, "judge", str, "", where, source).strip()
    if judge and judge not in judges:
        raise ConfigError(f"{source}: {where}.judge {judge!r} is not a [[judges]] name; the configured judges are: "
                          f"{', '.join(judges) or 'none'}")
    sample = float(_get(item, "sample", (int, float), 1.0, where, source))
    if not 0.0 <= sample <= 1.0:
        raise ConfigError(f"{source}: {where}.sample must be a share from 0 to 1, not {sample:g}")
    cap = _get(item, "max_per_hour", int, 0, where, source)
    if cap < 0:
        raise ConfigError(f"{source}: {where}.max_per_hour must be 0 (no cap) or more, not {cap}")
    rules = tuple(_strings(item, "rules", [], where, source))  # read by collect/sampling.py (the one parser)
    listen = _collect_listen(item, where, source)
    token_env, webhook_env = (_get(item, k, str, "", where, source).strip() for k in ("token_env", "webhook_env"))
    for key, name in (("token_env", token_env), ("webhook_env", webhook_env)):
        if name and not ENV_NAME.fullmatch(name):
            raise ConfigError(f"{source}: {where}.{key} is the NAME of an environment variable (e.g. "
                              f"RAGMETER_COLLECT_TOKEN), not {name[:40]!r}: secrets never go in this file")
    address = listen_address(listen)
    if address is not None and not token_env and address[0] not in LOOPBACK_HOSTS:
        raise ConfigError(f"{source}: {where}.listen {listen!r} takes traces from other machines: set {where}.token_env "
                          "to the variable holding the bearer token senders must send (or listen on 127.0.0.1)")
    alerts = tuple(_strings(item, "alerts", [], where, source))  # read by collect/alerts.py (the one parser)
    return ConfiguredCollect(project, judge, sample, rules, cap, listen, token_env, alerts, webhook_env)


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def listen_address(text: str) -> Optional[Tuple[str, int]]:
    """(host, port) of "HOST:PORT" (an IPv6 host in brackets loses them); None when it is not that."""
    host, sep, port = (text or "").rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host.strip("[]"), int(port)


def _collect_listen(item: Mapping[str, Any], where: str, source: str) -> str:
    listen = _get(item, "listen", str, "", where, source).strip()
    if listen and listen_address(listen) is None:
        raise ConfigError(f"{source}: {where}.listen must be HOST:PORT, e.g. \"127.0.0.1:4318\", not {listen[:60]!r}")
    return listen


def _server(table: Mapping[str, Any], source: str) -> ServerConfig:
    _known(table, ("shared", "history", "auth", "user_header", "max_upload_mb", "trusted_proxies",
                   "proxy_secret_header", "proxy_secret_env", "identity_claim", "fold_unicode_names"), "server", source)
    trusted = tuple(_strings(table, "trusted_proxies", [], "server", source))
    parse_networks(trusted, f"{source}: server")
    server = ServerConfig(
        shared=_get(table, "shared", bool, False, "server", source),
        history=_get(table, "history", str, "", "server", source).strip(),
        auth=_get(table, "auth", str, "", "server", source).strip(),
        user_header=_get(table, "user_header", str, DEFAULT_USER_HEADER, "server", source).strip(),
        max_upload_mb=_get(table, "max_upload_mb", int, DEFAULT_MAX_UPLOAD_MB, "server", source),
        trusted_proxies=trusted,
        proxy_secret_header=_get(table, "proxy_secret_header", str, DEFAULT_SECRET_HEADER, "server", source).strip(),
        proxy_secret_env=_get(table, "proxy_secret_env", str, "", "server", source).strip(),
        identity_claim=_get(table, "identity_claim", str, "", "server", source).strip(),
        fold_unicode_names=_get(table, "fold_unicode_names", bool, False, "server", source))
    if server.auth and server.auth not in AUTH_KINDS:
        raise ConfigError(f"{source}: server.auth must be one of {', '.join(map(repr, AUTH_KINDS))}, "
                          f"not {server.auth!r}")
    if server.shared and not server.auth:
        raise ConfigError(f"{source}: team mode (server.shared = true) needs server.auth = \"proxy\" "
                          "(an SSO proxy in front sets the user header) or \"oidc\" (Streamlit's st.login); "
                          "the dashboard will not start without knowing who its users are")
    if server.auth == "proxy" and not server.user_header:
        raise ConfigError(f"{source}: server.user_header must name the header the SSO proxy sets")
    if server.max_upload_mb < 1:
        raise ConfigError(f"{source}: server.max_upload_mb must be at least 1, not {server.max_upload_mb}")
    return server


def _roles(table: Mapping[str, Any], source: str, fold_unicode: bool = False) -> RolesConfig:
    _known(table, ("viewers", "evaluators", "admins", "viewers_may_comment"), "roles", source)
    viewers, evaluators, admins = (tuple(n if n == ANYONE else config_name(n, f"{source}: roles.{key}", fold_unicode)
                                         for n in _strings(table, key, default, "roles", source))
                                   for key, default in (("viewers", [ANYONE]), ("evaluators", []), ("admins", [])))
    return RolesConfig(viewers, evaluators, admins,
                       viewers_may_comment=_get(table, "viewers_may_comment", bool, False, "roles", source))


def _judge(item: Mapping[str, Any], i: int, source: str) -> ConfiguredJudge:
    where = f"judges[{i}]"
    _known(item, ("name", "kind", "base_url", "model", "api_key_env", "temperature", "max_workers"), where, source)
    for key in ("name", "model"):
        if not str(item.get(key) or "").strip():
            raise ConfigError(f"{source}: {where}.{key} is required")
    return ConfiguredJudge(
        name=_get(item, "name", str, "", where, source).strip(), model=_get(item, "model", str, "", where, source),
        base_url=_get(item, "base_url", str, "", where, source).strip(),
        api_key_env=_get(item, "api_key_env", str, "", where, source).strip(),
        kind=_get(item, "kind", str, "openai", where, source).strip(),
        temperature=float(_get(item, "temperature", (int, float), 0.0, where, source)),
        max_workers=_get(item, "max_workers", int, 4, where, source))


def _judge_defaults(table: Mapping[str, Any], source: str) -> JudgeDefaults:
    _known(table, ("max_tokens",), "judge", source)
    cap = _get(table, "max_tokens", int, 0, "judge", source)
    if not 0 <= cap <= MAX_JUDGE_TOKENS:
        raise ConfigError(f"{source}: judge.max_tokens must be 0 (each metric's own cap) to {MAX_JUDGE_TOKENS}, "
                          f"not {cap}")
    return JudgeDefaults(max_tokens=cap)


def _inputs(table: Mapping[str, Any], source: str) -> InputLimits:
    _known(table, ("max_rows", "max_mb"), "inputs", source)
    limits = InputLimits(max_rows=_get(table, "max_rows", int, DEFAULT_MAX_ROWS, "inputs", source),
                         max_mb=_get(table, "max_mb", int, DEFAULT_MAX_MB, "inputs", source))
    for key in ("max_rows", "max_mb"):
        if getattr(limits, key) < 1:
            raise ConfigError(f"{source}: inputs.{key} must be at least 1, not {getattr(limits, key)}")
    return limits


TEAM_QUEUED_PER_USER = 20  # [runs] max_queued_per_user when a team file does not say: one user cannot fill the queue


def _runs(table: Mapping[str, Any], source: str, per_user: int = 0) -> RunsConfig:
    _known(table, ("max_running_per_user", "max_queued", "max_queued_per_user", "lease_s", "workers", "engine",
                   "ray_address", "ray_workers"), "runs", source)
    runs = RunsConfig(
        max_running_per_user=_get(table, "max_running_per_user", int, 0, "runs", source),
        max_queued=_get(table, "max_queued", int, 0, "runs", source),
        max_queued_per_user=_get(table, "max_queued_per_user", int, per_user, "runs", source),
        lease_s=float(_get(table, "lease_s", (int, float), 30.0, "runs", source)),
        workers=_get(table, "workers", str, "local", "runs", source).strip(),
        engine=_get(table, "engine", str, "local", "runs", source).strip(),
        ray_address=_get(table, "ray_address", str, "", "runs", source).strip(),
        ray_workers=_get(table, "ray_workers", int, 2, "runs", source))
    for key in ("max_running_per_user", "max_queued", "max_queued_per_user"):
        if getattr(runs, key) < 0:
            raise ConfigError(f"{source}: runs.{key} must be 0 (no cap) or more, not {getattr(runs, key)}")
    if not 2.0 <= runs.lease_s <= 3600:
        raise ConfigError(f"{source}: runs.lease_s must be between 2 and 3600 seconds (a worker renews its lease "
                          f"every 0.5 s; a dead worker's runs wait this long), not {runs.lease_s:g}")
    for key, allowed in (("workers", WORKER_KINDS), ("engine", RUN_ENGINES)):
        if getattr(runs, key) not in allowed:
            raise ConfigError(f"{source}: runs.{key} must be one of {', '.join(map(repr, allowed))}, "
                              f"not {getattr(runs, key)!r}")
    _ray_keys(table, runs, source)
    return runs


def _ray_keys(table: Mapping[str, Any], runs: RunsConfig, source: str) -> None:
    """The Ray keys mean something only with engine = "ray": given with "local", they are a mistake."""
    if runs.ray_workers < 1:
        raise ConfigError(f"{source}: runs.ray_workers must be 1 or more (Ray workers scoring each run), "
                          f"not {runs.ray_workers}")
    given = [key for key in ("ray_address", "ray_workers") if key in table]
    if given and runs.engine != "ray":
        raise ConfigError(f"{source}: runs.{given[0]} is set but runs.engine is {runs.engine!r}: "
                          "set engine = \"ray\" to score runs on Ray, or remove it")


def _targets(table: Mapping[str, Any], shared: bool, source: str) -> TargetsConfig:
    from .targets.policy import check_prefix

    _known(table, ("allow", "allow_env"), "targets", source)
    allow = tuple(_strings(table, "allow", [], "targets", source))
    for prefix in allow:
        problem = check_prefix(prefix)
        if problem:
            raise ConfigError(f"{source}: targets.allow entry {prefix!r} {problem}")
    return TargetsConfig(allow=allow, allow_env=tuple(_strings(table, "allow_env", [], "targets", source)),
                         restricted=shared)


# -- reading TOML values, each mistake named by file and key ----------------------------------------
def _known(table: Mapping[str, Any], keys: Tuple[str, ...], where: str, source: str) -> None:
    """ConfigError naming the table and the first unknown key, with the closest known one (a typo's fix)."""
    unknown = sorted(set(table) - set(keys))
    if not unknown:
        return
    name = f"{where}.{unknown[0]}" if where else unknown[0]
    close = difflib.get_close_matches(unknown[0], keys, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    section = where.partition("[")[0]
    label = (f" of a [[{section}]] entry" if "[" in where else f" of [{where}]") if where else " (the tables)"
    raise ConfigError(f"{source}: unknown key {name!r}; {hint}the keys{label} are {', '.join(keys)}")


def _table(data: Mapping[str, Any], key: str, source: str) -> Dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: [{key}] must be a table")
    return value


def _list(data: Mapping[str, Any], key: str, source: str, kind: type) -> list:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, kind) for v in value):
        raise ConfigError(f"{source}: {key} must be a list of {'tables ([[' + key + ']])' if kind is dict else kind.__name__}")
    return value


def _strings(table: Mapping[str, Any], key: str, default: list, where: str, source: str) -> list:
    value = table.get(key, default)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: {where}.{key} must be a list of strings, e.g. [\"alice@example.com\"]")
    return [v.strip() for v in value]


def _get(table: Mapping[str, Any], key: str, kind: Any, default: Any, where: str, source: str) -> Any:
    value = table.get(key, default)
    # TOML's true is a bool, and bool is an int: a number where a bool is wanted (or the reverse) is a mistake.
    if not isinstance(value, kind) or (kind in (int, (int, float)) and isinstance(value, bool)):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise ConfigError(f"{source}: {where}.{key} must be {names}, not {value!r}")
    return value


HISTORY_SUFFIXES = (".sqlite3", ".sqlite", ".db")


def typed_history_path(text: str, *, home: Optional[Path] = None, cwd: Optional[Path] = None) -> Path:
    """A history file typed in the laptop dashboard, or ConfigError saying why it is refused.

    A typed string must not create files anywhere the server can write (a `.pth` name in
    site-packages once stopped Python from starting): the name must end in .sqlite3, .sqlite or
    .db, its folder must already exist, and it must lie under the home folder or the folder the
    dashboard was started in. Team mode has no such field: the history comes from the config.
    """
    raw = text.strip()
    if not raw:
        raise ConfigError("type the path of a history file, e.g. ~/.ragmeter/history.sqlite3")
    path = Path(raw).expanduser()
    if path.suffix.lower() not in HISTORY_SUFFIXES:
        raise ConfigError(f"a history file's name ends in {', '.join(HISTORY_SUFFIXES)}")
    roots = [p.resolve() for p in (home or Path.home(), cwd or Path.cwd())]
    resolved = (Path.cwd() / path).resolve() if not path.is_absolute() else path.resolve()
    if not any(resolved.parent == root or root in resolved.parents for root in roots):
        raise ConfigError("the history file must be under your home folder or the folder the dashboard runs in")
    if not resolved.parent.is_dir():
        raise ConfigError(f"the folder {resolved.parent} does not exist; create it first")
    return resolved
