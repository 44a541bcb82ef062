"""Every setting a ragmeter program uses, resolved one way, each with where it came from.

    flag  >  environment  >  the team file ($RAGMETER_CONFIG)  >  default

The CLI's commands, `ragmeter worker`, `ragmeter collect` and the pytest plugin ask here rather than
reading the environment or the file themselves, so each makes the same choice, and `ragmeter config`
prints it (cli/config_cmd.py). A Setting is a value with its origin: "flag --history", "environment
RAGMETER_HISTORY", "/etc/ragmeter/team.toml [server] history", "default". A secret never is a value
here: a key is "set (51 characters)" or "not set", and a history URL is shown without its password.

SPECS below registers each setting once: its flag, its variable, its team-file key, its help and default.
The origins `ragmeter config` prints and the docs' table (docs/gen_reference.py, in docs/team.md) read it.
`sections()` adds every other key of the team file, read once by config.current(); the environment is
read through evaluator/environment.py, the one module that reads the process environment.

The run history (store/) and the judge cache (judges/) sit layers below the team file and cannot ask
here: their no-argument defaults (a script's `RunStore()`) are this chain without the flag and the file
(tests/test_settings.py holds them equal), and every program passes the value resolved here.
"""
from __future__ import annotations

import getpass
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

from .. import config as team_file
from ..config import Config, ConfiguredJudge, RunsConfig
from ..judges.base import BASE_URL_ENV, DEFAULT_BASE_URL, environment_base_url, key_variable
from ..judges.cache import CACHE_ENV, DEFAULT_CACHE_NAME
from ..judges.registry import JUDGE_REGISTRY, OFFLINE, OPENAI
from ..store.db import is_postgres_url, shown_url
from ..store.history import DEFAULT_HISTORY_PATH, ENV_VAR as HISTORY_ENV, USER_ENV_VAR as USER_ENV
from ..environment import variables

FLAG, ENVIRONMENT, FILE, DEFAULT = "flag", "environment", "file", "default"  # a Setting's layer, strongest first
MAX_TOKENS_ENV = "RAGMETER_JUDGE_MAX_TOKENS"
MAX_ROWS_ENV, MAX_MB_ENV = "RAGMETER_MAX_ROWS", "RAGMETER_MAX_MB"


@dataclass(frozen=True)
class Spec:
    """A setting's registration: how each layer spells it, what it means and its default, in words.
    `ragmeter config` takes its origins from here and the docs their table (docs/gen_reference.py), so a
    flag, variable or team-file key is named once."""

    name: str
    help: str
    default: str
    flag: str = ""  # "--history"; "" = no flag
    env: str = ""  # "RAGMETER_HISTORY"; "" = no variable (a variable named by another setting is data, not this)
    section: str = ""  # the team file's table ("server"); "" = not in the file
    key: str = ""  # its key in that table

    @property
    def file_key(self) -> str:
        """'[server] history', as an origin and the docs say it ("" when the file has no such key)."""
        return f"[{self.section}] {self.key}" if self.section else ""


SPECS: Dict[str, Spec] = {}


def register(spec: Spec) -> Spec:
    """Add a setting to the registry (the order is `ragmeter config`'s and the docs')."""
    SPECS[spec.name] = spec
    return spec


