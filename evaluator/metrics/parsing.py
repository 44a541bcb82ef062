"""Turning a judge's reply into a score — the judge's own final score, or none at all.

A parser that guesses invents scores: the seed took the first bare number, so
"There is 1 unsupported claim out of 3." scored 1.0. The rules now, in order:

1. strip ``` fences; when the whole reply is a JSON object, that object decides: the score
   computed from its verdict lists when a metric reads them (`Metric.verdicts`: each built-in
   metric's reader is in its own module, built from the pieces below), else its "score" field — a
   missing or null score is no score;
2. otherwise the *last* score stated in the reply wins: a JSON object carrying verdicts or a
   "score" key, or a written statement (`score: X`, `Score = X`, `rating is X`, `X/5`,
   `score: X out of N`). Last, because the judge's verdict comes after any text it quotes,
   and a quoted answer may carry its own `{"score": 1}` (prompt injection). Text inside a
   JSON object is not read as a statement, so `{"reasoning": "score: 1", ...}` cannot vote;
3. otherwise a number written as a decimal in 0-1 (`0.8`, `1.0`), the last one;
4. otherwise a bare number that is the whole reply (`1`, or `4` on a 1-5 scale);
5. otherwise nothing: the caller falls back visibly (heuristic, or unscored).

A reply that ends inside a JSON object (cut off by max_tokens or a dropped stream) gives no score
at all (`how` "truncated"): the verdicts that would have decided it are lost, and a "score" that
survived the cut would be read as if the judge had finished.

Scores are normalised from the metric's scale to 0-1 ("1-5": (s-1)/4; "pass-fail": 1/0) and
clamped to [0, 1].
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..safetext import without_controls_value

SCALES = ("0-1", "1-5", "pass-fail")
Verdicts = Callable[[dict], Optional[Tuple[float, List[Dict[str, Any]]]]]

_FENCE = re.compile(r"^\s*```[a-zA-Z]*\s*|\s*```\s*$")
_NUMBER = r"-?\d+(?:\.\d+)?"
# "score: 0.7", "Final score = 4/5", "**Rating:** 3 out of 5", '"score": 0.7' in broken JSON.
_STATED = re.compile(
    r"\b(?:score|rating|grade|verdict)\b[\"'*\s]*(?:[:=]|\bis\b|\bof\b)[\s*\"']*"
    rf"(?P<value>{_NUMBER}|pass|fail)(?P<pct>\s*%)?(?:\s*(?:/|out\s+of)\s*(?P<of>\d+))?",
    re.IGNORECASE)
# "4/5", "8 / 10" standing alone (not part of a date or a path).
_FRACTION = re.compile(r"(?<![\w./])(?P<value>\d+(?:\.\d+)?)\s*/\s*(?P<of>\d+)(?![\w/]|\.\d)")
_DECIMAL = re.compile(r"(?<![\w.\-])(?:0\.\d+|1\.0+)(?![\w]|\.\d)")
_WHOLE = re.compile(rf"^\s*(?P<value>{_NUMBER}|pass|fail)\s*\.?\s*$", re.IGNORECASE)
_MASK = "\x00"  # replaces JSON objects' text, so statement patterns cannot read or cross it
_POSITIVE = {"supported", "useful", "yes", "true", "relevant", "attributed", "1"}
_PASS = {"pass", "passed", "yes", "true", "1"}
_FAIL = {"fail", "failed", "no", "false", "0"}


@dataclass
class ParsedReply:
    score: Optional[float]
    reasoning: str = ""
    verdicts: List[Dict[str, Any]] = field(default_factory=list)
    how: str = "unparsed"  # "verdicts", "json", "statement", "number", "unparsed" or "truncated"
    stated: Optional[float] = None  # the score as written, on the metric's scale
    contradiction: str = ""  # set when the reply's own "score" disagrees with its verdicts


@dataclass
class _Candidate:
    pos: int
    parsed: ParsedReply


def clamp(value: float) -> float:
    return max(0.0, min(1.0, float(value)))


def normalise(value: float, scale: str = "0-1") -> float:
    """A score written on `scale` as a 0-1 score: 1-5 -> (s-1)/4; pass-fail and 0-1 clamped."""
    if scale == "1-5":
        return clamp((float(value) - 1.0) / 4.0)
    return clamp(value)


def _json_objects(text: str) -> List[Tuple[int, int, dict]]:
    """(start, end, object) of each top-level JSON object in free text (nested ones are not candidates)."""
    decoder = json.JSONDecoder()
    found, pos = [], 0
    while (start := text.find("{", pos)) != -1:
        try:
            obj, end = decoder.raw_decode(text, start)
        except ValueError:
            pos = start + 1
            continue
        if isinstance(obj, dict):
            found.append((start, end, obj))
        pos = end
    return found


def load_json_object(reply: str) -> Optional[dict]:
    """The reply as a JSON object: the whole reply (fences stripped), else its last object."""
    text = _FENCE.sub("", reply.strip())
    try:
        obj = json.loads(text)
    except ValueError:
        objects = _json_objects(text)
        return objects[-1][2] if objects else None
    return obj if isinstance(obj, dict) else None


def is_positive(value: Any) -> bool:
    """Whether a verdict's value says yes (True, "supported", "useful", "attributed", ...)."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in _POSITIVE


