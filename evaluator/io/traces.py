"""Traces as samples: OpenInference / OpenTelemetry spans, grouped by trace, one sample per trace.

Three shapes of the same spans are read (each row may hold one span or, for OTLP, many):
    ReadableSpan.to_json()   {"name", "context": {"trace_id", "span_id"}, "parent_id", "attributes": {...}}
                             (a JSON array of them, or one per line)
    OTLP/JSON                {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId", "spanId",
                             "parentSpanId", "attributes": [{"key", "value": {"stringValue": ...}}]}]}]}]}
                             one export request per line, as the collector's file exporter writes them
    Phoenix span frames      columns context.trace_id, context.span_id, parent_id, span_kind and
                             attributes.* (get_spans_dataframe saved as Parquet, CSV or JSON Lines)

Per trace: the question and answer come from the root span (the one without a parent, normally a
CHAIN or AGENT span): `input.value` / `output.value`, JSON-encoded values decoded (a "question" or
"query" key, a chat message list's last user message). Contexts are the documents the model saw: an
LLM span's own `retrieval.documents`, else the last RERANKER span's `reranker.output_documents` (the
reranked order and cut), else the RETRIEVER spans' `retrieval.documents.N.document.content`, in span
order; their scores and ids are kept as metadata, and `contexts_from` names the span.
Tool calls are the TOOL spans (tool.name, input.value as arguments, output.value as output) and the
tool calls LLM spans asked for in `llm.output_messages` that no TOOL span ran. The trace id is the
sample_id. The OpenTelemetry GenAI conventions (gen_ai.input.messages / gen_ai.output.messages,
gen_ai.prompt.N / gen_ai.completion.N, gen_ai.operation.name = execute_tool) are read where a
trace has no OpenInference values. A trace without a root span or without an answer is skipped,
by name, and counted in the note.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from .paths import decoded  # a CSV cell holding a list or object, as that value
from .readings import Reading, Tally
from .sources import Records, Where

QUESTION_KEYS = ("question", "query", "input", "user_input", "prompt", "message", "text", "content")
ANSWER_KEYS = ("answer", "output", "response", "result", "content", "text")
_GENAI_KINDS = {"chat": "LLM", "text_completion": "LLM", "generate_content": "LLM", "execute_tool": "TOOL",
                "invoke_agent": "AGENT", "create_agent": "AGENT", "embeddings": "EMBEDDING"}
_INDEXED = re.compile(r"^(\d+)\.(.+)$")


@dataclass
class Span:
    """One span in a common form: ids, kind, and its attributes flattened to dotted keys."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    kind: str  # the OpenInference kind (CHAIN, RETRIEVER, LLM, TOOL, AGENT, ...), "" when unknown
    start: str  # sortable: nanoseconds or an ISO time
    attrs: Dict[str, Any]
    where: Where


# --- recognising the three shapes ---------------------------------------------------------------

def detect(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
           ) -> Optional[Reading]:
    shape = _shape(by_key, first)
    if shape is None:
        return None
    return Reading(f"OpenInference spans ({shape})", regroup=regroup, what="traces", notes=(
        f"Spans ({shape}): one sample per trace; the question and answer from the root span's input.value "
        "and output.value, contexts from the documents the model saw (an LLM span's own documents, else a "
        "RERANKER's output, else RETRIEVER spans' retrieval.documents), tool calls from TOOL spans "
        "and LLM tool calls, the trace id as sample_id.",))


def _shape(by_key: Dict[str, str], first: Mapping[str, Any]) -> Optional[str]:
    if "resourcespans" in by_key or "scopespans" in by_key:
        return "OTLP/JSON"
    if "context" in by_key and "attributes" in by_key and isinstance(first.get(by_key["context"]), dict):
        return "OpenTelemetry ReadableSpan JSON"
    if "context.trace_id" in by_key and "context.span_id" in by_key and any(k.startswith("attributes.") for k in by_key):
        return "Phoenix span export"
    return None