for _spec in (
    Spec("config", "the team file", "none: a laptop, one user, every feature open", "--config", team_file.ENV_VAR),
    Spec("team", "team mode: sign-in, roles, configured judges", "off", section="server", key="shared"),
    Spec("history", "the run history: a SQLite path or a postgresql:// URL (shown without its password)",
         "~/.ragmeter/history.sqlite3", "--history", HISTORY_ENV, "server", "history"),
    Spec("judge_cache", "the judge cache file (--no-cache: none)", "~/.ragmeter/judge-cache.sqlite3", "--cache",
         CACHE_ENV),
    Spec("user", "who a run started here belongs to", "the login name", env=USER_ENV),
    Spec("project", "the project a run is listed under", "the dataset's file name", "--project"),
    Spec("judge", "the judge kind, or a [[judges]] name of the team file", "offline", "--judge"),
    Spec("judge.model", "the judge's model", "none: give --model", "--model"),
    Spec("judge.base_url", "an OpenAI-compatible judge's endpoint", "OpenAI's own", "--base-url", BASE_URL_ENV),
    Spec("judge.api_key_env", "the variable the judge's key is read from",
         "OPENAI_API_KEY for OpenAI's or $OPENAI_BASE_URL's address, else none", "--api-key-env"),
    Spec("judge.api_key", "whether that variable is set (never the key)", "not set"),
    Spec("judge.max_tokens", "every judge call's completion cap", "0: each metric's own cap", "--judge-max-tokens",
         MAX_TOKENS_ENV, "judge", "max_tokens"),
    Spec("inputs.max_rows", "the most rows a dataset the command line reads may hold", f"{team_file.DEFAULT_MAX_ROWS:,}",
         "--max-rows", MAX_ROWS_ENV, "inputs", "max_rows"),
    Spec("inputs.max_mb", "the most MB a dataset file may take, and unpack to", f"{team_file.DEFAULT_MAX_MB:,}",
         "--max-mb", MAX_MB_ENV, "inputs", "max_mb"),
    Spec("runs.workers", "who runs runs: \"local\" (each process) or \"external\" (ragmeter worker)", "local",
         section="runs", key="workers"),
    Spec("runs.engine", "where runs are scored: \"local\" or \"ray\"", "local", "--engine", section="runs",
         key="engine"),
    Spec("runs.ray_address", "engine ray: the cluster to join", "none: a local cluster", "--ray-address",
         section="runs", key="ray_address"),
    Spec("runs.ray_workers", "engine ray: Ray workers scoring each run", "2", "--ray-workers", section="runs",
         key="ray_workers"),
    Spec("runs.max_running_per_user", "one user's runs running at once", "0: no cap", section="runs",
         key="max_running_per_user"),
    Spec("runs.max_queued", "runs queued at once", "0: no cap", section="runs", key="max_queued"),
    Spec("runs.max_queued_per_user", "one user's runs queued or running (admins exempt)",
         "20 in team mode, else 0: no cap", section="runs", key="max_queued_per_user"),
    Spec("runs.lease_s", "seconds a dead worker's runs wait before another takes them", "30", section="runs",
         key="lease_s"),
):
    register(_spec)


@dataclass(frozen=True)
class Setting:
    """One resolved setting: its value, the layer that gave it and, in words, where (`origin`).

    `masked` is what is shown instead of the value: a key's "set (51 characters)", a URL without its
    password. A key's value is only whether it is set; the key itself is never read into a Setting."""

    name: str
    value: Any
    origin: str
    layer: str = DEFAULT
    masked: Optional[str] = None

    @property
    def shown(self) -> Any:
        """The value as it may be printed or stored."""
        return self.value if self.masked is None else self.masked

    def to_dict(self) -> Dict[str, Any]:
        return {"name": self.name, "value": self.shown, "origin": self.origin, "layer": self.layer}


@dataclass(frozen=True)
class Flags:
    """What a command line gave; None (or False) where it gave nothing, so a default is never taken for a flag."""

    config: Optional[str] = None
    history: Optional[str] = None
    cache: Optional[str] = None
    no_cache: bool = False
    project: Optional[str] = None
    judge: Optional[str] = None
    offline: bool = False
    model: Optional[str] = None
    base_url: Optional[str] = None
    api_key_env: Optional[str] = None
    engine: Optional[str] = None
    ray_address: Optional[str] = None
    ray_workers: Optional[int] = None
    judge_max_tokens: Optional[int] = None
    max_rows: Optional[int] = None
    max_mb: Optional[int] = None

    @classmethod
    def of(cls, args: Any) -> "Flags":
        """The flags an argparse namespace holds (those it lacks are not given). Its parser's defaults must
        be None, or a default would read as given: `ragmeter config`'s are."""
        given: Dict[str, Any] = {f.name: getattr(args, f.name, f.default) for f in fields(cls)}
        return cls(**given)


@dataclass(frozen=True)
class Settings:
    """Every resolved setting, in the order `ragmeter config` prints them, and the team file they read."""

    items: Tuple[Setting, ...]
    team: Config = field(default_factory=Config)

    def __getitem__(self, name: str) -> Setting:
        for item in self.items:
            if item.name == name:
                return item
        raise KeyError(name)

    def __iter__(self) -> Iterator[Setting]:
        return iter(self.items)

    def to_dict(self) -> Dict[str, Dict[str, Any]]:
        """Name -> {value, origin, layer}, secrets masked (`ragmeter config --json`)."""
        return {s.name: {k: v for k, v in s.to_dict().items() if k != "name"} for s in self.items}


