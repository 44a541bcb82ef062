"""Who a team-mode request comes from, decided by the server and never by the visitor.

Three things make an identity trustworthy (README "Team mode"):
- **where it came from**: with `auth = "proxy"` the user header counts only on a connection from a
  trusted proxy: a peer address inside `[server] trusted_proxies`, or (none listed) any connection
  to a server that listens on loopback only (so only its own machine, the proxy's, reaches it); or,
  when `proxy_secret_env` is set, a request that carries the proxy's shared secret in
  `proxy_secret_header`. A header sent twice (a proxy that
  appends instead of replacing) counts as no identity at all.
- **one spelling per person**: header bytes arrive as Latin-1 text, so they are decoded again as
  UTF-8; ASCII letters are lower-cased: "ALICE@example.com" and "alice@example.com" are one user.
  A name that NFKC normalisation or Unicode case folding would change beyond that ("ａlice" in
  full-width letters, "Straße", a decomposed "é") is refused, because folding it would make it
  someone else's: the full-width "ａlice@example.com" would sign in as the admin "alice@example.com".
  An operator whose directory holds such names sets `[server] fold_unicode_names = true`: they are
  then folded (NFKC, casefold) into one spelling instead, as before issue 42.
- **no look-alikes**: a name that mixes scripts (a Cyrillic "а" in a Latin address) or holds an
  invisible character is refused with a message, so it cannot pass for someone else in a list; so is
  a name whose confusable skeleton (UTS #39's idea, over the look-alikes of Latin letters below) is
  that of a different name in the team file's [roles]: "a1ice@example.com" or an all-Cyrillic
  "аlісе" cannot sign in beside "alice@example.com".

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


@dataclass(frozen=True)
class NamePolicy:
    """What a sign-in's name is checked against: the [roles] names (`known`, normalised) and whether the
    operator lets NFKC and case folding beyond ASCII merge names (`[server] fold_unicode_names`)."""

    known: Tuple[str, ...] = ()
    fold_unicode: bool = False


# Look-alikes of Latin letters and digits (a subset of Unicode's confusables.txt, UTS #39): each maps
# to the Latin skeleton letter it passes for. Mixed-script names are refused before this is needed;
# it catches a name written wholly in another script, or with digits and letter pairs standing in.
_CONFUSABLE = str.maketrans({
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "һ": "h", "і": "l", "ї": "l", "ј": "j", "к": "k", "м": "m",
    "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "ԁ": "d", "ԛ": "q",
    "ԝ": "w", "ɡ": "g", "ӏ": "l", "ү": "y", "ө": "o", "ь": "b", "п": "n", "г": "r",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "l", "κ": "k", "μ": "u", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "ω": "w", "γ": "y",
    # Armenian
    "օ": "o", "ս": "u", "ց": "g", "հ": "h", "ո": "n", "ք": "p",
    # digits and Latin letters that pass for others
    "0": "o", "1": "l", "i": "l", "|": "l", "5": "s",
})


def skeleton(name: str) -> str:
    """A name reduced to what it looks like: accents dropped, look-alikes mapped, "rn" read as "m"."""
    bare = "".join(ch for ch in unicodedata.normalize("NFKD", name.casefold()) if not unicodedata.combining(ch))
    return bare.translate(_CONFUSABLE).replace("rn", "m").replace("vv", "w").replace("cl", "d")


def from_header(value: str) -> str:
    """A header value as the proxy sent it: Tornado hands over its bytes as Latin-1 text."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return value  # already text (AppTest, a test double) or not UTF-8: normalise() judges it


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def normalise(name: str, policy: NamePolicy = NamePolicy()) -> str:
    """One spelling per person (trimmed, ASCII letters lower-cased), or IdentityRefused saying why not:
    a name Unicode folding would change (unless the policy allows it), an invisible character, mixed
    scripts, or a look-alike of another name in `policy.known`."""
    text = name.strip().translate(_ASCII_LOWER)
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    if not text:
        raise IdentityRefused("the sign-in gave an empty user name")
    if folded != text:
        if not policy.fold_unicode:
            changed = next((ch for ch in text if unicodedata.normalize("NFKC", ch).casefold() != ch), text[0])
            raise IdentityRefused(
                f"the user name holds {unicodedata.name(changed, 'a character')} (U+{ord(changed):04X}), which "
                "Unicode folding would turn into other letters, so the name could pass for someone else's; "
                "sign in with the plain spelling, or ask the operator to set [server] fold_unicode_names")
        text = folded
    if len(text) > MAX_IDENTITY_CHARS:
        raise IdentityRefused(f"the user name is longer than {MAX_IDENTITY_CHARS} characters")
    hidden = [ch for ch in text if unicodedata.category(ch) in _INVISIBLE]
    if hidden:
        raise IdentityRefused(f"the user name holds an invisible or space character (U+{ord(hidden[0]):04X})")
    scripts = sorted(scripts_of(text))
    if len(scripts) > 1:
        raise IdentityRefused(f"the user name mixes letters of several scripts ({', '.join(scripts)}), "
                              "which lets one name pass for another")
    shape = skeleton(text)
    twin = next((k for k in policy.known if k != text and skeleton(k) == shape), None)
    if twin is not None:
        raise IdentityRefused(f"the user name looks like {twin!r}, a different name in this dashboard's roles, "
                              "and could pass for it; sign in with your own spelling")
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


def config_name(name: str, where: str, fold_unicode: bool = False) -> str:
    """A user name written in the operator's [roles], normalised like a signed-in one (ConfigError if refused)."""
    try:
        return normalise(name, NamePolicy(fold_unicode=fold_unicode))
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
                   secret_values: Sequence[str] = (), policy: NamePolicy = NamePolicy()) -> Decision:
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
        return Decision(user=normalise(from_header(values[0]), policy))
    except IdentityRefused as exc:
        return Decision(problem=str(exc))


def oidc_identity(claims: Mapping[str, Any], claim: str = "", policy: NamePolicy = NamePolicy()) -> Decision:
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
        return Decision(user=normalise(value, policy))
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
