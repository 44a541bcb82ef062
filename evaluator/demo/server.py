"""The demo pipeline behind HTTP: `python -m evaluator.demo --port 8765`.

    POST /ask   {"question": "..."}  ->  {"answer": "...", "sources": [{"title", "body", "similarity"}]}
    POST /agent {"question": "..."}  ->  {"answer": "...", "tool_calls": [{"name", "arguments", "output"}]}
"""
from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Tuple

from .pipeline import agent_answer, rag_answer


def handle(path: str, body: bytes) -> Tuple[int, Dict[str, Any]]:
    """(status, JSON reply) for one request; bad requests get a 400 saying what is expected."""
    if path not in ("/ask", "/agent"):
        return 404, {"error": "POST to /ask or /agent"}
    try:
        question = json.loads(body or b"{}").get("question")
    except (ValueError, AttributeError):
        question = None
    if not isinstance(question, str) or not question.strip():
        return 400, {"error": 'send JSON like {"question": "How much is a day pass?"}'}
    if path == "/agent":
        return 200, agent_answer(question)
    answer, docs = rag_answer(question)
    return 200, {"answer": answer, "sources": docs}


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
        length = int(self.headers.get("Content-Length") or 0)
        status, reply = handle(self.path, self.rfile.read(length))
        data = json.dumps(reply, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the library prints nothing
        pass


def make_server(host: str = "127.0.0.1", port: int = 8765) -> ThreadingHTTPServer:
    """The demo server, bound and ready for `serve_forever()` (port 0 picks a free port)."""
    return ThreadingHTTPServer((host, port), _Handler)