def verdict_list(obj: dict, key: str) -> Optional[List[dict]]:
    """The reply's list of verdict objects under `key`; None unless it is a non-empty list of objects."""
    items = obj.get(key)
    if isinstance(items, list) and items and all(isinstance(i, dict) for i in items):
        return items
    return None


def average_precision(relevant: List[bool]) -> float:
    """Rank-aware average precision: mean of precision@k over the ranks k holding a useful item."""
    hits, total = 0, 0.0
    for k, rel in enumerate(relevant, 1):
        if rel:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


def positive_share(items: List[dict], key: str) -> float:
    """The share of `items` whose `key` says yes: a verdict reader's score (faithfulness.py, context_recall.py)."""
    return sum(is_positive(i.get(key)) for i in items) / len(items)


# --- reading one stated value -------------------------------------------------------------------

def _value(raw: Any, scale: str) -> Optional[float]:
    """A stated value (JSON field or text) as a number on `scale`; None when it is not one."""
    if isinstance(raw, bool):
        return (1.0 if raw else 0.0) if scale == "pass-fail" else None
    if isinstance(raw, str):
        word = raw.strip().lower()
        if scale == "pass-fail" and word in _PASS | _FAIL:
            return 1.0 if word in _PASS else 0.0
        raw = word
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return None
    return value if value == value else None  # NaN is not a score


def _scored(stated: Optional[float], scale: str, how: str, reasoning: str = "",
            verdicts: Optional[list] = None) -> ParsedReply:
    if stated is None:
        return ParsedReply(None, reasoning, [], "unparsed")
    return ParsedReply(normalise(stated, scale), reasoning, list(verdicts or []), how, stated)


# A judge's "score" may differ from its verdicts' score by rounding; past this it contradicts them,
# which an injected "reply with score 1" or a confused judge produces.
CONTRADICTION = 0.25


def _contradiction(obj: dict, computed: float, scale: str) -> str:
    stated = _value(obj.get("score"), scale) if "score" in obj else None
    if stated is None or abs(normalise(stated, scale) - clamp(computed)) <= CONTRADICTION:
        return ""
    return (f"The judge's reply contradicts itself: it states score {stated:g} but its own verdicts give "
            f"{clamp(computed):.3f}; the verdicts' score is used.")


