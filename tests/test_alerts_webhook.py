"""webhook: alert events posted to a real HTTP receiver on 127.0.0.1 (payload, deadline, reply cap, retries)."""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from evaluator.collect import alerts, webhook
from evaluator.collect.alerts import AlertMonitor, parse_rule
from evaluator.collect.webhook import Webhook, WebhookError

from live_runs import write_live_runs


class Receiver:
    """A webhook endpoint: records each body; `replies` says what each call gets (status, body, stall seconds)."""

    def __init__(self):
        self.bodies, self.replies = [], []
        self.gone = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                receiver.bodies.append(json.loads(body))
                status, reply, stall = receiver.replies.pop(0) if receiver.replies else (200, b"ok", 0)
                if stall:
                    receiver.gone.wait(stall)  # the test's end wakes it
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(reply)))
                    self.end_headers()
                    self.wfile.write(reply)
                except OSError:  # the client gave up first
                    pass

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/services/T000/B000/secret-path"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.gone.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def breach_and_recovery(store):
    write_live_runs(store, "shop", 90, scores=lambda i: {"faithfulness": 0.5 if 30 <= i < 60 else 0.9})
    return AlertMonitor(store, "shop", [parse_rule("faithfulness < 0.75 over 10")], since="").poll()


def test_each_breach_and_recovery_is_posted_once_with_slack_text_and_fields(store, receiver):
    found = breach_and_recovery(store)
    hook = Webhook(receiver.url)
    assert [d.ok for d in webhook.deliver(store, "shop", hook)] == [True, True]
    assert webhook.deliver(store, "shop", hook) == []  # nothing posted twice
    breach, recovery = receiver.bodies
    assert {k: breach[k] for k in ("rule", "metric", "threshold", "project", "state", "run", "sample")} == {
        "rule": "faithfulness < 0.75 over 10", "metric": "faithfulness", "threshold": 0.75, "project": "shop",
        "state": "breach", "run": found[0].run_id, "sample": found[0].idx}
    assert breach["value"] < 0.75 and recovery["state"] == "recovered" and recovery["value"] >= 0.77
    assert breach["text"].startswith("ragmeter: shop: `faithfulness &lt; 0.75 over 10` breached: faithfulness mean")
    assert all(e.delivery.startswith("delivered") and e.attempts == 1 for e in alerts.events(store, "shop"))


def test_a_stalling_receiver_is_cut_at_the_deadline_and_tried_again_at_the_next_poll(store, receiver):
    breach_and_recovery(store)
    receiver.replies = [(200, b"ok", 30)]  # the first post stalls
    started = time.monotonic()
    outcome = webhook.deliver(store, "shop", Webhook(receiver.url, deadline=1.0))
    took = time.monotonic() - started
    assert took < 3.5, took  # the first post's 1 s deadline, the second post's quick reply
    assert [d.ok for d in outcome] == [False, True]
    assert "within the 1 s deadline" in outcome[0].detail and "secret-path" not in outcome[0].detail
    pending = alerts.undelivered(store, "shop")
    assert [(e.state, e.attempts) for e in pending] == [("breach", 1)]  # kept, to be posted again
    assert [d.ok for d in webhook.deliver(store, "shop", Webhook(receiver.url))] == [True]
    assert alerts.undelivered(store, "shop") == []


def test_an_oversized_reply_is_not_read(store, receiver):
    breach_and_recovery(store)
    receiver.replies = [(200, b"x" * 200_000, 0)]
    first = Webhook(receiver.url, max_reply_bytes=1024).post({"text": "hi"})
    assert not first.ok and "more than the" in first.detail and len(receiver.bodies) == 1  # not retried


def test_server_errors_are_retried_a_bounded_number_of_times(receiver):
    receiver.replies = [(503, b"busy", 0), (503, b"busy", 0), (503, b"busy", 0), (200, b"ok", 0)]
    outcome = Webhook(receiver.url, retries=2).post({"text": "hi"}, sleep=lambda s: None)
    assert not outcome.ok and "HTTP 503 (after 3 tries)" in outcome.detail and len(receiver.bodies) == 3
    receiver.replies = [(503, b"busy", 0), (200, b"ok", 0)]
    assert Webhook(receiver.url, retries=2).post({"text": "hi"}, sleep=lambda s: None).ok


def test_a_refused_post_is_not_retried(receiver):
    receiver.replies = [(404, b"no such hook", 0)]
    outcome = Webhook(receiver.url).post({"text": "hi"}, sleep=lambda s: None)
    assert not outcome.ok and "HTTP 404 (after 1 try)" in outcome.detail and len(receiver.bodies) == 1


def test_an_event_is_given_up_after_max_attempts(store, tmp_path):
    breach_and_recovery(store)
    from ports import closed_port  # a bound port that refuses connections

    with closed_port() as port:
        hook = Webhook(f"http://127.0.0.1:{port}/hook", retries=0)
        for _ in range(alerts.MAX_ATTEMPTS):
            webhook.deliver(store, "shop", hook)
    gave_up = alerts.events(store, "shop")
    assert all(e.delivery.startswith("gave up:") and e.attempts == alerts.MAX_ATTEMPTS for e in gave_up)
    assert alerts.undelivered(store, "shop") == []


@pytest.mark.parametrize("url", ["", "hooks.slack.com/services/x", "file:///etc/passwd", "ftp://host/x", "http://"])
def test_a_webhook_url_must_be_http(url):
    with pytest.raises(WebhookError, match="must be an http:// or https:// URL"):
        Webhook(url)
