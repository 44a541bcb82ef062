"""Issue 42: the open-trace budget and the receiver's drops are counted on GET /status and on the Monitor
page. A real `ragmeter collect` child started beside the dashboard (its token in the environment), orphan
child spans sent to it over HTTP, the page drawn by Streamlit's AppTest."""
import os

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from streamlit.testing.v1 import AppTest

from apptest import APP, no_exception
from evaluator import service
from evaluator.collect import beside
from ports import free_port
from test_collect_beside import TOKEN, wait_state, write_config
from test_collect_receiver import request


@pytest.fixture(autouse=True)
def no_receivers_left():
    yield
    beside.stop_all()
    beside._receivers.clear()


def orphans(n: int) -> bytes:
    spans = [Span(trace_id=os.urandom(16), span_id=os.urandom(8), parent_span_id=os.urandom(8), name="child")
             for _ in range(n)]
    return ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])]
                                     ).SerializeToString()


@pytest.mark.slow
def test_the_monitor_page_counts_open_traces_their_bytes_and_the_drops(history, tmp_path, monkeypatch):
    port = free_port()
    config = write_config(tmp_path, monkeypatch, ("desk", port))
    wait_state(beside.ensure_started(config, str(history))[0], "listening")
    code, _, _ = request(port, "POST", "/v1/traces", orphans(30),
                         {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/x-protobuf"})
    assert code == 200
    code, _, _ = request(port, "POST", "/v1/traces", b"\x0a\x02\x12\x00" * 3,
                         {"Authorization": "Bearer wrong", "Content-Type": "application/x-protobuf"})
    assert code == 401
    counts = service.receiver_counts(config, "desk")
    assert counts["buffer"]["waiting_for_root"] == 30 and counts["buffer"]["bytes"] > 30 * 1000
    assert counts["buffer"]["max_bytes"] == 64 << 20 and counts["dropped"] == {"unauthorized": 1}
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/monitor.py").run()
    no_exception(at)
    shown = " ".join(c.value for c in at.caption)
    assert "open traces 30 (30 waiting for their root)" in shown and "of 67 MB" in shown
    assert "dropped: unauthorized 1" in shown and "connections" in shown
    assert TOKEN not in shown


def test_no_counts_from_a_receiver_that_does_not_answer(tmp_path, monkeypatch):
    config = write_config(tmp_path, monkeypatch, ("desk", free_port()))
    assert service.receiver_counts(config, "desk") is None
    assert service.receiver_counts(config, "no-such-project") is None
    line = service.receiver_counts_line({"received": {"traces": 5}, "stored": 4, "dropped": {"open_traces_expired": 3},
                                         "buffer": {"traces": 2, "waiting_for_root": 2, "bytes": 2_500_000,
                                                    "max_bytes": 64_000_000, "oldest_age_s": 12.5, "max_age_s": 120},
                                         "connections": {"authenticated": 1, "pending": 0, "max": 64}})
    assert line == ("traces received 5, stored 4; open traces 2 (2 waiting for their root), 2.5 of 64 MB, oldest "
                    "12.5 s (expire at 120 s); connections 1/64, 0 not yet authenticated; dropped: open traces expired 3")
