"""What a team-mode server must have before it serves anyone (README "Team mode").

The dashboard reads Streamlit's options and secrets, hands them here as plain data, and shows the
problems found instead of any page: a team server that cannot tell who its users are, or whose
upload limit is not the operator's, does not start.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, List, Mapping, Optional, Tuple

from ..config import Config
from .identity import (Decision, NamePolicy, ProxyTrust, is_loopback_bind, oidc_identity, parse_networks,
                       proxy_identity)
from ..environment import variables


@dataclass(frozen=True)
class ServerOptions:
    """The running Streamlit server, as far as team mode cares."""

    address: str = ""  # server.address ("" = every interface)
    max_upload_mb: int = 200  # server.maxUploadSize
    authlib: bool = False  # is Authlib importable (st.login needs it)
    auth_secrets: bool = False  # does secrets.toml hold an [auth] section


def problems(config: Config, options: ServerOptions, environ: Optional[Mapping[str, str]] = None) -> List[str]:
    """Why this team server must not start (empty: it may). A laptop never has any."""
    if not config.team:
        return []
    env = variables() if environ is None else environ
    server, found = config.server, []
    if options.max_upload_mb != server.max_upload_mb:
        found.append(f"Streamlit accepts uploads of {options.max_upload_mb} MB but [server] max_upload_mb is "
                     f"{server.max_upload_mb}: start it with --server.maxUploadSize {server.max_upload_mb}")
    if server.auth == "proxy":
        found.extend(_proxy_problems(config, options, env))
    if server.auth == "oidc":
        if not options.authlib:
            found.append("auth = \"oidc\" needs Authlib: pip install 'ragmeter[oidc]'")
        if not options.auth_secrets:
            found.append("auth = \"oidc\" needs an [auth] section (redirect_uri, cookie_secret, client_id, "
                         "client_secret, server_metadata_url) in .streamlit/secrets.toml")
    return found


def _proxy_problems(config: Config, options: ServerOptions, env: Mapping[str, str]) -> List[str]:
    server = config.server
    if server.proxy_secret_env and not env.get(server.proxy_secret_env, ""):
        return [f"[server] proxy_secret_env names {server.proxy_secret_env}, which is not set: set it to the "
                "secret your proxy sends"]
    if server.proxy_secret_env and not server.proxy_secret_header:
        return ["[server] proxy_secret_header is empty: name the header your proxy sends the secret in"]
    if server.trusted_proxies or server.proxy_secret_env or is_loopback_bind(options.address):
        return []
    where = options.address or "every network interface"
    return [f"the server listens on {where}, where anyone could send the {server.user_header} header: start "
            "it with --server.address 127.0.0.1 behind your proxy, or set [server] trusted_proxies to the "
            "proxy's addresses, or proxy_secret_env to a secret the proxy sends"]


def proxy_trust(config: Config, options: ServerOptions, environ: Optional[Mapping[str, str]] = None) -> ProxyTrust:
    """When the proxy's header counts on this server (evaluator.identity.proxy_identity)."""
    env = variables() if environ is None else environ
    server = config.server
    return ProxyTrust(header=server.user_header,
                      trusted=parse_networks(server.trusted_proxies, config.source or "the configuration"),
                      secret_header=server.proxy_secret_header,
                      secret=env.get(server.proxy_secret_env, "") if server.proxy_secret_env else "",
                      loopback_only=is_loopback_bind(options.address))


def request_identity(config: Config, options: ServerOptions, headers: Iterable[Tuple[str, str]],
                     peer: Optional[str], claims: Mapping[str, Any],
                     environ: Optional[Mapping[str, str]] = None) -> Decision:
    """Who a team-mode session is: its handshake's `headers` (every copy) and `peer` address with
    `auth = "proxy"`, or its OIDC `claims` (st.user) with `auth = "oidc"`."""
    policy = name_policy(config)
    if config.server.auth == "oidc":
        if not claims.get("is_logged_in"):
            return Decision()
        return oidc_identity(claims, config.server.identity_claim, policy)
    trust = proxy_trust(config, options, environ)
    pairs = list(headers)
    return proxy_identity(trust, peer, _values(pairs, trust.header),
                          _values(pairs, trust.secret_header) if trust.secret else (), policy)


def name_policy(config: Config) -> NamePolicy:
    """A sign-in's name is checked against every name the [roles] hold (no look-alike of one passes)."""
    roles = config.roles
    known = tuple(dict.fromkeys(n for n in (*roles.admins, *roles.evaluators, *roles.viewers) if n != "*"))
    return NamePolicy(known=known, fold_unicode=config.server.fold_unicode_names)


def _values(headers: List[Tuple[str, str]], name: str) -> List[str]:
    return [value for key, value in headers if key.lower() == name.lower()]
