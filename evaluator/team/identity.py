"""Who a team-mode request comes from, decided by the server and never by the visitor.

Three things make an identity trustworthy (README "Team mode"):
- **where it came from**: with `auth = "proxy"` the user header counts only on a connection from a
  trusted proxy: a peer address inside `[server] trusted_proxies`, or (none listed) any connection
  to a server that listens on loopback only (so only its own machine, the proxy's, reaches it); or,
  when `proxy_secret_env` is set, a request that carries the proxy's shared secret in
  `proxy_secret_header`. A header sent twice (a proxy that
  appends instead of replacing) counts as no identity at all.
- **one spelling per person**: header bytes arrive as Latin-1 text, so they are decoded again as
  UTF-8, then NFKC-normalised and casefolded: "ALICE@example.com" and "alice@example.com" are one user.
- **no look-alikes**: a name that mixes scripts (a Cyrillic "а" in a Latin address) or holds an
  invisible character is refused with a message, so it cannot pass for someone else in a list.

Everything here is plain data in, a decision out: pages/_team.py feeds it Streamlit's request.
"""
from __future__ import annotations

import hmac
import ipaddress
import unicodedata
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

from ..errors import ConfigError

IPNetwork = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]
IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]

# Letters of these scripts are written together in one name (Japanese mixes all three).
_SCRIPT_GROUPS = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "HALFWIDTH": "CJK"}
# Unicode categories a name may not hold: controls, formats (zero-width joiners, bidi marks),
# private use, unassigned, and every kind of space.
_INVISIBLE = {"Cc", "Cf", "Co", "Cn", "Cs", "Zs", "Zl", "Zp"}
LOOPBACK_ADDRESSES = ("127.0.0.1", "::1", "localhost")
MAX_IDENTITY_CHARS = 320  # the longest e-mail address RFC 3696 allows


class IdentityRefused(ValueError):
    """A user name that cannot be trusted as one person; the message says why, for the user."""


def from_header(value: str) -> str:
    """A header value as the proxy sent it: Tornado hands over its bytes as Latin-1 text."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return value  # already text (AppTest, a test double) or not UTF-8: normalise() judges it


def normalise(name: str) -> str:
    """One spelling per person (NFKC, casefolded, trimmed), or IdentityRefused saying why not."""
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).strip().casefold())
    if not text:
        raise IdentityRefused("the sign-in gave an empty user name")
    if len(text) > MAX_IDENTITY_CHARS:
        raise IdentityRefused(f"the user name is longer than {MAX_IDENTITY_CHARS} characters")
    hidden = [ch for ch in text if unicodedata.category(ch) in _INVISIBLE]
    if hidden:
        raise IdentityRefused(f"the user name holds an invisible or space character (U+{ord(hidden[0]):04X})")
    scripts = sorted(scripts_of(text))
    if len(scripts) > 1:
        raise IdentityRefused(f"the user name mixes letters of several scripts ({', '.join(scripts)}), "
                              "which lets one name pass for another")
    return text


def scripts_of(text: str) -> set:
    """The scripts of the letters in `text`, by the first word of each letter's Unicode name."""
    found = set()
    for ch in text:
        if not unicodedata.category(ch).startswith("L"):
            continue  # digits, '@', '.', '-', '_' belong to every script
        word = unicodedata.name(ch, "UNKNOWN").split()[0]
        found.add(_SCRIPT_GROUPS.get(word, word))
    return found


def config_name(name: str, where: str) -> str:
    """A user name written in the operator's [roles], normalised like a signed-in one (ConfigError if refused)."""
    try:
        return normalise(name)
    except IdentityRefused as exc:
        raise ConfigError(f"{where}: {name!r} cannot be a user name: {exc}") from None


@dataclass(frozen=True)
class ProxyTrust:
    """When the proxy's user header counts: the operator's [server] settings, checked once at start."""

    header: str
    trusted: Tuple[IPNetwork, ...] = ()
    secret_header: str = ""
    secret: str = ""  # the value, read from the environment at start; never shown or stored
    loopback_only: bool = False  # the server listens on 127.0.0.1 / ::1 only

    def peer_trusted(self, peer: Optional[str]) -> bool:
        """Is the connection's address a proxy we trust? A server that listens on loopback only is
        reached only from its own machine (where the proxy runs), whatever address uvicorn reports:
        it replaces a loopback peer's address with the X-Forwarded-For the local proxy sent."""
        if not self.trusted:
            return self.loopback_only
        address = _address(peer)
        return address is not None and any(address in net for net in self.trusted)

    def secret_ok(self, values: Sequence[str]) -> bool:
        return bool(self.secret) and len(values) == 1 and hmac.compare_digest(values[0].encode(), self.secret.encode())


@dataclass(frozen=True)
class Decision:
    """A request's identity (`user`, normalised) or why it has none (`problem`, shown on the sign-in page)."""

    user: Optional[str] = None
    problem: str = ""


def proxy_identity(trust: ProxyTrust, peer: Optional[str], values: Sequence[str],
                   secret_values: Sequence[str] = ()) -> Decision:
    """The user a proxied request names, or no one: from a peer we do not trust, a header sent twice,
    a missing or wrong shared secret, or a name that could pass for someone else."""
    if trust.secret:
        if not trust.secret_ok(secret_values):
            return Decision()  # not through our proxy: the visitor sees the sign-in message
    elif not trust.peer_trusted(peer):
        return Decision()
    if len(values) != 1:
        return Decision(problem="the sign-in proxy sent the user header more than once"
                        if len(values) > 1 else "")
    try:
        return Decision(user=normalise(from_header(values[0])))
    except IdentityRefused as exc:
        return Decision(problem=str(exc))


def oidc_identity(claims: Mapping[str, Any], claim: str = "") -> Decision:
    """The user an OIDC sign-in names: the operator's `claim` when set, else the e-mail address only
    when the provider says it verified it. Never the display name, which anyone can choose."""
    if claim:
        value = claims.get(claim)
        if not isinstance(value, str) or not value.strip():
            return Decision(problem=f"your sign-in did not include the {claim!r} claim this dashboard uses")
    else:
        value = claims.get("email")
        if not isinstance(value, str) or not value.strip():
            return Decision(problem="your sign-in did not include an e-mail address")
        if claims.get("email_verified") not in (True, "true", "True"):
            return Decision(problem="your sign-in provider has not verified your e-mail address")
    try:
        return Decision(user=normalise(value))
    except IdentityRefused as exc:
        return Decision(problem=str(exc))


def parse_networks(entries: Sequence[str], where: str) -> Tuple[IPNetwork, ...]:
    """[server] trusted_proxies as networks; ConfigError naming the entry that is not a CIDR."""
    out = []
    for entry in entries:
        try:
            out.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ConfigError(f"{where}: trusted_proxies entry {entry!r} is not an address or CIDR "
                              "such as \"10.0.0.5/32\"") from None
    return tuple(out)


def is_loopback_bind(address: Optional[str]) -> bool:
    """Does the server listen on loopback only? (Streamlit's empty address means every interface.)"""
    text = (address or "").strip().strip("[]")
    if text == "localhost":
        return True
    parsed = _address(text)
    return parsed is not None and parsed.is_loopback


def _address(text: Optional[str]) -> Optional[IPAddress]:
    try:
        address = ipaddress.ip_address((text or "").strip().strip("[]"))
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)  # "::ffff:10.0.0.5" is 10.0.0.5
    return mapped or address
