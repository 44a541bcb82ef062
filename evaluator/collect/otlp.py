"""OTLP/HTTP trace exports in: request bodies -> spans -> finished traces -> samples.

    spans = decode(body, content_type="application/x-protobuf", encoding="gzip", max_bytes=cap)
    buffer = TraceBuffer(max_open=10_000, settle=2.0)
    for trace in buffer.add(spans): ...        # traces whose root span arrived in this request
    sample, why_not = to_sample(trace)

A body is an ExportTraceServiceRequest, protobuf (the `opentelemetry-proto` package) or OTLP/JSON,
gzip- or deflate-compressed or not. Decompression stops at `max_bytes` of output, so a small gzip
bomb fails with BodyTooLarge instead of filling memory. Both forms become the OTLP/JSON shape the
trace readers already know (io/traces.py), with each span's end time and its resource attributes.

Before any span becomes a Python object the body is counted where it lies (collect/wire.py): spans,
attribute values and nesting depth, refused past `Caps` (413 for too many, 400 for too deep), so a few
kilobytes of protobuf cannot become gigabytes of dicts.

A trace is finished when its root span (no parent) has arrived. It then stays open for `settle`
seconds so that late children (a child exported in a later batch than its root) join it. Open traces
are bounded three ways, the oldest dropped first and each drop counted under its reason: at most
`max_open` traces, at most `max_bytes` of estimated span size, and none older than `max_age` seconds
(children whose root never comes are forgotten, not kept); at most MAX_SPANS spans each.
"""
from __future__ import annotations

import base64
import json
import time
import zlib
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from ..errors import MissingExtra, RagmeterError
from ..io.readings import Tally
from ..io.sources import Where
from ..io.traces import Span, any_value, flatten, json_value, spans_of, trace_row
from ..model import EvalSample
from .wire import Caps, check_json, check_protobuf

MAX_SPANS = 2_000  # spans kept per trace; a runaway agent loop's trace is cut here, counted
PROTOBUF, JSON = "application/x-protobuf", "application/json"
_WHERE = Where("OTLP request")


class BodyError(RagmeterError):
    """A request body that cannot be read (the receiver answers 400 with this message)."""


class BodyTooLarge(BodyError):
    """A body larger than the cap, before or after decompression (answered 413)."""


@dataclass
class Received:
    """One span as it arrived: the reader's Span, its end time and its resource's attributes."""

    span: Span
    end_ns: int
    resource: Dict[str, Any]

    @property
    def size(self) -> int:
        """Estimated bytes this span holds in memory (what the open-trace budget counts)."""
        return SPAN_OVERHEAD + len(self.span.name) + len(self.span.span_id) + _size(self.span.attrs)


# A Span, its Received and their dicts: with this, tracemalloc finds 0.8-0.9 of the estimate held for
# spans with and without attribute text, so the budget errs on the safe side.
SPAN_OVERHEAD = 1_200


def _size(value: Any, depth: int = 0) -> int:
    """Rough bytes of a decoded attribute value: text by its length, containers by their items."""
    if isinstance(value, (str, bytes)):
        return 50 + len(value)
    if depth < 40 and isinstance(value, dict):
        return 100 + sum(_size(k, depth + 1) + _size(v, depth + 1) for k, v in value.items())
    if depth < 40 and isinstance(value, (list, tuple)):
        return 60 + sum(_size(v, depth + 1) for v in value)
    return 32


# --- bodies -----------------------------------------------------------------------------------------

def decompress(body: bytes, encoding: str, max_bytes: int) -> bytes:
    """The body decoded from its Content-Encoding (gzip, deflate or none), never more than `max_bytes`."""
    encoding = (encoding or "identity").strip().lower()
    if encoding in ("", "identity", "none"):
        return body
    if encoding not in ("gzip", "deflate"):
        raise BodyError(f"Content-Encoding {encoding!r} is not supported: send gzip, deflate or none")
    inflater = zlib.decompressobj(wbits=31 if encoding == "gzip" else 15)
    try:
        out = inflater.decompress(body, max_bytes + 1)  # one byte past the cap tells "too large"
    except zlib.error as exc:
        raise BodyError(f"the body is not valid {encoding} data ({exc})") from None
    if len(out) > max_bytes or inflater.unconsumed_tail:
        raise BodyTooLarge(f"the body decompresses to more than {max_bytes:,} bytes (the receiver's cap)")
    return out