def resolve(flags: Flags = Flags(), environ: Optional[Mapping[str, str]] = None) -> Settings:
    """Every setting for this command line, this environment and the team file they name.

    ConfigError (naming the file and key) when the team file cannot be read or is wrong."""
    env = variables() if environ is None else environ
    where = config_file(flags.config, env)
    team = read_team_file(where)
    return Settings((where, _team_mode(team), history(flags.history, env, team), judge_cache(flags, env), user(env),
                     project(flags.project), *judge(flags, env, team), judge_max_tokens(flags, env, team),
                     *input_limits(flags, env, team), *runs(flags, team), *sections(team, env)), team)


# -- one setting at a time (what the other modules ask) --------------------------------------------
def config_file(flag: Optional[str] = None, environ: Optional[Mapping[str, str]] = None) -> Setting:
    """The team file: --config (ragmeter config), else $RAGMETER_CONFIG, else none (a laptop: nothing changes)."""
    env = variables() if environ is None else environ
    return _first("config", [_layer("config", FLAG, flag), _layer("config", ENVIRONMENT, env.get(team_file.ENV_VAR))],
                  None, "default (no team file: one user, every feature open)")


def read_team_file(where: Setting) -> Config:
    """The team file `where` names, read again only when it changed (config.LAPTOP when none)."""
    return team_file.LAPTOP if where.value is None else team_file.current(str(where.value))


def history(flag: Optional[str] = None, environ: Optional[Mapping[str, str]] = None,
            team: Optional[Config] = None) -> Setting:
    """The run history: --history, else $RAGMETER_HISTORY, else the team file's [server] history, else
    ~/.ragmeter/history.sqlite3. Its value is the location as given (a URL keeps its password: the store
    needs it); `shown` drops the password."""
    env = variables() if environ is None else environ
    if team is None and not (_given(flag) or _given(env.get(HISTORY_ENV))):
        team = read_team_file(config_file(None, env))
    server = (team or team_file.LAPTOP).server
    found = _first("history", [_layer("history", FLAG, flag), _layer("history", ENVIRONMENT, env.get(HISTORY_ENV)),
                               _layer("history", FILE, server.history, team)],
                   str(DEFAULT_HISTORY_PATH), "default")
    location = str(found.value)
    if is_postgres_url(location) and shown_url(location) != location.strip():
        return Setting(found.name, location, found.origin, found.layer, masked=shown_url(location))
    return found


def history_location(flag: Optional[str] = None) -> str:
    """Where this program's run history is (what RunStore opens): `history(flag)`'s value."""
    return str(history(flag).value)


def judge_cache(flags: Flags = Flags(), environ: Optional[Mapping[str, str]] = None) -> Setting:
    """The judge cache file: --no-cache (none), else --cache, else $RAGMETER_JUDGE_CACHE, else
    ~/.ragmeter/judge-cache.sqlite3 (the home folder when asked, as judges.cache.default_cache_path has it)."""
    env = variables() if environ is None else environ
    if flags.no_cache:
        return Setting("judge_cache", None, "flag --no-cache", FLAG)
    found = _first("judge_cache", [_layer("judge_cache", FLAG, flags.cache),
                                   _layer("judge_cache", ENVIRONMENT, env.get(CACHE_ENV))],
                   str(Path.home() / DEFAULT_CACHE_NAME), "default")
    return Setting(found.name, str(Path(str(found.value)).expanduser()), found.origin, found.layer)


def user(environ: Optional[Mapping[str, str]] = None) -> Setting:
    """Who a run started here belongs to: $RAGMETER_USER, else the login name. (A team dashboard's runs
    belong to the signed-in user instead: team/identity.py.)"""
    env = variables() if environ is None else environ
    if _given(env.get(USER_ENV)):
        return _first("user", [_layer("user", ENVIRONMENT, env[USER_ENV])], None, "")
    try:
        return Setting("user", getpass.getuser(), "default (the login name)")
    except (KeyError, OSError):  # no such user in the password database (some containers)
        return Setting("user", "unknown", "default (no login name)")


