"""A shared server's trust as the views need it: the configuration, who a session's user is, what they may
do, whether the server may start at all. The decisions are evaluator.team's; the views feed in what the web
server knows about a session (its handshake's headers and peer, an OIDC sign-in's claims)."""
from __future__ import annotations

from typing import Any, Iterable, List, Mapping, Optional, Tuple

from ..collect.beside import SUPERVISED_ENV
from ..config import ENV_VAR as CONFIG_ENV
from ..config import LOOPBACK_HOSTS, Config, current, listen_address
from ..runs.child import PACKAGE_ROOT, python_path
from ..runs.supervisor import Program, Supervisor
from ..store.db import is_postgres_url
from ..store.history import ENV_VAR as HISTORY_ENV
from ..team import settings, startup
from ..team.access import LAPTOP_ACCESS, Access
from ..team.identity import Decision
from ..team.startup import ServerOptions, problems


def server_config() -> Config:
    """The server's configuration ($RAGMETER_CONFIG; a laptop's defaults without one); ConfigError when broken."""
    return current()


def access_of(config: Config, user: Optional[str]) -> Access:
    """What `user` may do: everything on a laptop; in team mode what their roles and ownership allow."""
    return Access.of(config, user) if config.team else LAPTOP_ACCESS


def startup_problems(config: Config, options: ServerOptions) -> List[str]:
    """Why a team server must not serve anyone (reachable by anyone, upload limit, sign-in parts); [] when fine."""
    return startup.problems(config, options)


def identify(config: Config, options: ServerOptions, headers: Iterable[Tuple[str, str]], peer: Optional[str],
             claims: Mapping[str, Any]) -> Decision:
    """Who a session's user is, from its handshake's headers and peer (a trusted proxy) or OIDC claims."""
    return startup.request_identity(config, options, headers, peer, claims)


# What `ragmeter serve` and `ragmeter dashboard` start a deployment with: the settings resolver, the checks a
# team server must pass, and the supervisor that keeps the dashboard, workers and receivers running.
__all__ = [
    "CONFIG_ENV", "Config", "HISTORY_ENV", "LOOPBACK_HOSTS", "PACKAGE_ROOT", "Program", "SUPERVISED_ENV",
    "ServerOptions", "Supervisor", "access_of", "identify", "is_postgres_url", "listen_address", "problems",
    "python_path", "server_config", "settings", "startup_problems",
]
