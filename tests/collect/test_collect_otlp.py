"""OTLP request bodies -> spans -> finished traces -> samples (protobuf and JSON, gzip, bombs, bounds)."""
import gzip
import json
import zlib

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span as ProtoSpan

from evaluator.collect.otlp import (
    BodyError,
    BodyTooLarge,
    TraceBuffer,
    decode,
    decompress,
    to_sample,
    trace_attributes,
)

TRACE = "5b8efff798038103d269b633813fc60c"


def _kv(key, value):
    if isinstance(value, float):
        return KeyValue(key=key, value=AnyValue(double_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=value))


def proto_body(spans, version="2.1.0"):
    """An ExportTraceServiceRequest of (span_id, parent_id, attributes) spans of one trace."""
    message = ExportTraceServiceRequest(resource_spans=[ResourceSpans(
        resource={"attributes": [_kv("service.name", "desk"), _kv("service.version", version)]},
        scope_spans=[ScopeSpans(spans=[
            ProtoSpan(trace_id=bytes.fromhex(TRACE), span_id=bytes.fromhex(sid), name=name,
                      parent_span_id=bytes.fromhex(parent) if parent else b"", start_time_unix_nano=1_000 + n,
                      end_time_unix_nano=1_796_000_000_000_000_000 + n,
                      attributes=[_kv(k, v) for k, v in attrs.items()])
            for n, (sid, parent, name, attrs) in enumerate(spans)])])])
    return message.SerializeToString()


ROOT = ("eee19b7ec3c1b174", "", "ask", {"openinference.span.kind": "CHAIN", "input.value": "Where is the pump?",
                                        "output.value": "Behind the counter.", "metadata": '{"env": "prod"}'})
RETRIEVER = ("eee19b7ec3c1b175", "eee19b7ec3c1b174", "search", {
    "openinference.span.kind": "RETRIEVER", "retrieval.documents.0.document.content": "The pump hangs behind the counter.",
    "retrieval.documents.0.document.id": "d7", "retrieval.documents.0.document.score": 0.8})


def json_body(spans):
    return json.dumps({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.version", "value": {"stringValue": "2.1.0"}}]},
        "scopeSpans": [{"spans": [
            {"traceId": TRACE, "spanId": sid, "parentSpanId": parent, "name": name, "endTimeUnixNano": "1796000000000000000",
             "attributes": [{"key": k, "value": {"doubleValue": v} if isinstance(v, float) else {"stringValue": v}}
                            for k, v in attrs.items()]}
            for sid, parent, name, attrs in spans]}]}]}).encode()


@pytest.mark.parametrize("body, content_type", [(proto_body([ROOT, RETRIEVER]), "application/x-protobuf"),
                                                (json_body([ROOT, RETRIEVER]), "application/json")])
def test_protobuf_and_json_bodies_give_the_same_sample(body, content_type):
    buffer = TraceBuffer()
    rooted, _ = buffer.add(decode(gzip.compress(body), content_type, "gzip"))
    assert [t.trace_id for t in rooted] == [TRACE]
    sample, why = to_sample(rooted[0], {"metadata.env": "prod"})
    assert why == "" and sample is not None
    assert (sample.question, sample.answer, sample.contexts) == (
        "Where is the pump?", "Behind the counter.", ["The pump hangs behind the counter."])
    assert sample.sample_id == TRACE and sample.retrieval_ids == ["d7"]
    assert sample.metadata["trace_id"] == TRACE and sample.metadata["service_version"] == "2.1.0"
    assert sample.metadata["trace_end"].startswith("2026-11-30T") and sample.metadata["metadata.env"] == "prod"


def test_rules_read_the_json_metadata_attribute_and_the_resource():
    buffer = TraceBuffer()
    rooted, _ = buffer.add(decode(proto_body([ROOT, RETRIEVER]), "application/x-protobuf"))
    attrs = trace_attributes(rooted[0])
    assert attrs["metadata.env"] == "prod" and attrs["service.version"] == "2.1.0"
    assert attrs["openinference.span.kind"] == "CHAIN"  # the root's value wins over its children's


def test_a_gzip_bomb_stops_at_the_cap():
    bomb = gzip.compress(b"\0" * (8 << 20))  # 8 MiB of zeros in about 8 KiB
    assert len(bomb) < 64 << 10
    with pytest.raises(BodyTooLarge, match="decompresses to more than 1,048,576 bytes"):
        decompress(bomb, "gzip", 1 << 20)
    assert len(decompress(zlib.compress(b"x" * 1000), "deflate", 1000)) == 1000


@pytest.mark.parametrize("body, content_type, encoding, message", [
    (b"not gzip", "application/x-protobuf", "gzip", "not valid gzip"),
    (b"{", "application/json", "", "cannot be parsed"),
    (b"[1]", "application/json", "", "must be an object"),
    (b"\xff\xff\xff", "application/x-protobuf", "", "not an ExportTraceServiceRequest"),
    (b"x", "text/csv", "", "send application/x-protobuf or application/json"),
    (b"x", "application/json", "br", "send gzip, deflate or none"),
])
def test_a_body_that_cannot_be_read_says_why(body, content_type, encoding, message):
    with pytest.raises(BodyError, match=message):
        decode(body, content_type, encoding)


def test_a_trace_finishes_when_its_root_arrives_and_late_children_join_it():
    now = [0.0]
    buffer = TraceBuffer(settle=2.0, clock=lambda: now[0])
    rooted, grown = buffer.add(decode(proto_body([RETRIEVER]), "application/x-protobuf"))
    assert rooted == [] and grown == [] and buffer.unfinished() == 1
    rooted, _ = buffer.add(decode(proto_body([ROOT]), "application/x-protobuf"))
    assert len(rooted[0].spans) == 2  # the child that came first is in
    rooted[0].state = "stored"
    late = ("eee19b7ec3c1b176", "eee19b7ec3c1b174", "llm", {"openinference.span.kind": "LLM"})
    _, grown = buffer.add(decode(proto_body([late]), "application/x-protobuf"))
    assert [len(t.spans) for t in grown] == [3]
    _, again = buffer.add(decode(proto_body([late]), "application/x-protobuf"))  # a retried export: nothing new
    assert again == []
    now[0] = 2.5
    assert [t.trace_id for t in buffer.expire()] == [TRACE] and len(buffer) == 0


def test_open_traces_are_bounded_the_oldest_dropped_and_counted():
    buffer = TraceBuffer(max_open=3)
    for n in range(5):
        child = ("aaaaaaaaaaaaaaa" + str(n), "eee19b7ec3c1b174", "c", {})
        spans = decode(proto_body([child]), "application/x-protobuf")
        for s in spans:
            s.span.trace_id = f"{n:032x}"
        buffer.add(spans)
    assert len(buffer) == 3 and buffer.dropped["open_traces_over_cap"] == 2


def test_a_trace_without_an_answer_is_not_a_sample_and_says_why():
    no_answer = (ROOT[0], "", "ask", {"input.value": "Where is the pump?"})
    rooted, _ = TraceBuffer().add(decode(proto_body([no_answer]), "application/x-protobuf"))
    sample, why = to_sample(rooted[0])
    assert sample is None and "no output.value" in why