def decode(body: bytes, content_type: str, encoding: str = "", max_bytes: int = 16 << 20,
           caps: Caps = Caps()) -> List[Received]:
    """The spans of one export request; BodyError (400) or BodyTooLarge (413) when it cannot be read.

    The decompressed body is counted before it is parsed (spans, values, depth: `caps`), so a request
    past a cap is refused having built no span object at all."""
    raw = decompress(body, encoding, max_bytes)
    kind = (content_type or PROTOBUF).split(";", 1)[0].strip().lower()
    if kind == JSON:
        check_json(raw, caps, BodyError, BodyTooLarge)
        try:
            request = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise BodyError(f"the JSON body cannot be parsed: {exc}") from None
        if not isinstance(request, dict):
            raise BodyError("the JSON body must be an object with resourceSpans (OTLP/JSON)")
        return _capped(received(request, _json_id), caps)
    if kind not in (PROTOBUF, "application/protobuf", "application/octet-stream"):
        raise BodyError(f"Content-Type {kind!r}: send application/x-protobuf or application/json")
    check_protobuf(raw, caps, BodyError, BodyTooLarge)
    return _capped(received(proto_request(raw), _hex_id), caps)


def _capped(spans: Iterable[Received], caps: Caps) -> List[Received]:
    """The spans, refused (413) past the cap while they are built (a second guard behind the count)."""
    out: List[Received] = []
    for item in spans:
        if len(out) >= caps.max_spans:
            raise BodyTooLarge(f"the request holds more than {caps.max_spans:,} spans (the receiver's cap); "
                               "send smaller batches")
        out.append(item)
    return out


def proto_request(raw: bytes) -> Dict[str, Any]:
    """A protobuf ExportTraceServiceRequest in the OTLP/JSON shape (ids as bytes until `received`)."""
    try:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
        from google.protobuf.message import DecodeError
    except ImportError as exc:
        raise MissingExtra("protobuf trace exports need pip install 'ragmeter[collect]' "
                           f"(opentelemetry-proto is missing: {exc})") from None
    try:
        message = ExportTraceServiceRequest.FromString(raw)
    except DecodeError as exc:
        raise BodyError(f"the protobuf body is not an ExportTraceServiceRequest ({exc})") from None
    return {"resourceSpans": [{"resource": {"attributes": [_proto_kv(kv) for kv in rs.resource.attributes]},
                               "scopeSpans": [{"spans": [_proto_span(s) for s in ss.spans]}
                                              for ss in rs.scope_spans]}
                              for rs in message.resource_spans]}


def _proto_span(span: Any) -> Dict[str, Any]:
    return {"traceId": span.trace_id, "spanId": span.span_id, "parentSpanId": span.parent_span_id,
            "name": span.name, "startTimeUnixNano": str(span.start_time_unix_nano),
            "endTimeUnixNano": str(span.end_time_unix_nano),
            "attributes": [_proto_kv(kv) for kv in span.attributes]}


def _proto_kv(kv: Any) -> Dict[str, Any]:
    return {"key": kv.key, "value": _proto_value(kv.value)}


def _proto_value(value: Any) -> Dict[str, Any]:
    """A protobuf AnyValue as its OTLP/JSON form ({"stringValue": ...}), which io/traces.any_value reads."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return {"arrayValue": {"values": [_proto_value(v) for v in value.array_value.values]}}
    if kind == "kvlist_value":
        return {"kvlistValue": {"values": [_proto_kv(kv) for kv in value.kvlist_value.values]}}
    if kind is None:
        return {}
    camel = {"string_value": "stringValue", "bool_value": "boolValue", "int_value": "intValue",
             "double_value": "doubleValue", "bytes_value": "bytesValue"}[kind]
    inner = getattr(value, kind)
    return {camel: base64.b64encode(inner).decode() if kind == "bytes_value" else inner}


def _hex_id(value: Any) -> str:
    return value.hex() if isinstance(value, bytes) else str(value or "")


def _json_id(value: Any) -> str:
    """OTLP/JSON ids are hex; some senders write protobuf's JSON mapping (base64): both read as hex."""
    text = str(value or "")
    if len(text) in (16, 32) and all(c in "0123456789abcdefABCDEF" for c in text):
        return text.lower()
    try:
        return base64.b64decode(text, validate=True).hex() if text else ""
    except ValueError:
        return text