def spans_of(row: Dict[str, Any], where: Where) -> Iterable[Span]:
    """The spans one raw row holds, whatever its shape."""
    if "resourceSpans" in row or "scopeSpans" in row:
        for resource in row.get("resourceSpans") or [row]:
            for scope in (resource or {}).get("scopeSpans") or []:
                for span in (scope or {}).get("spans") or []:
                    yield _otlp_span(span, where)
    elif isinstance(row.get("context"), dict):
        yield _readable_span(row, where)
    else:
        yield _phoenix_span(row, where)


def _otlp_span(span: Dict[str, Any], where: Where) -> Span:
    attrs = flatten({kv.get("key", ""): any_value(kv.get("value")) for kv in span.get("attributes") or []})
    return Span(str(span.get("traceId") or ""), str(span.get("spanId") or ""), str(span.get("parentSpanId") or ""),
                str(span.get("name") or ""), _kind(attrs, None), str(span.get("startTimeUnixNano") or "").zfill(24),
                attrs, where)


def any_value(value: Any) -> Any:
    """An OTLP/JSON AnyValue ({"stringValue": "x"}, {"arrayValue": {"values": [...]}}, ...) as a plain value."""
    if not isinstance(value, dict) or not value:
        return value
    kind, inner = next(iter(value.items()))
    if kind == "arrayValue":
        return [any_value(v) for v in (inner or {}).get("values", [])]
    if kind == "kvlistValue":
        return {kv.get("key", ""): any_value(kv.get("value")) for kv in (inner or {}).get("values", [])}
    if kind == "intValue":
        return int(inner)
    return inner


def _readable_span(row: Dict[str, Any], where: Where) -> Span:
    context = row.get("context") or {}
    attrs = flatten(row.get("attributes") or {})
    return Span(_hex(context.get("trace_id")), _hex(context.get("span_id")), _hex(row.get("parent_id")),
                str(row.get("name") or ""), _kind(attrs, None), str(row.get("start_time") or ""), attrs, where)


def _phoenix_span(row: Dict[str, Any], where: Where) -> Span:
    raw = {k[len("attributes."):]: v if str(k).endswith((".value", ".mime_type")) else decoded(v)
           for k, v in row.items() if str(k).startswith("attributes.")}  # input/output.value stay text
    attrs = flatten(raw)
    return Span(str(row.get("context.trace_id") or ""), str(row.get("context.span_id") or ""),
                _blank(row.get("parent_id")), str(row.get("name") or ""),
                _kind(attrs, row.get("span_kind")), str(row.get("start_time") or ""), attrs, where)


def _blank(value: Any) -> str:
    """A frame's id cell: None, NaN (pandas' empty) and "None" (its CSV text) mean no id."""
    text = "" if value is None or value != value else str(value).strip()
    return "" if text in ("None", "nan", "NaN") else text


def _hex(value: Any) -> str:
    text = "" if value is None else str(value)
    return text[2:] if text.startswith("0x") else text


def _kind(attrs: Dict[str, Any], column: Any) -> str:
    kind = attrs.get("openinference.span.kind") or column
    if kind:
        return str(kind).upper()
    return _GENAI_KINDS.get(str(attrs.get("gen_ai.operation.name", "")), "")


def flatten(value: Any, prefix: str = "") -> Dict[str, Any]:
    """Nested attributes as dotted keys: {"retrieval": {"documents": [{"document.id": 1}]}} ->
    {"retrieval.documents.0.document.id": 1}. Flat OpenTelemetry attributes stay as they are."""
    if hasattr(value, "tolist"):  # numpy arrays from Parquet
        value = value.tolist()
    if isinstance(value, dict):
        out: Dict[str, Any] = {}
        for key, inner in value.items():
            out.update(flatten(inner, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (dict, list, tuple)) for v in value):
        out = {}
        for i, inner in enumerate(value):
            out.update(flatten(inner, f"{prefix}.{i}"))
        return out
    return {prefix: value} if prefix else {}


def indexed(attrs: Mapping[str, Any], prefix: str) -> List[Dict[str, Any]]:
    """The items of a flattened list: keys "<prefix>.N.rest" -> [{rest: value}, ...] in N order."""
    items: Dict[int, Dict[str, Any]] = defaultdict(dict)
    start = prefix + "."
    for key, value in attrs.items():
        if key.startswith(start):
            match = _INDEXED.match(key[len(start):])
            if match:
                items[int(match.group(1))][match.group(2)] = value
    return [items[i] for i in sorted(items)]