def project(flag: Optional[str] = None) -> Setting:
    """The project a run is listed under: --project, else the dataset's file name (known once it is read)."""
    return _first("project", [_layer("project", FLAG, flag)], None, "default (the dataset's file name)")


def judge(flags: Flags = Flags(), environ: Optional[Mapping[str, str]] = None,
          team: Optional[Config] = None) -> Tuple[Setting, ...]:
    """The judge and, when it calls a model, its model, base URL, the variable its key is read from, and
    whether that key is set. `--judge NAME` naming a [[judges]] entry of the team file takes the entry's
    model, base URL and key variable (as `ragmeter collect --judge NAME` and a team dashboard do)."""
    env = variables() if environ is None else environ
    team = read_team_file(config_file(flags.config, env)) if team is None else team
    entry = next((j for j in team.judges if j.name == flags.judge), None) if flags.judge else None
    kind = _judge_kind(flags, entry, team)
    if kind.value == OFFLINE:
        unused = "not used (the offline judge calls no model)"
        return (kind, *(Setting(f"judge.{n}", None, unused) for n in ("model", "base_url", "api_key_env", "api_key")))
    model = _first("judge.model", [_layer("judge.model", FLAG, flags.model),
                                   (entry.model if entry else None, FILE, _entry(team, entry, "model"))],
                   None, "default (none: give --model)")
    base_url = _base_url(str(kind.value), flags, entry, team, env)
    variable = _key_variable(str(kind.value), str(base_url.value or ""), flags, entry, team, env)
    return kind, model, base_url, variable, _key(variable, env)


def judge_max_tokens(flags: Flags = Flags(), environ: Optional[Mapping[str, str]] = None,
                     team: Optional[Config] = None) -> Setting:
    """Every judge call's completion cap: --judge-max-tokens, else $RAGMETER_JUDGE_MAX_TOKENS, else the team
    file's [judge] max_tokens, else 0: each metric's own cap, sized for its reply (metrics/*.py)."""
    env = variables() if environ is None else environ
    team = read_team_file(config_file(flags.config, env)) if team is None else team
    raw = (env.get(MAX_TOKENS_ENV) or "").strip()
    if raw and not raw.isdigit():
        raise team_file.ConfigError(f"environment {MAX_TOKENS_ENV}={raw!r}: give a whole number of tokens "
                                    "(0 = each metric's own cap)")
    in_file = team.judge_defaults.max_tokens if "judge.max_tokens" in team.given else None
    found = _first("judge.max_tokens", [_layer("judge.max_tokens", FLAG, flags.judge_max_tokens),
                                        _layer("judge.max_tokens", ENVIRONMENT, int(raw) if raw else None),
                                        _layer("judge.max_tokens", FILE, in_file, team)],
                   0, "default (each metric's own cap: answer_relevancy 128, the verdict lists 500-560)")
    return found


def input_limits(flags: Flags = Flags(), environ: Optional[Mapping[str, str]] = None,
                 team: Optional[Config] = None) -> Tuple[Setting, Setting]:
    """The most rows and MB a dataset read by the command line may hold: --max-rows/--max-mb, else
    $RAGMETER_MAX_ROWS/$RAGMETER_MAX_MB, else the team file's [inputs], else 100,000 rows and 1,000 MB."""
    env = variables() if environ is None else environ
    team = read_team_file(config_file(flags.config, env)) if team is None else team
    return tuple(_limit(f"inputs.{key}", variable, getattr(flags, key), env, team)  # type: ignore[return-value]
                 for key, variable in (("max_rows", MAX_ROWS_ENV), ("max_mb", MAX_MB_ENV)))


def _limit(name: str, variable: str, flag: Optional[int], env: Mapping[str, str], team: Config) -> Setting:
    raw = (env.get(variable) or "").strip()
    if raw and not (raw.isdigit() and int(raw) > 0):
        raise team_file.ConfigError(f"environment {variable}={raw!r}: give a whole number of at least 1")
    key = name.partition(".")[2]
    in_file = getattr(team.inputs, key) if name in team.given else None
    return _first(name, [_layer(name, FLAG, flag), _layer(name, ENVIRONMENT, int(raw) if raw else None),
                         _layer(name, FILE, in_file, team)], getattr(team_file.InputLimits(), key), "default")