def received(request: Dict[str, Any], ids: Callable[[Any], str]) -> Iterable[Received]:
    """Every span of an OTLP/JSON-shaped request, with its resource's attributes and end time."""
    for rs in request.get("resourceSpans") or []:
        if not isinstance(rs, dict):
            raise BodyError("resourceSpans must hold objects (OTLP/JSON)")
        resource = flatten({kv.get("key", ""): any_value(kv.get("value"))
                            for kv in ((rs.get("resource") or {}).get("attributes") or [])})
        for scope in rs.get("scopeSpans") or []:
            for raw in (scope or {}).get("spans") or []:
                fixed = dict(raw, traceId=ids(raw.get("traceId")), spanId=ids(raw.get("spanId")),
                             parentSpanId=ids(raw.get("parentSpanId")))
                span = next(iter(spans_of({"scopeSpans": [{"spans": [fixed]}]}, _WHERE)))
                yield Received(span, _int(raw.get("endTimeUnixNano")), resource)


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


# --- traces -----------------------------------------------------------------------------------------

@dataclass
class Trace:
    """The spans of one trace so far; `root` once its root span has arrived."""

    trace_id: str
    spans: List[Received] = field(default_factory=list)
    root: Optional[Received] = None
    rooted_at: Optional[float] = None  # the buffer clock's time the root arrived
    span_ids: set = field(default_factory=set)
    opened_at: float = 0.0  # the buffer clock's time its first span arrived
    bytes: int = 0  # estimated size of its spans (Received.size)
    state: Any = None  # the receiver's note once the trace is handled (stored where, or why not)

    @property
    def resource(self) -> Dict[str, Any]:
        return (self.root or self.spans[0]).resource if self.spans else {}


class TraceBuffer:
    """Open traces, bounded in number, in bytes and in time: the oldest dropped first (counted in `dropped`).

    `max_bytes` caps the estimated size of every span held (Received.size); `max_age` forgets a trace
    that long after its first span arrived, whether or not its root came. Not thread-safe on its own:
    the receiver calls it under its lock.
    """

    def __init__(self, max_open: int = 10_000, settle: float = 2.0, clock: Callable[[], float] = time.monotonic,
                 *, max_bytes: int = 64 << 20, max_age: float = 120.0):
        self.max_open, self.settle, self._clock = max_open, settle, clock
        self.max_bytes, self.max_age = max_bytes, max_age
        self._open: "OrderedDict[str, Trace]" = OrderedDict()  # oldest first: by first span's arrival
        self.bytes = 0
        self.dropped: Counter = Counter()

    def __len__(self) -> int:
        return len(self._open)

    def add(self, spans: Iterable[Received]) -> Tuple[List[Trace], List[Trace]]:
        """Add a request's spans: (traces whose root arrived now, handled traces that got late children)."""
        self.expire()
        rooted: Dict[str, Trace] = {}
        grown: Dict[str, Trace] = {}
        for item in spans:
            trace = self._trace(item.span.trace_id)
            if trace is None or item.span.span_id in trace.span_ids:
                continue  # no trace id, or a span sent again (a retried export)
            if len(trace.spans) >= MAX_SPANS:
                self.dropped["spans_over_cap"] += 1
                continue
            size = item.size
            if size > self.max_bytes:
                self.dropped["span_over_budget"] += 1
                continue
            self._make_room(size, keep=trace.trace_id)
            trace.spans.append(item)
            trace.span_ids.add(item.span.span_id)
            trace.bytes += size
            self.bytes += size
            if not item.span.parent_id and trace.root is None:
                trace.root, trace.rooted_at = item, self._clock()
                rooted[trace.trace_id] = trace
            elif trace.state is not None:
                grown[trace.trace_id] = trace
        return list(rooted.values()), [t for k, t in grown.items() if k not in rooted]

    def _trace(self, trace_id: str) -> Optional[Trace]:
        if not trace_id:
            self.dropped["no_trace_id"] += 1
            return None
        trace = self._open.get(trace_id)
        if trace is None:
            while len(self._open) >= self.max_open:
                self._evict("over_cap")
            trace = self._open[trace_id] = Trace(trace_id, opened_at=self._clock())
        return trace

    def _make_room(self, size: int, keep: str) -> None:
        """Evict the oldest traces (never `keep`, the one growing) until `size` more bytes fit."""
        while self.bytes + size > self.max_bytes and self._open:
            oldest = next(iter(self._open))
            if oldest == keep:
                if len(self._open) == 1:
                    return  # the only trace: the check on one span's size already bounds it
                self._open.move_to_end(keep)
                continue
            self._evict("over_budget")

    def _evict(self, why: str) -> None:
        _, old = self._open.popitem(last=False)
        self.bytes -= old.bytes
        self.dropped[("open_traces_" if old.root is None else "settling_") + why] += 1

    def _pop(self, trace_id: str) -> Optional[Trace]:
        trace = self._open.pop(trace_id, None)
        if trace is not None:
            self.bytes -= trace.bytes
        return trace

    def expire(self) -> List[Trace]:
        """Forget traces settled longer than `settle` (their late children are too late), and traces
        opened longer than `max_age` ago (a root that never came: counted as open_traces_expired)."""
        now, gone = self._clock(), []
        for trace_id, trace in list(self._open.items()):
            if trace.rooted_at is not None and now - trace.rooted_at >= self.settle:
                gone.append(self._pop(trace_id))
            elif now - trace.opened_at >= self.max_age:
                self._pop(trace_id)
                self.dropped["open_traces_expired" if trace.root is None else "settling_expired"] += 1
        return [t for t in gone if t is not None]

    def forget(self, trace_ids: Iterable[str]) -> None:
        """Drop traces whose storing failed, so that the sender's retry adds them anew."""
        for trace_id in trace_ids:
            self._pop(trace_id)

    def unfinished(self) -> int:
        """Traces still waiting for their root span."""
        return sum(1 for t in self._open.values() if t.root is None)

    def usage(self) -> Dict[str, Any]:
        """What /status and the Monitor page show of the buffer: traces, bytes and the oldest's age."""
        oldest = next(iter(self._open.values()), None)
        return {"traces": len(self._open), "waiting_for_root": self.unfinished(),
                "bytes": self.bytes, "max_bytes": self.max_bytes, "max_age_s": self.max_age,
                "oldest_age_s": round(self._clock() - oldest.opened_at, 1) if oldest else 0.0}


