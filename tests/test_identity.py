"""identity: a team-mode user is who a trusted proxy (or a verified OIDC claim) says, spelled one way,
with no look-alikes; startup: a team server that could be told anything by anyone does not start."""
import ipaddress
import tomllib

import pytest

from evaluator import config
from evaluator.team import startup
from teamfiles import team_toml
from evaluator.errors import ConfigError
from evaluator.team.identity import (Decision, IdentityRefused, ProxyTrust, from_header, is_loopback_bind, normalise,
                                oidc_identity, proxy_identity)

HEADER = "X-Forwarded-Email"
PROXY_NET = (ipaddress.ip_network("10.0.0.0/24"),)


@pytest.mark.parametrize("raw, expected", [
    ("alice@example.com", "alice@example.com"),
    ("ALICE@Example.COM", "alice@example.com"),
    ("  alice@example.com ", "alice@example.com"),
    ("ａｌｉｃｅ@example.com", None),  # full-width letters: NFKC would make them someone else's (issue 42)
    ("Straße@example.de", None),  # casefold would change it: refused unless [server] fold_unicode_names
    ("سارة@example.com", None),  # Arabic and Latin letters in one name: refused
    ("مستخدم@مثال.شبكة", "مستخدم@مثال.شبكة"),  # one script throughout: fine
    ("аlice@example.com", None),  # a Cyrillic "а" among Latin letters
    ("alice\u200b@example.com", None),  # zero-width space
    ("ali\u202ece@example.com", None),  # right-to-left override
    ("alice @example.com", None),
    ("", None),
])
def test_one_spelling_per_person_and_no_look_alikes(raw, expected):
    if expected is None:
        with pytest.raises(IdentityRefused):
            normalise(raw)
    else:
        assert normalise(raw) == expected


@pytest.mark.parametrize("raw, expected", [
    ("ａｌｉｃｅ@example.com", "alice@example.com"),  # full-width letters: NFKC makes them ASCII
    ("Straße@example.de", "strasse@example.de"),  # casefold, not lower
])
def test_an_operator_who_allows_folding_gets_one_spelling(raw, expected):
    from evaluator.team.identity import NamePolicy

    assert normalise(raw, NamePolicy(fold_unicode=True)) == expected


def test_header_bytes_handed_over_as_latin_1_are_read_as_utf_8():
    sent = "josé@example.com".encode("utf-8").decode("latin-1")  # what Tornado gives for UTF-8 bytes
    assert sent != "josé@example.com" and from_header(sent) == "josé@example.com"
    assert normalise(from_header(sent)) == "josé@example.com"


@pytest.mark.parametrize("peer, trusted, loopback_only, user", [
    ("10.0.0.7", PROXY_NET, False, "alice@example.com"),  # the proxy
    ("10.0.1.7", PROXY_NET, False, None),  # someone else on the network
    ("127.0.0.1", PROXY_NET, False, None),  # trusted_proxies set: loopback is not a proxy by itself
    ("::ffff:10.0.0.7", PROXY_NET, False, "alice@example.com"),  # IPv4-mapped IPv6 peer
    ("127.0.0.1", (), True, "alice@example.com"),  # loopback-only server: a local proxy
    ("192.168.1.4", (), True, "alice@example.com"),  # ...whose X-Forwarded-For uvicorn shows as the peer
    ("127.0.0.1", (), False, None),  # every interface, nothing trusted: never
    (None, PROXY_NET, False, None),  # no peer known
])
def test_the_header_counts_only_from_a_trusted_peer(peer, trusted, loopback_only, user):
    trust = ProxyTrust(HEADER, trusted=trusted, loopback_only=loopback_only)
    assert proxy_identity(trust, peer, ["Alice@example.com"]).user == user


def test_a_header_sent_twice_is_no_identity():
    trust = ProxyTrust(HEADER, trusted=PROXY_NET)
    got = proxy_identity(trust, "10.0.0.7", ["mallory@example.com", "alice@example.com"])
    assert got.user is None and "more than once" in got.problem
    assert proxy_identity(trust, "10.0.0.7", []) == Decision()


def test_a_shared_secret_replaces_the_peer_check():
    trust = ProxyTrust(HEADER, secret_header="X-Proxy-Secret", secret="s3cret")
    assert proxy_identity(trust, "203.0.113.9", ["alice@example.com"], ["s3cret"]).user == "alice@example.com"
    for sent in ([], ["wrong"], ["s3cret", "s3cret"]):
        assert proxy_identity(trust, "10.0.0.7", ["alice@example.com"], sent).user is None


def test_a_look_alike_from_the_proxy_is_refused_with_a_reason():
    trust = ProxyTrust(HEADER, trusted=PROXY_NET)
    got = proxy_identity(trust, "10.0.0.7", ["аdmin@example.com"])
    assert got.user is None and "several scripts" in got.problem


