"""Finding the answer, contexts and tool calls in a JSON reply: by known names, or by a path.

Automatic discovery looks for the first known key at the top level, then one level down under
`data` or `output` (a common envelope). A path given by the user is dotted: `data.reply.text`,
`choices.0.message.content` (or `choices[0]`), and `hits[].passage` takes `passage` from every
item of the `hits` list.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from ..errors import TargetConfigError, TargetError

FIELD_NAMES = ("answer", "contexts", "tool_calls", "retrieval_ids")
KNOWN_KEYS: Dict[str, Tuple[str, ...]] = {
    "answer": ("answer", "output", "response", "text", "result", "content"),
    "contexts": ("contexts", "retrieved_contexts", "sources", "documents", "docs", "context"),
    "tool_calls": ("tool_calls", "tools_called", "steps", "intermediate_steps"),
    "retrieval_ids": ("retrieval_ids", "retrieved_ids", "doc_ids"),  # ranked ids, for hit@k, mrr, ndcg@k
}
ENVELOPES = ("data", "output")
_SEGMENT = re.compile(r"^([^\[\]]*)((?:\[\d*\])*)$")
MISSING = object()


def parse_path(path: str) -> List[Any]:
    """A dotted path as steps: a key (str), an index (int), or None for "every item"."""
    steps: List[Any] = []
    for segment in path.strip().split("."):
        match = _SEGMENT.match(segment)
        if not path.strip() or not match or not (match.group(1) or match.group(2)):
            raise TargetConfigError(f"field path {path!r} is not a dotted path like data.reply.text or hits[].passage")
        key, brackets = match.groups()
        if key:
            steps.append(int(key) if key.isdigit() else key)
        steps += [int(b) if b else None for b in re.findall(r"\[(\d*)\]", brackets)]
    return steps


def extract(data: Any, steps: List[Any]) -> Any:
    """The value at `steps` in `data`; MISSING when some step is not there."""
    for i, step in enumerate(steps):
        if step is None:
            if not isinstance(data, list):
                return MISSING
            values = [extract(item, steps[i + 1:]) for item in data]
            return [v for v in values if v is not MISSING]
        if isinstance(step, int) and isinstance(data, list):
            data = data[step] if -len(data) <= step < len(data) else MISSING
        elif isinstance(data, dict):
            data = data.get(str(step), MISSING)
        else:
            return MISSING
        if data is MISSING:
            return MISSING
    return data


def pick(reply: Any, name: str, path: Optional[str]) -> Any:
    """Field `name` of a reply: from the user's path (TargetError if absent), else discovered (None if absent)."""
    if path:
        value = extract(reply, parse_path(path))
        if value is MISSING:
            raise TargetError(f"the reply has no {name} at '{path}' (top-level keys: {_keys(reply)}); "
                              "check the field path")
        return value
    return discover(reply, name)


def discover(reply: Any, name: str) -> Any:
    if not isinstance(reply, dict):
        return reply if name == "answer" and isinstance(reply, str) else None
    for key in KNOWN_KEYS[name]:
        value = reply.get(key)
        if value is not None and not (name == "answer" and isinstance(value, (dict, list))):
            return value
    for envelope in ENVELOPES:
        inner = reply.get(envelope)
        if isinstance(inner, dict):
            found = discover(inner, name)
            if found is not None:
                return found
    return None


def _keys(reply: Any) -> str:
    return ", ".join(map(str, list(reply)[:12])) if isinstance(reply, dict) else f"(a JSON {type(reply).__name__})"


def no_answer_message(reply: Any) -> str:
    return (f"the reply has no answer field (looked for {', '.join(KNOWN_KEYS['answer'])}, also under "
            f"{' and '.join(ENVELOPES)}; top-level keys: {_keys(reply)}); give its path with "
            "--target-field answer=PATH")
