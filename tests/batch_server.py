"""A real OpenAI Batch API server on 127.0.0.1 (files and batches), for tests.

Standard library only; it listens on an ephemeral port in a background thread and implements:

    POST /v1/files                     multipart upload (file, purpose) -> a file object
    GET  /v1/files/{id}                the file object
    GET  /v1/files/{id}/content        the file's bytes
    POST /v1/batches                   {input_file_id, endpoint, completion_window, metadata}
    GET  /v1/batches/{id}              the batch; each GET moves it along:
                                       validating -> in_progress (request_counts growing) -> completed

A batch reads `validating` on its first GET, `in_progress` until it completes on its `polls`-th
GET (constructor argument). Then each request line of its
input file is answered by `responder(body) -> str | Failed` (default: DEFAULT_REPLY); answers
go to the output file, `Failed` ones to the error file, like OpenAI does. An answer may also be
openai_server's `reply(...)`/`scored_reply(...)`, for token logprobs (sent when the request asks). `fail_batch="..."`
makes every new batch end `failed` with that validation error and no files; `flaky_polls=k`
makes the next k batch GETs answer HTTP 500.

    with BatchServer(responder=lambda body: '{"score": 1}', polls=3) as srv:
        client = OpenAI(base_url=srv.base_url, api_key="...")
        ...
        srv.uploads, srv.batches, srv.requests   # what the server received
"""
from __future__ import annotations

import email.parser
import email.policy
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from openai_server import DEFAULT_REPLY, LoopbackHandler, LoopbackServer, Reply, completion_body, each_part


@dataclass(frozen=True)
class Failed:
    """A request that fails inside the batch: HTTP `status` with `message`, or (status None)
    a batch-level `error` object with `code`, as OpenAI writes for expired requests."""

    message: str = "failed inside the test batch"
    status: Optional[int] = 500
    code: str = "server_error"


Answer = Union[str, Reply, Failed]
Responder = Callable[[Dict[str, Any]], Answer]


def prompt_of(body: Dict[str, Any]) -> str:
    """The judge prompt of a chat-completions body (the last message's content)."""
    return str(body["messages"][-1]["content"])


@dataclass
class Seen:
    """One HTTP request as the server saw it; header names are lower-case."""

    method: str
    path: str
    headers: Dict[str, str]
    raw: bytes


@dataclass
class _Batch:
    id: str
    input_file_id: str
    endpoint: str
    metadata: Dict[str, Any]
    total: int
    created_at: int = field(default_factory=lambda: int(time.time()))
    polls: int = 0
    status: str = "validating"
    completed: int = 0
    failed: int = 0
    output_file_id: Optional[str] = None
    error_file_id: Optional[str] = None
    errors: Optional[str] = None