# --- one trace -> one row ------------------------------------------------------------------------

def regroup(records: Records, tally: Tally) -> Records:
    """Spans grouped by trace id, in the order traces first appear; one row per usable trace."""
    traces: Dict[str, List[Span]] = {}
    for where, row in records:
        for span in spans_of(row, where):
            if not span.trace_id:
                tally.skip(f"span '{span.name}' on {where.label()}", "it has no trace id")
                continue
            traces.setdefault(span.trace_id, []).append(span)
    for trace_id, spans in traces.items():
        tally.found += 1
        sample = trace_row(trace_id, spans, tally)
        if sample is not None:
            yield spans[0].where, sample


def trace_row(trace_id: str, spans: List[Span], tally: Tally) -> Optional[Dict[str, Any]]:
    """The sample row of one trace, or None (with a named skip in the tally) when it has no question or answer."""
    spans = sorted(spans, key=lambda s: s.start)
    roots = [s for s in spans if not s.parent_id]
    if not roots:
        tally.skip(f"trace {trace_id}", "no root span (every span names a parent): the export may be cut short")
        return None
    root = roots[0]
    question, answer = _question(root, spans), _answer(root, spans)
    if not question:
        tally.skip(f"trace {trace_id}", f"the root span '{root.name}' has no input.value (no question)")
        return None
    if answer is None:
        tally.skip(f"trace {trace_id}", f"the root span '{root.name}' has no output.value (no answer)")
        return None
    row: Dict[str, Any] = {"sample_id": trace_id, "question": question, "answer": answer}
    docs, source = seen_documents(spans)
    row["contexts"] = [str(d.get("document.content", "")) for d in docs if d.get("document.content")]
    tally.count("with retrieval", 1 if row["contexts"] else 0)
    if row["contexts"]:
        row["contexts_from"] = source
        if not source.startswith("retriever"):  # the documents the model saw were not the retriever's list
            tally.count(f"with contexts from the {source.split(' ', 1)[0]} span")
    row.update(_doc_metadata(docs))
    calls = tool_calls(spans)
    if calls:
        row["tool_calls"] = calls
        tally.count("with tool calls")
    row["trace_name"] = root.name
    for key in ("session.id", "user.id"):
        if root.attrs.get(key):
            row[key.replace(".", "_")] = root.attrs[key]
    return row


def seen_documents(spans: List[Span]) -> Tuple[List[Dict[str, Any]], str]:
    """The documents the model saw, and the span they came from: an LLM span's own input documents, else
    the last RERANKER's output (reranked: the order and cut the model got), else every RETRIEVER's."""
    for span in reversed([s for s in spans if s.kind == "LLM"]):
        docs = indexed(span.attrs, "retrieval.documents")
        if docs:
            return docs, f"LLM span '{span.name}' input documents"
    for span in reversed([s for s in spans if s.kind == "RERANKER"]):
        docs = indexed(span.attrs, "reranker.output_documents")
        if docs:
            return docs, f"reranker span '{span.name}' output documents"
    retrievers = [s for s in spans if s.kind == "RETRIEVER"]
    docs = [d for s in retrievers for d in indexed(s.attrs, "retrieval.documents")]
    return docs, "retriever span " + ", ".join(f"'{s.name}'" for s in retrievers) if retrievers else ""


def _doc_metadata(docs: List[Dict[str, Any]]) -> Dict[str, Any]:
    out = {}
    for key, column in (("document.score", "retrieval_scores"), ("document.id", "retrieval_ids")):
        values = [d.get(key) for d in docs if d.get("document.content")]
        if any(v is not None for v in values):
            out[column] = values
    return out


def _question(root: Span, spans: List[Span]) -> str:
    value = root.attrs.get("input.value")
    if value is not None:
        return _text(json_value(value), QUESTION_KEYS, "user")
    for span in _genai_order(root, spans):
        text = _genai_text(span.attrs, "gen_ai.input.messages", "gen_ai.prompt", "user")
        if text:
            return text
    return ""


