"""Issue 42's attacks on the receiver, each through the real HTTP server on 127.0.0.1: orphan children
that never get a root, protobuf amplification, deep nesting, slow request heads, oversized bodies and
senders that vanish. What a sender gets is asserted, and what /status says."""
import gzip
import http.client
import json
import logging
import os
import socket
import threading
import time

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue, KeyValueList
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from evaluator.collect.server import Limits
from test_collect_receiver import TOKEN, request, start_collector, status

AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/x-protobuf"}


def orphans(n_traces: int, spans_each: int = 20, text: int = 200) -> bytes:
    """Child spans (a parent that never arrives) of `n_traces` new traces, `text` bytes of attribute each."""
    spans = [Span(trace_id=trace_id, span_id=os.urandom(8), parent_span_id=os.urandom(8), name="child",
                  attributes=[KeyValue(key="output.value", value=AnyValue(string_value="x" * text))])
             for trace_id in [os.urandom(16) for _ in range(n_traces)] for _ in range(spans_each)]
    return ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])]
                                     ).SerializeToString()


def empty_spans(n: int) -> bytes:
    """An ExportTraceServiceRequest of `n` empty spans, written by hand: two bytes each on the wire."""
    scope = b"\x12\x00" * n
    rs = b"\x12" + _varint(len(scope)) + scope
    return b"\x0a" + _varint(len(rs)) + rs


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def post(port, body, headers=AUTH):
    return request(port, "POST", "/v1/traces", body, headers)


@pytest.fixture
def small(history):
    c = start_collector(history, limits=Limits(settle=0.2, max_traces_per_second=10_000,
                                               max_open_bytes=2 << 20, max_open_age=1.0))
    yield c
    c.stop()


def test_children_without_a_root_stay_within_the_byte_budget_and_expire_by_age(small):
    for _ in range(10):  # 10 x 100 traces x 20 spans of 200 bytes: about 5 MB estimated, twice the budget
        code, _, _ = post(small.port, gzip.compress(orphans(100)), dict(AUTH, **{"Content-Encoding": "gzip"}))
        assert code == 200
        buffer = status(small.port)["buffer"]
        assert buffer["bytes"] <= buffer["max_bytes"] == 2 << 20
    s = status(small.port)
    assert s["dropped"]["open_traces_over_budget"] > 0 and s["buffer"]["waiting_for_root"] > 0
    time.sleep(2.0)  # no request arrives: the server's own sweep expires them
    s = status(small.port)
    assert s["buffer"]["traces"] == 0 and s["buffer"]["bytes"] == 0
    assert s["dropped"]["open_traces_expired"] > 0
    assert s["dropped"]["open_traces_expired"] + s["dropped"]["open_traces_over_budget"] == 1000


def test_two_million_empty_spans_are_refused_413_before_any_is_decoded(small):
    body = gzip.compress(empty_spans(2_000_000))
    assert len(body) < 16 << 10  # a few kilobytes on the wire
    code, reply, _ = post(small.port, body, dict(AUTH, **{"Content-Encoding": "gzip"}))
    assert code == 413 and b"more than 20,000 spans" in reply
    assert status(small.port)["dropped"] == {"too_large": 1}


def test_many_empty_attribute_values_are_refused_413(small):
    values = KeyValueList(values=[KeyValue() for _ in range(500_000)])
    span = Span(trace_id=os.urandom(16), span_id=os.urandom(8),
                attributes=[KeyValue(key="k", value=AnyValue(kvlist_value=values))])
    body = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[span])])])
    code, reply, _ = post(small.port, body.SerializeToString())
    assert code == 413 and b"attribute values" in reply


def _nested_json(depth: int) -> bytes:
    value = {"stringValue": "x"}
    for _ in range(depth):
        value = {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "root", "attributes": [{"key": "a", "value": value}]}
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()


def _nested_proto(depth: int) -> bytes:
    value = AnyValue(string_value="x")
    for _ in range(depth):
        value = AnyValue(kvlist_value=KeyValueList(values=[KeyValue(key="k", value=value)]))
    span = Span(trace_id=os.urandom(16), span_id=os.urandom(8), attributes=[KeyValue(key="a", value=value)])
    message = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[span])])])
    return message.SerializeToString()


