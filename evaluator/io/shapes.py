"""What a target answered, in one shape: `TargetResponse`, and the readers that make it.

A pipeline may answer with a string, an `(answer, contexts)` pair, or a dict with `answer`,
`contexts` and `tool_calls`; contexts may be strings, dicts or LangChain `Document`s; tool calls
may be `{"name", "arguments", "output"}` dicts, deepeval `ToolCall`s or OpenAI `tool_calls`
message objects. Everything here turns those into plain strings and dicts, or raises
`TargetError` naming what was wrong, so a row is kept with that reason instead of a traceback.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ..errors import TargetError
from .context_ids import context_id

# Where a context dict keeps its text, and its title; the first key present wins.
TEXT_KEYS = ("text", "content", "body", "page_content", "passage", "chunk", "document")
TITLE_KEYS = ("title", "name", "source")
# A tool call's parts under the names the common frameworks use.
ARGUMENT_KEYS = ("arguments", "input_parameters", "args", "input", "parameters")
OUTPUT_KEYS = ("output", "result", "observation", "response")


@dataclass(frozen=True)
class TargetResponse:
    """One call to a target: the answer, the contexts (strings) and the agent's tool calls.

    `error` is set (and the answer empty) when the call failed for good; `latency_ms` is the
    whole call, retries included.
    """

    answer: str = ""
    contexts: List[str] = field(default_factory=list)
    tool_calls: List[Dict[str, Any]] = field(default_factory=list)
    latency_ms: Optional[float] = None
    error: Optional[str] = None
    # The retrieved documents' ids in rank order: a returned `retrieval_ids`, else the ids its context
    # objects carry (io/doc_ids.py); None when there are none (retrieval metrics then say so).
    retrieval_ids: Optional[List[str]] = None

    @property
    def ok(self) -> bool:
        return self.error is None


def context_text(item: Any) -> str:
    """One context as text. A titled one becomes "Title\\nbody", so expected-doc recall sees the title."""
    if isinstance(item, str):
        return item.strip()
    if isinstance(item, dict):
        return _titled(_first(item, TEXT_KEYS), _title_of(item))
    if hasattr(item, "page_content"):  # a LangChain Document, or anything shaped like one
        meta = getattr(item, "metadata", None)
        return _titled(item.page_content, _title_of(meta) if isinstance(meta, dict) else None)
    raise TargetError(f"a context must be text, a dict with a text field ({'/'.join(TEXT_KEYS[:4])}) "
                      f"or a Document, not {type(item).__name__}")


def _first(data: Dict[str, Any], keys: tuple) -> Any:
    return next((data[k] for k in keys if data.get(k) is not None), None)


def _title_of(data: Any) -> Optional[str]:
    if not isinstance(data, dict):
        return None
    title = _first(data, TITLE_KEYS)
    if title is None and isinstance(data.get("metadata"), dict):
        title = _first(data["metadata"], TITLE_KEYS)
    return title.strip() if isinstance(title, str) and title.strip() else None


def _titled(body: Any, title: Optional[str]) -> str:
    if body is None:
        raise TargetError(f"a context object has no text field (looked for {', '.join(TEXT_KEYS)})")
    body = body.strip() if isinstance(body, str) else json.dumps(body, ensure_ascii=False, default=str)
    return f"{title}\n{body}" if title else body


def contexts_of(value: Any) -> List[str]:
    """A list of contexts (or one context) as a list of non-empty strings."""
    if value is None:
        return []
    items = value if isinstance(value, (list, tuple)) else [value]
    return [text for text in (context_text(item) for item in items) if text]


def tool_call(item: Any) -> Dict[str, Any]:
    """One tool call as {"name", "arguments", "output"}; a bare string is a call by that name."""
    if isinstance(item, str):
        return {"name": item, "arguments": {}, "output": None}
    if not isinstance(item, dict):
        item = _object_fields(item)
    function = item.get("function")
    if isinstance(function, dict):  # an OpenAI tool_calls entry: {"id", "type", "function": {...}}
        return {"name": str(function.get("name") or ""), "arguments": _arguments(function.get("arguments")),
                "output": item.get("output")}
    name = item.get("name") or item.get("tool") or item.get("tool_name")
    if not isinstance(name, str) or not name:
        raise TargetError(f"a tool call needs a 'name'; got keys {sorted(item)[:8]}")
    return {"name": name, "arguments": _arguments(_first(item, ARGUMENT_KEYS)), "output": _first(item, OUTPUT_KEYS)}


def _object_fields(obj: Any) -> Dict[str, Any]:
    """Attributes of a tool-call object (deepeval ToolCall, a pydantic model, a dataclass)."""
    if hasattr(obj, "model_dump"):
        return dict(obj.model_dump())
    if hasattr(obj, "__dict__"):
        return dict(vars(obj))
    raise TargetError(f"a tool call must be a dict with a 'name', not {type(obj).__name__}")


def _arguments(value: Any) -> Any:
    """Arguments as data: OpenAI sends them as a JSON string, which is decoded when it parses."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return {} if value is None else value


def tool_calls_of(value: Any) -> List[Dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise TargetError(f"tool_calls must be a list, not {type(value).__name__}")
    return [tool_call(item) for item in value]


def tool_outputs(calls: List[Dict[str, Any]]) -> List[str]:
    """The tools' outputs as contexts ("tool_name\\noutput"), for agents that retrieve through tools."""
    out = []
    for call in calls:
        output = call.get("output")
        if output in (None, "", [], {}):
            continue
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
        out.append(f"{call['name']}\n{text.strip()}")
    return out


def response_from_value(value: Any) -> TargetResponse:
    """What a Python callable returned, as a TargetResponse (TargetError when it has no answer)."""
    if isinstance(value, str):
        return TargetResponse(answer=value.strip())
    if isinstance(value, tuple) and len(value) == 2:
        return assemble_response(value[0], value[1], None)
    if isinstance(value, dict):
        if "answer" not in value:
            raise TargetError(f"the returned dict has no 'answer' key (keys: {', '.join(map(str, value))})")
        return assemble_response(value["answer"], value.get("contexts"), value.get("tool_calls"),
                                 value.get("retrieval_ids"))
    raise TargetError("the target returned a " + type(value).__name__ + "; return a string, "
                      "(answer, contexts) or a dict with 'answer'")


def assemble_response(answer: Any, contexts: Any, calls: Any, ids: Any = None) -> TargetResponse:
    if answer is None:
        answer = ""
    if not isinstance(answer, str):
        raise TargetError(f"the answer must be text, not {type(answer).__name__}")
    tools = tool_calls_of(calls)
    found = contexts_of(contexts)
    return TargetResponse(answer=answer.strip(), contexts=found or tool_outputs(tools), tool_calls=tools,
                          retrieval_ids=_ids_of(ids, contexts))


def _ids_of(ids: Any, contexts: Any) -> Optional[List[str]]:
    """The returned ids (a list), else the ids of the context objects that carry one, in order."""
    if isinstance(ids, (list, tuple)):
        return ["" if i is None else str(i).strip() for i in ids]
    items = contexts if isinstance(contexts, (list, tuple)) else [contexts] if contexts is not None else []
    found = [context_id(item) for item in items if not isinstance(item, str)]
    return found if any(found) and len(found) == len(items) else None
