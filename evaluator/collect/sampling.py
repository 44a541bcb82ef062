"""Which finished traces are judged: a rate, attribute rules and a cap per hour.

    rules = SamplingRules.parse(rate=0.2, rules=['metadata.env = "prod"', "route != /health"], max_per_hour=500)
    sampler = Sampler(rules)
    decision = sampler.decide(trace_id, attrs)   # decision.keep, decision.reason, decision.used

The rate is decided on the trace id (a hash of it), never on a random draw: a trace the sender
exports again (a retry after a receiver restart) is sampled the same way, and two receivers agree.
A rule is `KEY = VALUE` or `KEY != VALUE`; the value may be quoted. KEY is looked up in the trace's
attributes (collect/otlp.py: the root span's first, then the other spans', then the resource's;
a JSON `metadata` attribute is read as `metadata.<key>`). A trace without the key matches `!=` and
not `=`. Traces past the hourly cap are not judged, counted as such.
"""
from __future__ import annotations

import hashlib
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

from ..errors import RagmeterError

_RULE = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*(!=|=)(?!=)\s*(.*?)\s*$")


class RuleError(RagmeterError):
    """A sampling rule or rate that cannot be read; the message shows the form to use."""


@dataclass(frozen=True)
class Condition:
    """One attribute rule: `key op value`, compared as text."""

    key: str
    op: str  # "=" or "!="
    value: str

    def matches(self, attrs: Mapping[str, Any]) -> bool:
        present = self.key in attrs and attrs[self.key] is not None
        equal = present and _text(attrs[self.key]) == self.value
        return equal if self.op == "=" else not equal

    def __str__(self) -> str:
        return f'{self.key} {self.op} "{self.value}"'


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def parse_rule(text: str) -> Condition:
    """`metadata.env = "prod"`, `route != /health`, `user.tier = gold` as a Condition; RuleError otherwise."""
    match = _RULE.match(text or "")
    if not match or not match.group(3):
        raise RuleError(f"sampling rule {text!r}: write KEY = VALUE or KEY != VALUE, e.g. 'metadata.env = \"prod\"'")
    key, op, value = match.groups()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return Condition(key, op, value)


@dataclass(frozen=True)
class SamplingRules:
    """A project's sampling: the share of traces judged, the rules a trace must match, the hourly cap (0: none)."""

    rate: float = 1.0
    conditions: Tuple[Condition, ...] = ()
    max_per_hour: int = 0

    @classmethod
    def parse(cls, rate: float = 1.0, rules: Sequence[str] = (), max_per_hour: int = 0) -> "SamplingRules":
        if not 0.0 <= rate <= 1.0:
            raise RuleError(f"sample rate {rate:g}: a share from 0 to 1, e.g. 0.1 for one trace in ten")
        if max_per_hour < 0:
            raise RuleError(f"max per hour {max_per_hour}: 0 (no cap) or more")
        return cls(float(rate), tuple(parse_rule(r) for r in rules), int(max_per_hour))

    def describe(self) -> str:
        parts = [f"rate {self.rate:g}"] + [str(c) for c in self.conditions]
        if self.max_per_hour:
            parts.append(f"at most {self.max_per_hour} per hour")
        return ", ".join(parts)


def rate_keeps(trace_id: str, rate: float) -> bool:
    """Whether a trace falls in the sampled share: the first 8 bytes of a hash of its id, as a fraction."""
    if rate >= 1.0:
        return True
    digest = hashlib.blake2b(trace_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0 ** 64 < rate


@dataclass(frozen=True)
class Decision:
    keep: bool
    reason: str  # "sampled", or why not: "rate", "rule", "hourly_cap"
    used: Dict[str, Any] = field(default_factory=dict)  # the attributes the rules read, kept with the sample


class Sampler:
    """Decides per trace; safe to call from the receiver's threads."""

    def __init__(self, rules: SamplingRules, clock: Callable[[], float] = time.time) -> None:
        self.rules, self._clock = rules, clock
        self._lock = threading.Lock()
        self._hour: Optional[int] = None
        self._judged = 0

    def decide(self, trace_id: str, attrs: Mapping[str, Any]) -> Decision:
        used = {c.key: attrs[c.key] for c in self.rules.conditions if attrs.get(c.key) is not None}
        if not all(c.matches(attrs) for c in self.rules.conditions):
            return Decision(False, "rule", used)
        if not rate_keeps(trace_id, self.rules.rate):
            return Decision(False, "rate", used)
        return Decision(True, "sampled", used) if self._take() else Decision(False, "hourly_cap", used)

    def _take(self) -> bool:
        """Count one judged trace against this clock hour's cap; False when the cap is reached."""
        if not self.rules.max_per_hour:
            return True
        with self._lock:
            hour = int(self._clock() // 3600)
            if hour != self._hour:
                self._hour, self._judged = hour, 0
            if self._judged >= self.rules.max_per_hour:
                return False
            self._judged += 1
            return True