def runs(flags: Flags = Flags(), team: Optional[Config] = None) -> Tuple[Setting, ...]:
    """How runs wait and where they are scored ([runs]); --engine, --ray-address and --ray-workers win for
    `ragmeter worker`."""
    team = read_team_file(config_file()) if team is None else team
    given = {"engine": flags.engine, "ray_address": flags.ray_address, "ray_workers": flags.ray_workers}
    found = []
    for key in ("workers", "engine", "ray_address", "ray_workers", "max_running_per_user", "max_queued",
                "max_queued_per_user", "lease_s"):
        value = getattr(team.runs, key)
        in_file = f"runs.{key}" in team.given
        default = value if key == "max_queued_per_user" else getattr(RunsConfig(), key)  # 20 in team mode, else 0
        found.append(_first(f"runs.{key}", [_layer(f"runs.{key}", FLAG, given.get(key)),
                                            _layer(f"runs.{key}", FILE, value if in_file else None, team)],
                            default, "default"))
    return tuple(found)


def run_setting(key: str, flags: Flags = Flags()) -> Setting:
    """One of `runs()`, by its key in [runs] ("engine", "ray_workers", ...)."""
    return next(s for s in runs(flags) if s.name == f"runs.{key}")


# -- the rest of the team file: what `ragmeter config` shows beside the settings above ----------------
# Tables read once (config.py) and shown key by key; [server] shared and history are `team` and `history`,
# [runs] and [judge] are settings above, RunsConfig.exempt and TargetsConfig.restricted are derived.
TABLES = (("server", "server", ("shared", "history")), ("roles", "roles", ()), ("targets", "targets", ("restricted",)))
# A key naming the variable that holds a secret: its name is shown, and whether the variable is set (never its value).
SECRET_VARIABLES = {"proxy_secret_env": "proxy_secret", "api_key_env": "api_key", "token_env": "token",
                    "webhook_env": "webhook"}


def sections(team: Config, environ: Optional[Mapping[str, str]] = None) -> Tuple[Setting, ...]:
    """Every other key of the team file, [server], [roles], [targets], each [[judges]] and [[collect]] entry,
    with its origin; a key naming a secret's variable also says whether that variable is set here."""
    env = variables() if environ is None else environ
    found: List[Setting] = []
    for section, attribute, skip in TABLES:
        table = getattr(team, attribute)
        for f in fields(table):
            if f.name not in skip:
                found += _file_key(team, f"{section}.{f.name}", f"[{section}] {f.name}", getattr(table, f.name), env)
    lists: Tuple[Tuple[str, Tuple[Any, ...], str], ...] = (("judges", team.judges, "name"),
                                                           ("collect", team.collect, "project"))
    for kind, entries, label in lists:
        for i, entry in enumerate(entries):
            name = getattr(entry, label)
            for f in fields(entry):
                found += _file_key(team, f"{kind}[{name}].{f.name}", f"[[{kind}]] {name}.{f.name}",
                                   getattr(entry, f.name), env, given=f"{kind}[{i}].{f.name}")
    return tuple(found)


def _file_key(team: Config, name: str, key: str, value: Any, env: Mapping[str, str],
              given: str = "") -> List[Setting]:
    """The Setting of one team-file key (and, for a secret's variable, whether it is set)."""
    if (given or name) in team.given:
        found = [Setting(name, value, _in_file(team, key), FILE)]
    else:
        found = [Setting(name, value, "default")]
    short = name.rpartition(".")[2]
    if short in SECRET_VARIABLES:
        variable = Setting(name, value or None, "")
        found.append(_secret(f"{name.rpartition('.')[0]}.{SECRET_VARIABLES[short]}", variable, env))
    return found


# -- helpers ----------------------------------------------------------------------------------------
def _given(value: Any) -> bool:
    return value is not None and (not isinstance(value, str) or bool(value.strip()))


def _first(name: str, layers: List[Tuple[Any, str, str]], default: Any, default_origin: str) -> Setting:
    """The first given (value, layer, origin) of `layers`, strongest first; else the default."""
    for value, layer, origin in layers:
        if _given(value):
            return Setting(name, value.strip() if isinstance(value, str) else value, origin, layer)
    return Setting(name, default, default_origin, DEFAULT)