class BatchServer(LoopbackServer):
    """The loopback Batch API server; use as a context manager (or `start()` / `stop()`)."""

    def __init__(self, *, responder: Optional[Responder] = None, polls: int = 3,
                 fail_batch: Optional[str] = None, flaky_polls: int = 0) -> None:
        self.responder = responder or (lambda body: DEFAULT_REPLY)
        self.polls, self.fail_batch = polls, fail_batch
        self.flaky_polls = flaky_polls  # the next GETs of a batch that answer HTTP 500
        self.files: Dict[str, Tuple[str, str, bytes]] = {}  # id -> (filename, purpose, data)
        self.batches: Dict[str, _Batch] = {}
        self.requests: List[Seen] = []
        self._lock = threading.Lock()

    def _listen(self) -> ThreadingHTTPServer:
        return ThreadingHTTPServer(("127.0.0.1", 0), _Handler)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def uploads(self) -> List[bytes]:
        """The uploaded requests files, in upload order."""
        with self._lock:
            return [data for _, purpose, data in self.files.values() if purpose == "batch"]

    def input_lines(self) -> List[Dict[str, Any]]:
        """Every request line of every uploaded requests file."""
        return [json.loads(line) for data in self.uploads for line in data.splitlines() if line.strip()]

    # -- the API, called by the handler under the lock ------------------------------------------
    def _new_file(self, filename: str, purpose: str, data: bytes) -> Dict[str, Any]:
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = (filename, purpose, data)
        return self._file_object(file_id)

    def _file_object(self, file_id: str) -> Dict[str, Any]:
        filename, purpose, data = self.files[file_id]
        return {"id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                "filename": filename, "purpose": purpose, "status": "processed"}

    def _new_batch(self, body: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        file = self.files.get(body.get("input_file_id", ""))
        if file is None:
            return None
        lines = [line for line in file[2].splitlines() if line.strip()]
        batch = _Batch(f"batch_{len(self.batches) + 1}", body["input_file_id"], body.get("endpoint", ""),
                       body.get("metadata") or {}, len(lines))
        self.batches[batch.id] = batch
        return self._batch_object(batch)

    def _poll(self, batch: _Batch) -> Dict[str, Any]:
        batch.polls += 1
        if batch.status in ("completed", "failed"):
            pass
        elif self.fail_batch is not None:
            batch.status, batch.errors = "failed", self.fail_batch
        elif batch.polls >= self.polls:
            self._complete(batch)
        elif batch.polls > 1:
            batch.status = "in_progress"
            batch.completed = batch.total * (batch.polls - 1) // self.polls  # counts grow while it runs
        return self._batch_object(batch)

    def _complete(self, batch: _Batch) -> None:
        out, err = [], []
        for n, line in enumerate(self.files[batch.input_file_id][2].splitlines()):
            if line.strip():
                request = json.loads(line)
                answer = self.responder(request["body"])
                if isinstance(answer, str):  # a several-metric prompt gets each metric's part, as from the chat server
                    answer = each_part(answer, prompt_of(request["body"]))
                (err if isinstance(answer, Failed) else out).append(_result_line(n, request, answer))
        batch.status, batch.completed, batch.failed = "completed", len(out), len(err)
        if out:
            batch.output_file_id = self._new_file("output.jsonl", "batch_output", _jsonl(out))["id"]
        if err:
            batch.error_file_id = self._new_file("errors.jsonl", "batch_output", _jsonl(err))["id"]

    def _batch_object(self, b: _Batch) -> Dict[str, Any]:
        errors = {"object": "list", "data": [{"code": "invalid_request", "message": b.errors}]} if b.errors else None
        return {"id": b.id, "object": "batch", "endpoint": b.endpoint, "input_file_id": b.input_file_id,
                "completion_window": "24h", "status": b.status, "created_at": b.created_at,
                "output_file_id": b.output_file_id, "error_file_id": b.error_file_id, "errors": errors,
                "metadata": b.metadata,
                "request_counts": {"total": b.total, "completed": b.completed, "failed": b.failed}}


def _result_line(n: int, request: Dict[str, Any], answer: Answer) -> Dict[str, Any]:
    line: Dict[str, Any] = {"id": f"batch_req_{n}", "custom_id": request["custom_id"], "error": None}
    if isinstance(answer, Failed) and answer.status is None:
        line.update(response=None, error={"code": answer.code, "message": answer.message})
    elif isinstance(answer, Failed):
        body = {"error": {"message": answer.message, "type": "test_error", "code": answer.code}}
        line["response"] = {"status_code": answer.status, "request_id": f"req_{n}", "body": body}
    else:
        answer = answer if isinstance(answer, Reply) else Reply(answer)
        asked = request["body"].get("logprobs")
        body = completion_body(answer.text, request["body"].get("model", ""), answer.usage, prompt_of(request["body"]),
                               answer.finish_reason, answer.logprobs if asked else None)
        line["response"] = {"status_code": 200, "request_id": f"req_{n}", "body": body}
    return line


def _jsonl(items: List[Dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(item).encode() + b"\n" for item in items)


def _multipart(content_type: str, raw: bytes) -> Dict[str, Tuple[Optional[str], bytes]]:
    """The form fields of a multipart body: name -> (filename, bytes)."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
    fields = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        fields[str(name)] = (part.get_filename(), part.get_payload(decode=True) or b"")
    return fields


class _Handler(LoopbackHandler):
    api = LoopbackHandler.double  # the BatchServer

    def _read(self) -> bytes:
        raw = self._body()
        with self.api._lock:
            self.api.requests.append(Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, raw))
        return raw

    def _send(self, status: int, payload: Any, content_type: str = "application/json",
              headers: Optional[Dict[str, str]] = None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        super()._send(status, data, content_type, headers)

    def _not_found(self, what: str) -> None:
        self._send(404, {"error": {"message": f"No such {what}: {self.path}", "type": "invalid_request_error"}})

    def do_POST(self) -> None:
        raw = self._read()
        path = self.path.rstrip("/")
        with self.api._lock:
            if path.endswith("/v1/files"):
                fields = _multipart(self.headers.get("Content-Type", ""), raw)
                filename, data = fields.get("file", (None, b""))
                purpose = fields.get("purpose", (None, b""))[1].decode()
                self._send(200, self.api._new_file(filename or "upload.jsonl", purpose, data))
            elif path.endswith("/v1/batches"):
                batch = self.api._new_batch(json.loads(raw or b"{}"))
                self._send(200, batch) if batch else self._not_found("input file")
            else:
                self._not_found("endpoint")

    def do_GET(self) -> None:
        self._read()
        parts = self.path.rstrip("/").split("/")
        with self.api._lock:
            if len(parts) >= 4 and parts[-2] == "batches" and self.api.flaky_polls > 0:
                self.api.flaky_polls -= 1
                self._send(500, {"error": {"message": "poll failed (flaky_polls)", "type": "server_error"}})
            elif len(parts) >= 4 and parts[-2] == "batches" and parts[-1] in self.api.batches:
                self._send(200, self.api._poll(self.api.batches[parts[-1]]))
            elif parts[-1] == "content" and parts[-2] in self.api.files:
                self._send(200, self.api.files[parts[-2]][2], "application/octet-stream")
            elif parts[-2] == "files" and parts[-1] in self.api.files:
                self._send(200, self.api._file_object(parts[-1]))
            else:
                self._not_found("object")