def test_deep_nesting_gets_400_and_no_traceback(small, caplog):
    deep_json = b'{"resourceSpans": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    caplog.set_level(logging.DEBUG)
    code, reply, _ = post(small.port, deep_json, dict(AUTH, **{"Content-Type": "application/json"}))
    assert code == 400 and b"nests deeper than 64 levels" in reply
    code, reply, _ = post(small.port, _nested_json(40), dict(AUTH, **{"Content-Type": "application/json"}))
    assert code == 400 and b"nests deeper" in reply
    code, reply, _ = post(small.port, _nested_proto(25))  # 3 messages a level: 79 deep
    assert code == 400 and b"nests deeper" in reply
    code, _, _ = post(small.port, _nested_json(5), dict(AUTH, **{"Content-Type": "application/json"}))
    assert code == 200  # an ordinary nested attribute passes
    assert not [r for r in caplog.records if r.exc_info] and "Traceback" not in caplog.text


def _trickle(port: int, stop: threading.Event, socks: list) -> None:
    sock = socket.create_connection(("127.0.0.1", port))
    socks.append(sock)
    try:
        for byte in b"POST /v1/traces HTTP/1.1\r\nHost: x\r\n":
            if stop.wait(0.5):
                return
            sock.sendall(bytes([byte]))
    except OSError:
        return


def test_slow_request_heads_from_many_sockets_lock_no_sender_out(history, caplog):
    caplog.set_level(logging.INFO)
    c = start_collector(history, limits=Limits(settle=0.2, max_connections=8, max_pending_per_address=16,
                                               header_timeout=3.0))
    stop, socks = threading.Event(), []
    threads = [threading.Thread(target=_trickle, args=(c.port, stop, socks)) for _ in range(70)]
    try:
        for t in threads:
            t.start()
        time.sleep(1.0)
        answers = [post(c.port, b"")[0] for _ in range(10)]  # an empty export is a valid one
        assert answers == [200] * 10
        s = status(c.port)
        assert s["connections"]["pending"] <= 16 and s["dropped"]["pending_evicted"] > 0  # the oldest made room
        end = time.monotonic() + 3.0 + 5.0  # the head deadline, and room for a loaded machine
        while status(c.port)["connections"]["pending"] and time.monotonic() < end:
            time.sleep(0.2)  # every trickling socket is closed at its deadline, whatever it still sends
        assert status(c.port)["connections"]["pending"] == 0 and any(not t.is_alive() for t in threads)
    finally:
        stop.set()
        for t in threads:
            t.join()
        for sock in socks:
            sock.close()
        c.stop()
    assert "Traceback" not in caplog.text and not [r for r in caplog.records if r.exc_info]


def test_a_sender_without_the_token_holds_no_slot(history):
    c = start_collector(history, limits=Limits(settle=0.2, max_connections=1))
    try:
        for _ in range(3):
            code, _, headers = post(c.port, b"", {"Content-Type": "application/x-protobuf"})
            assert code == 401 and headers["Connection"] == "close"
        assert post(c.port, b"")[0] == 200
    finally:
        c.stop()


def test_an_oversized_body_is_answered_413_every_time_not_reset(history):
    c = start_collector(history, limits=Limits(settle=0.2, max_request_bytes=1 << 20))
    try:
        body = os.urandom(2 << 20)
        for _ in range(5):
            conn = http.client.HTTPConnection("127.0.0.1", c.port, timeout=10)
            conn.request("POST", "/v1/traces", body=body, headers=AUTH)
            response = conn.getresponse()
            assert response.status == 413 and response.getheader("Connection") == "close"
            assert b"the cap is 1,048,576" in response.read()
            conn.close()
    finally:
        c.stop()


def test_a_sender_vanishing_mid_body_is_one_log_line(history, caplog):
    caplog.set_level(logging.INFO, logger="ragmeter.collect")
    c = start_collector(history, limits=Limits(settle=0.2))
    try:
        for _ in range(5):
            sock = socket.create_connection(("127.0.0.1", c.port))
            sock.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode()
                         + b"\r\nContent-Length: 100000\r\n\r\n" + b"x" * 1000)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            sock.close()  # a reset, mid-body
        time.sleep(0.5)
        assert post(c.port, b"")[0] == 200
    finally:
        c.stop()
    assert "Traceback" not in caplog.text and not [r for r in caplog.records if r.exc_info]