def _layer(name: str, layer: str, value: Any, team: Optional[Config] = None) -> Tuple[Any, str, str]:
    """(value, layer, origin) of the setting `name` at `layer`, its origin spelled as the registry names it."""
    spec = SPECS[name]
    origin = {FLAG: f"flag {spec.flag}", ENVIRONMENT: f"environment {spec.env}"}.get(layer)
    return value, layer, origin or _in_file(team, spec.file_key)


def _in_file(team: Optional[Config], key: str) -> str:
    return f"{(team.source if team is not None else '') or 'the team file'} {key}"


def _entry(team: Config, entry: Optional[ConfiguredJudge], key: str) -> str:
    return _in_file(team, f"[[judges]] {entry.name if entry else ''}.{key}")


def _team_mode(team: Config) -> Setting:
    """Team mode (a shared dashboard: sign-in, roles, configured judges): the file's [server] shared."""
    if "server.shared" in team.given:
        return Setting("team", team.team, _in_file(team, SPECS["team"].file_key), FILE)
    return Setting("team", False, "default (no team file)" if not team.source else "default")


def _judge_kind(flags: Flags, entry: Optional[ConfiguredJudge], team: Config) -> Setting:
    if flags.offline:
        return Setting("judge", OFFLINE, "flag --offline", FLAG)
    if entry is not None:
        return Setting("judge", entry.kind, _entry(team, entry, "kind") + " (named by flag --judge)", FILE)
    return _first("judge", [_layer("judge", FLAG, flags.judge),
                            (OPENAI if _given(flags.model) else None, FLAG, "flag --model (an OpenAI-compatible judge)")],
                  OFFLINE, "default (no --model or --judge)")


def _base_url(kind: str, flags: Flags, entry: Optional[ConfiguredJudge], team: Config,
              env: Mapping[str, str]) -> Setting:
    """--base-url, else the [[judges]] entry's, else (OpenAI-compatible judges) $OPENAI_BASE_URL, else OpenAI's."""
    layers = [_layer("judge.base_url", FLAG, flags.base_url),
              (entry.base_url if entry else None, FILE, _entry(team, entry, "base_url"))]
    if kind != OPENAI:
        return _first("judge.base_url", layers, None, f"default (the {kind} judge's own)")
    layers.append(_layer("judge.base_url", ENVIRONMENT, env.get(BASE_URL_ENV)))
    found = _first("judge.base_url", layers, DEFAULT_BASE_URL, "default (OpenAI's own)")
    return Setting(found.name, str(found.value).rstrip("/"), found.origin, found.layer)


def _key_variable(kind: str, base_url: str, flags: Flags, entry: Optional[ConfiguredJudge], team: Config,
                  env: Mapping[str, str]) -> Setting:
    """Which variable the judge's key is read from: --api-key-env, else the entry's api_key_env, else the
    judge's own (OpenAI-compatible: OPENAI_API_KEY for OpenAI's or $OPENAI_BASE_URL's address only)."""
    found = _first("judge.api_key_env", [_layer("judge.api_key_env", FLAG, flags.api_key_env),
                                         (entry.api_key_env if entry else None, FILE, _entry(team, entry, "api_key_env"))],
                   None, "")
    if found.layer != DEFAULT:
        return found
    if kind == OPENAI:
        variable = key_variable(base_url, "", env)
        if variable:
            return Setting(found.name, variable, "default (the base URL is OpenAI's or $OPENAI_BASE_URL's)")
        return Setting(found.name, None, "default (none: a base URL given here never receives the server's key; "
                                         "name a variable with --api-key-env)")
    registered = JUDGE_REGISTRY.get(kind)
    variable = registered.key_env if registered is not None else ""
    return Setting(found.name, variable or None, f"default (the {kind} judge's own)" if variable
                   else f"default (the {kind} judge reads no variable)")


def _key(variable: Setting, env: Mapping[str, str]) -> Setting:
    return _secret("judge.api_key", variable, env)


def _secret(name: str, variable: Setting, env: Mapping[str, str]) -> Setting:
    """Whether the secret in the variable `variable` names is set, and how long it is: never the secret."""
    if not variable.value:
        return Setting(name, False, "no variable", masked="not set")
    where = str(variable.value)
    length = len(env.get(where, "") or "")
    shown = f"set ({length} characters)" if length else "not set"
    return Setting(name, bool(length), f"environment {where}", ENVIRONMENT if length else DEFAULT, masked=shown)
