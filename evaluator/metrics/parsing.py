"""Turning a judge's reply into a score, tolerantly.

Order of attempts:
1. strip ``` fences and `json.loads` the whole reply;
2. else the *last* JSON object in the reply — the judge's verdict comes after any text it
   quotes, and a quoted answer may carry its own `{"score": 1}` (prompt injection), so binding
   to the last object keeps the judge's own verdict;
3. from a JSON object: the score computed from its verdict lists when they are present and
   well-formed (claims, per-context verdicts, statements, TP/FP/FN), else its "score" field;
4. else the first float-like token of the reply (0.xxx, 1.0, 0, 1);
5. else nothing: the caller falls back to the heuristic and says so.
Every score is clamped to [0, 1].
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

_FENCE = re.compile(r"^\s*```[a-zA-Z]*\s*|\s*```\s*$")
_FLOAT = re.compile(r"(?<![\d.])(?:0\.\d+|1\.0+|0|1)(?![\d.])")
_POSITIVE = {"supported", "useful", "yes", "true", "relevant", "attributed", "1"}


@dataclass
class ParsedReply:
    score: Optional[float]
    reasoning: str = ""
    verdicts: List[Dict[str, Any]] = field(default_factory=list)
    how: str = "unparsed"  # "verdicts", "json", "number" or "unparsed"


def clamp(value: float) -> float:
    return max(0.0, min(1.0, float(value)))


def _last_json_object(text: str) -> Optional[dict]:
    """The last top-level JSON object in free text (objects nested in it are not candidates)."""
    decoder = json.JSONDecoder()
    found, pos = None, 0
    while (start := text.find("{", pos)) != -1:
        try:
            obj, end = decoder.raw_decode(text, start)
        except ValueError:
            pos = start + 1
            continue
        if isinstance(obj, dict):
            found = obj
        pos = end
    return found


def load_json_object(reply: str) -> Optional[dict]:
    text = _FENCE.sub("", reply.strip())
    try:
        obj = json.loads(text)
    except ValueError:
        return _last_json_object(text)
    return obj if isinstance(obj, dict) else None


def _positive(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in _POSITIVE


def _listed(obj: dict, key: str) -> Optional[List[dict]]:
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


def _fraction(items: List[dict], key: str) -> float:
    return sum(_positive(i.get(key)) for i in items) / len(items)


def _correctness_f1(obj: dict) -> Optional[float]:
    lists = [obj.get(k, obj.get(k.lower())) for k in ("TP", "FP", "FN")]
    if not all(isinstance(x, list) for x in lists):
        return None
    tp, fp, fn = (len(x) for x in lists)
    if tp + fp + fn == 0:
        return None
    return tp / (tp + 0.5 * (fp + fn))


def score_from_verdicts(metric: str, obj: dict) -> Optional[tuple]:
    """(score, verdict list) computed in code from the judge's evidence, or None if it gave none."""
    if metric == "faithfulness" and (claims := _listed(obj, "claims")):
        return _fraction(claims, "verdict"), claims
    if metric == "context_precision" and (ctxs := _listed(obj, "contexts")):
        return average_precision([_positive(c.get("verdict")) for c in ctxs]), ctxs
    if metric == "context_recall" and (stmts := _listed(obj, "statements")):
        return _fraction(stmts, "attributed"), stmts
    if metric == "answer_correctness":
        f1 = _correctness_f1(obj)
        if f1 is not None:
            verdicts = [{"claim": str(c), "verdict": k} for k in ("TP", "FP", "FN")
                        for c in obj.get(k, obj.get(k.lower()))]
            return f1, verdicts
    return None


def _as_float(value: Any) -> Optional[float]:
    if isinstance(value, bool):
        return None
    try:
        return clamp(float(value))
    except (TypeError, ValueError):
        return None


def parse_reply(reply: str, metric: str) -> ParsedReply:
    """Parse a judge reply for `metric`; `score` is None when nothing usable was found."""
    obj = load_json_object(reply)
    if obj is not None:
        reasoning = str(obj.get("reasoning") or obj.get("reason") or "")
        computed = score_from_verdicts(metric, obj)
        if computed is not None:
            return ParsedReply(clamp(computed[0]), reasoning, list(computed[1]), "verdicts")
        value = _as_float(obj.get("score"))
        if value is not None:
            return ParsedReply(value, reasoning, [], "json")
    match = _FLOAT.search(_FENCE.sub("", reply))
    if match:
        return ParsedReply(clamp(float(match.group())), "", [], "number")
    return ParsedReply(None)
