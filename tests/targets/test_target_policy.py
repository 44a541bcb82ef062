"""targets.policy: in team mode a target calls only [targets].allow URLs and reads only allow_env variables.

Real HTTP servers on 127.0.0.1: one allowed, one standing for an internal address a visitor must
not reach (it must receive nothing).
"""
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import threading

import pytest

from evaluator.config import TargetsConfig
from evaluator.errors import TargetConfigError, TargetError
from evaluator.targets import HttpTarget, TargetConfig
from evaluator.targets.policy import url_allowed
from target_server import TargetServer
from teamfiles import write_team

ALLOW = ("http://rag.internal:8000/api/", "https://search.example/v1")


@pytest.mark.parametrize("url, allowed", [
    ("http://rag.internal:8000/api/ask", True),
    ("http://RAG.internal:8000/api/ask?x=1", True),
    ("https://search.example/v1", True),
    ("https://search.example:443/v1/ask", True),
    ("https://search.example/v1-admin", False),         # a prefix ends at a path segment
    ("http://rag.internal:8000/apiary", False),
    ("http://rag.internal:8001/api/ask", False),         # another port
    ("https://rag.internal:8000/api/ask", False),        # another scheme
    ("http://rag.internal:8000@evil.example/api/", False),  # user info: the host is evil.example
    ("http://rag.internal:8000/api/../admin", False),    # dot segments
    ("http://rag.internal:8000/api/%2e%2e/admin", False),
    ("http://rag.internal:8000/api/%252e%252e/admin", False),  # encoded twice: a proxy and a server decode once each
    ("http://rag.internal:8000/api/%25/ask", False),
    ("http://rag.internal:8000/api/\u2025/admin", False),  # "‥", two dots as one character (NFKC: "..")
    ("http://rag.internal:8000/api/%E2%80%A5/admin", False),  # the same, percent-encoded
    ("http://rag.internal:8000/api/\uff0e\uff0e/admin", False),  # full-width dots
    ("http://rag.internal:8000/api/v1.2/ask", True),  # a dot inside a segment is fine
    ("http://rag.internal:8000/api\\..\\admin", False),
    ("http://rag.internal.evil.example:8000/api/", False),
    ("http://evil.example/?u=http://rag.internal:8000/api/", False),
    ("file:///etc/passwd", False),
    ("http://rag.internal:bad/api/", False),
])
def test_urls_are_compared_part_by_part(url, allowed):
    assert url_allowed(url, ALLOW) is allowed


def team(*allow, allow_env=()):
    return TargetsConfig(allow=tuple(allow), allow_env=tuple(allow_env), restricted=True)


def test_a_url_outside_the_allow_list_is_refused_before_any_call():
    with TargetServer(lambda body: (200, {"answer": "internal data"})) as internal:
        with pytest.raises(TargetConfigError, match=r"is not allowed here.*\[targets\]\.allow"):
            HttpTarget(internal.url, policy=team("http://rag.internal:8000/"))
        assert internal.requests == []


def test_a_header_variable_outside_allow_env_is_not_allowed_here_whether_set_or_not(monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "canary-aws-5d1")
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    messages = []
    for name in ("AWS_SECRET_ACCESS_KEY", "NOT_SET_ANYWHERE"):
        with pytest.raises(TargetConfigError) as refused:
            HttpTarget("http://127.0.0.1:9/ask", headers=[f"X-Leak: ${{{name}}}"], policy=team("http://127.0.0.1:9/"))
        messages.append(str(refused.value).replace(name, "NAME"))
    assert messages[0] == messages[1] and "not allowed here" in messages[0] and "not set" not in messages[0]


def test_an_allowed_variable_is_sent_to_an_allowed_url(monkeypatch):
    monkeypatch.setenv("RAG_TOKEN", "tok-7")
    with TargetServer(lambda body: (200, {"answer": "ok"})) as srv:
        target = HttpTarget(srv.url, headers=["Authorization: Bearer ${RAG_TOKEN}"],
                            policy=team(srv.url.rsplit("/", 1)[0] + "/", allow_env=["RAG_TOKEN"]))
        assert target.call("q").answer == "ok"
        assert srv.requests[0][1]["authorization"] == "Bearer tok-7"


class _Redirect(BaseHTTPRequestHandler):
    location = ""

    def do_POST(self):  # noqa: N802
        self.send_response(302)
        self.send_header("Location", self.location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_redirect_outside_the_allow_list_is_not_followed(monkeypatch):
    monkeypatch.setenv("RAG_TOKEN", "tok-redirected")
    with TargetServer(lambda body: (200, {"answer": "internal data"})) as internal:
        handler = type("R", (_Redirect,), {"location": internal.url})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/ask"
            target = HttpTarget(url, headers=["Authorization: Bearer ${RAG_TOKEN}"],
                                policy=team(url, allow_env=["RAG_TOKEN"]))
            with pytest.raises(TargetError, match="redirected to .* not allowed here"):
                target.call("q")
        finally:
            server.shutdown()
            server.server_close()
        assert internal.requests == []  # the token never followed the redirect


def test_the_servers_config_file_restricts_targets(tmp_path, monkeypatch):
    write_team(tmp_path, monkeypatch, targets={"allow": ["http://rag.internal:8000/"]})
    with pytest.raises(TargetConfigError, match="not allowed here"):
        TargetConfig("http://169.254.169.254/latest/meta-data").build()
    with pytest.raises(TargetConfigError, match="Python function target is not allowed here"):
        TargetConfig("os:system").build()
    assert json.loads(json.dumps(TargetConfig("http://rag.internal:8000/ask").settings()))["kind"] == "http"


def test_on_a_laptop_any_url_and_any_set_variable_still_work(monkeypatch):
    monkeypatch.setenv("MY_TOKEN", "t-1")
    with TargetServer(lambda body: (200, {"answer": "ok"})) as srv:
        assert HttpTarget(srv.url, headers=["X-Token: ${MY_TOKEN}"]).call("q").answer == "ok"
    with pytest.raises(TargetConfigError, match="not set in the environment"):
        HttpTarget(srv.url, headers=["X-Token: ${SURELY_UNSET_VAR_9}"])