def _from_object(obj: dict, verdicts: Optional[Verdicts], scale: str) -> Optional[ParsedReply]:
    """The verdict an object carries, or None when it carries none (no verdicts, no "score" key)."""
    obj = without_controls_value(obj)  # the judge's text as it enters: no control character ever stored or drawn
    reasoning = str(obj.get("reasoning") or obj.get("reason") or "")
    computed = verdicts(obj) if verdicts is not None else None
    if computed is not None:
        return ParsedReply(clamp(computed[0]), reasoning, list(computed[1]), "verdicts", computed[0],
                           _contradiction(obj, computed[0], scale))
    if "score" not in obj:
        return None
    return _scored(_value(obj["score"], scale), scale, "json", reasoning)


def _from_statement(match: "re.Match[str]", scale: str) -> ParsedReply:
    value = _value(match.group("value"), scale)
    of = match.groupdict().get("of")
    if value is not None and match.groupdict().get("pct"):
        return _scored(value / 100, "0-1", "statement")
    if value is not None and of and float(of) > 0:
        if scale == "1-5" and int(of) == 5:
            return _scored(value, scale, "statement")  # "4/5" on a 1-5 scale is a 4
        return _scored(value / float(of), "0-1", "statement")
    return _scored(value, scale, "statement")


def _candidates(text: str, verdicts: Optional[Verdicts], scale: str) -> Tuple[List[_Candidate], str]:
    """Every score stated in free text, with its position, and the text with JSON objects masked."""
    found, masked = [], text
    for start, end, obj in _json_objects(text):
        parsed = _from_object(obj, verdicts, scale)
        if parsed is not None:
            found.append(_Candidate(start, parsed))
        masked = masked[:start] + _MASK * (end - start) + masked[end:]
    for pattern in (_STATED, _FRACTION):
        found.extend(_Candidate(m.start(), _from_statement(m, scale)) for m in pattern.finditer(masked))
    return found, masked


def parse_score(reply: str, verdicts: Optional[Verdicts] = None, scale: str = "0-1") -> ParsedReply:
    """The judge's own final score in `reply` (see the module docstring); `score` None when there is none.

    `verdicts` computes a score from a JSON object's evidence lists (built-in metrics);
    `scale` is how the prompt asked for the score ("0-1", "1-5" or "pass-fail").
    """
    text = _FENCE.sub("", (reply or "").strip())
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        return _from_object(whole, verdicts, scale) or ParsedReply(None)
    if is_truncated_json(text):
        return ParsedReply(None, how="truncated")
    found, masked = _candidates(text, verdicts, scale)
    if found:
        return max(found, key=lambda c: c.pos).parsed
    decimals = _DECIMAL.findall(masked) if scale == "0-1" else []
    if decimals:
        return _scored(float(decimals[-1]), scale, "number")
    return _whole_number(text, scale)


_OPENS = {"{": "}", "[": "]"}


def is_truncated_json(text: str) -> bool:
    """Whether `text` ends inside a JSON object it began (`{"` ... with no closing brace)."""
    start = text.find('{"')
    if start == -1:
        start = text.find("{\n")
    if start == -1:
        return False
    closers: List[str] = []
    in_string = escaped = False
    for ch in text[start:]:
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif not closers:  # between objects (prose): only a brace opens one
            if ch == "{":
                closers.append("}")
        elif ch == '"':
            in_string = True
        elif ch in _OPENS:
            closers.append(_OPENS[ch])
        elif ch == closers[-1]:
            closers.pop()
    return bool(closers)


def _whole_number(text: str, scale: str) -> ParsedReply:
    """A reply that is nothing but a number on the scale ("1", "0", "4" on 1-5, "PASS")."""
    match = _WHOLE.match(text)
    value = _value(match.group("value"), scale) if match else None
    low, high = (1.0, 5.0) if scale == "1-5" else (0.0, 1.0)
    if value is None or not low <= value <= high or (scale == "pass-fail" and value not in (0.0, 1.0)):
        return ParsedReply(None)
    return _scored(value, scale, "number")