# --- one trace -> one sample ---------------------------------------------------------------------------

def trace_attributes(trace: Trace) -> Dict[str, Any]:
    """What sampling rules read: the resource's attributes, overridden by other spans', then the root's;
    a JSON `metadata` attribute (OpenInference) also read as `metadata.<key>`."""
    attrs: Dict[str, Any] = dict(trace.resource)
    ordered = [s for s in trace.spans if s is not trace.root] + ([trace.root] if trace.root else [])
    for item in ordered:
        for key, value in item.span.attrs.items():
            attrs[key] = value
            if key == "metadata" and isinstance(json_value(value), dict):
                attrs.update(flatten(json_value(value), "metadata"))
    return attrs


def trace_end(trace: Trace) -> str:
    """The root span's end as ISO UTC (the latest span end when the root has none)."""
    ns = (trace.root.end_ns if trace.root else 0) or max((s.end_ns for s in trace.spans), default=0)
    when = datetime.fromtimestamp(ns / 1e9, timezone.utc) if ns else datetime.now(timezone.utc)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def to_sample(trace: Trace, used: Optional[Dict[str, Any]] = None) -> Tuple[Optional[EvalSample], str]:
    """The sample of a finished trace, or (None, why) when it has no question or answer."""
    tally = Tally("traces")
    row = trace_row(trace.trace_id, [s.span for s in trace.spans], tally)
    if row is None:
        return None, tally.skipped[0][1] if tally.skipped else "the trace could not be read"
    metadata: Dict[str, Any] = {"trace_id": trace.trace_id, "trace_end": trace_end(trace),
                                "trace_name": row.get("trace_name", "")}
    version = trace.resource.get("service.version")
    if version is not None:
        metadata["service_version"] = str(version)
    for key in ("session_id", "user_id", "contexts_from", "retrieval_scores"):
        if row.get(key) is not None:
            metadata[key] = row[key]
    metadata.update(used or {})
    ids = row.get("retrieval_ids")
    return EvalSample(question=row["question"], answer=row["answer"], contexts=list(row.get("contexts") or []),
                      sample_id=trace.trace_id, metadata=metadata, tool_calls=list(row.get("tool_calls") or []),
                      retrieval_ids=[str(i) if i is not None else "" for i in ids] if ids else None), ""