@pytest.mark.parametrize("claims, claim, user", [
    ({"email": "Alice@example.com", "email_verified": True}, "", "alice@example.com"),
    ({"email": "alice@example.com", "email_verified": False}, "", None),
    ({"email": "alice@example.com"}, "", None),  # not said to be verified
    ({"name": "alice@example.com", "email_verified": True}, "", None),  # never the display name
    ({"preferred_username": "Alice", "email": "x@y.z"}, "preferred_username", "alice"),
    ({"email": "x@y.z"}, "upn", None),
])
def test_oidc_takes_only_a_verified_email_or_the_named_claim(claims, claim, user):
    got = oidc_identity(claims, claim)
    assert got.user == user and (user is not None or got.problem)


@pytest.mark.parametrize("address, loopback", [
    ("127.0.0.1", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("", False), ("0.0.0.0", False), ("10.0.0.2", False), ("::", False)])
def test_what_counts_as_listening_on_loopback_only(address, loopback):
    assert is_loopback_bind(address) is loopback


def team(auth="proxy", **server):
    """The team config of these tests: `auth`, a 50 MB upload limit, one evaluator; `server`: more [server] keys."""
    text = team_toml(auth=auth, max_upload_mb=50, evaluators=["Alice@Example.com"], **server)
    return config.from_dict(tomllib.loads(text), "team.toml")


def test_roles_in_the_file_match_however_the_proxy_spells_the_user():
    cfg = team()
    assert cfg.roles.role_of(normalise("ALICE@example.COM")) == "evaluator"


def test_a_look_alike_or_a_bad_cidr_in_the_file_is_named():
    with pytest.raises(ConfigError, match="roles.evaluators.*several scripts"):
        config.from_dict({"roles": {"evaluators": ["аlice@example.com"]}}, "team.toml")
    with pytest.raises(ConfigError, match="trusted_proxies entry 'proxy.internal'"):
        team(trusted_proxies=["proxy.internal"])


@pytest.mark.parametrize("extra, address, env, problem", [
    ({}, "127.0.0.1", {}, None),
    ({}, "", {}, "listens on every network interface"),
    ({}, "0.0.0.0", {}, "--server.address 127.0.0.1"),
    ({"trusted_proxies": ["10.0.0.0/24"]}, "0.0.0.0", {}, None),
    ({"proxy_secret_env": "PROXY_SECRET"}, "0.0.0.0", {"PROXY_SECRET": "x"}, None),
    ({"proxy_secret_env": "PROXY_SECRET"}, "0.0.0.0", {}, "PROXY_SECRET, which is not set"),
])
def test_a_proxy_team_server_reachable_by_anyone_does_not_start(extra, address, env, problem):
    found = startup.problems(team(**extra), startup.ServerOptions(address=address, max_upload_mb=50), env)
    assert (problem is None and found == []) or (problem is not None and problem in " ".join(found))


def test_the_upload_limit_must_be_the_operators():
    found = startup.problems(team(), startup.ServerOptions(address="127.0.0.1", max_upload_mb=200), {})
    assert found and "--server.maxUploadSize 50" in found[0]
    assert startup.problems(config.LAPTOP, startup.ServerOptions(max_upload_mb=200), {}) == []


def test_oidc_needs_authlib_and_an_auth_section():
    found = " ".join(startup.problems(team("oidc"), startup.ServerOptions(max_upload_mb=50), {}))
    assert "ragmeter[oidc]" in found and "[auth] section" in found
    ready = startup.ServerOptions(max_upload_mb=50, authlib=True, auth_secrets=True)
    assert startup.problems(team("oidc"), ready, {}) == []


def test_a_sessions_identity_comes_from_its_handshake_headers_and_peer():
    cfg = team(proxy_secret_env="PROXY_SECRET", proxy_secret_header="X-Proxy-Secret")
    options = startup.ServerOptions(address="0.0.0.0", max_upload_mb=50)
    env = {"PROXY_SECRET": "s3cret"}
    sent = [("x-forwarded-email", "Alice@example.com"), ("x-proxy-secret", "s3cret")]
    assert startup.request_identity(cfg, options, sent, "203.0.113.9", {}, env).user == "alice@example.com"
    assert startup.request_identity(cfg, options, sent[:1], "203.0.113.9", {}, env).user is None
    oidc = team("oidc")
    claims = {"is_logged_in": True, "email": "Alice@example.com", "email_verified": True}
    assert startup.request_identity(oidc, options, [], None, claims).user == "alice@example.com"
    assert startup.request_identity(oidc, options, [], None, {**claims, "is_logged_in": False}).user is None