def _answer(root: Span, spans: List[Span]) -> Optional[str]:
    value = root.attrs.get("output.value")
    if value is not None:
        return _text(json_value(value), ANSWER_KEYS, "assistant")
    for span in reversed(_genai_order(root, spans)):
        text = _genai_text(span.attrs, "gen_ai.output.messages", "gen_ai.completion", "assistant")
        if text:
            return text
    return None


def _genai_order(root: Span, spans: List[Span]) -> List[Span]:
    """The root, then the model calls, for traces written to the GenAI conventions."""
    return [root] + [s for s in spans if s is not root and s.kind == "LLM"]


def _genai_text(attrs: Dict[str, Any], messages_key: str, indexed_key: str, role: str) -> str:
    messages = json_value(attrs.get(messages_key)) if attrs.get(messages_key) is not None else indexed(attrs, indexed_key)
    if isinstance(messages, dict):
        messages = [messages]
    if isinstance(messages, str):
        return messages.strip()
    return _last_message(messages if isinstance(messages, list) else [], role)


def json_value(value: Any) -> Any:
    """A JSON-encoded attribute value decoded; plain text stays text."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "[", '"'):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _text(value: Any, keys: Tuple[str, ...], role: str) -> str:
    """The text in a decoded input/output value: itself, a known key, or a message list's last `role` message."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict):
        for key in keys:
            if isinstance(value.get(key), str):
                return str(value[key]).strip()
        if isinstance(value.get("messages"), list):
            return _last_message(value["messages"], role) or json.dumps(value, ensure_ascii=False)
        choices = value.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            return _message_text(choices[0].get("message") or {})
    if isinstance(value, list):
        found = _last_message(value, role)
        if found:
            return found
    return "" if value is None else json.dumps(value, ensure_ascii=False, default=str)


def _last_message(messages: List[Any], role: str) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and (message.get("role") or message.get("message.role")) == role:
            return _message_text(message)
    return ""


def _message_text(message: Dict[str, Any]) -> str:
    """A chat message's text: content (text or parts), OpenInference message.content, GenAI parts."""
    content = message.get("content", message.get("message.content"))
    if isinstance(content, str):
        return content.strip()
    parts = content if isinstance(content, list) else message.get("parts") or []
    texts = [p.get("content") or p.get("text") for p in parts if isinstance(p, dict)]
    return "\n".join(t for t in texts if isinstance(t, str)).strip()


# --- tool calls --------------------------------------------------------------------------------------

def tool_calls(spans: List[Span]) -> List[Dict[str, Any]]:
    """The tools run (TOOL spans) and those an LLM asked for without a TOOL span running them, in order."""
    ran = [_tool_span_call(s) for s in spans if s.kind == "TOOL"]
    names = [c["name"] for c in ran]
    asked = []
    for span in spans:
        if span.kind != "LLM":
            continue
        for call in _llm_tool_calls(span.attrs):
            if call["name"] in names:
                names.remove(call["name"])  # this request is the TOOL span already listed
            else:
                asked.append(call)
    return ran + asked


def _tool_span_call(span: Span) -> Dict[str, Any]:
    attrs = span.attrs
    name = attrs.get("tool.name") or attrs.get("gen_ai.tool.name") or span.name
    arguments = attrs.get("input.value", attrs.get("gen_ai.tool.call.arguments", attrs.get("tool.parameters")))
    output = attrs.get("output.value", attrs.get("gen_ai.tool.call.result"))
    return {"name": str(name), "arguments": json_value(arguments) if arguments is not None else {},
            "output": json_value(output) if output is not None else None}


def _llm_tool_calls(attrs: Dict[str, Any]) -> List[Dict[str, Any]]:
    calls = []
    for message in indexed(attrs, "llm.output_messages"):
        for i in range(64):
            name = message.get(f"message.tool_calls.{i}.tool_call.function.name")
            if name is None:
                break
            arguments = message.get(f"message.tool_calls.{i}.tool_call.function.arguments")
            calls.append({"name": str(name), "arguments": json_value(arguments) if arguments is not None else {}})
    return calls
