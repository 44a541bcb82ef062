"""An HTTP endpoint as a target: POST JSON with the question, read the answer from the JSON reply.

    HttpTarget("http://127.0.0.1:8000/ask",
               body='{"query": "{question}", "top_k": 3}',        # {question} is JSON-escaped
               headers=["Authorization: Bearer ${RAG_TOKEN}"],     # ${VAR} read at each call
               fields={"answer": "data.reply.text", "contexts": "data.hits[].passage"})

Header values are resolved from the environment at call time and kept nowhere else: `describe()`
(what the run history stores) names the headers, never their values. In team mode the URL (and
any redirect) must fall under `[targets].allow` and a ${VAR} must be in `allow_env`
(targets/policy.py); a refused name is "not allowed here", whether it is set or not. 429, 5xx and timeouts raise
a retryable TargetError (with the server's Retry-After); other failures name the status and the
start of the reply.
"""
from __future__ import annotations

import json
import os
import re
import socket
import urllib.error
import urllib.request
from email.utils import parsedate_to_datetime
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, Sequence
from urllib.parse import urlsplit, urlunsplit

from ..errors import TargetConfigError, TargetError
from .fields import FIELD_NAMES, no_answer_message, parse_path, pick
from .policy import check_url, check_variables, public_url, url_allowed
from .shapes import TargetResponse, assemble_response

DEFAULT_BODY = '{"question": "{question}"}'
PLACEHOLDER = "{question}"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SNIPPET = 200


def render_body(template: str, question: str) -> bytes:
    """The template with every {question} replaced by the question, escaped for a JSON string."""
    return template.replace(PLACEHOLDER, json.dumps(question, ensure_ascii=False)[1:-1]).encode("utf-8")


def check_body(template: str) -> str:
    if PLACEHOLDER not in template:
        raise TargetConfigError(f"the body template must contain {PLACEHOLDER} where the question goes, "
                                f"e.g. {DEFAULT_BODY}")
    try:
        json.loads(render_body(template, "q"))
    except ValueError as exc:
        raise TargetConfigError(f"the body template is not JSON once {PLACEHOLDER} is filled in ({exc}); "
                                "put {question} inside double quotes") from None
    return template


def _policy(policy: Any) -> Any:
    """The policy given, else the one of the server's configuration ($RAGMETER_CONFIG; none: open)."""
    if policy is not None:
        return policy
    from ..config import current

    return current().targets


def parse_headers(lines: Sequence[str], policy: Any = None) -> Dict[str, str]:
    """'Name: value' lines as {name: value template}; ${VAR}s must be allowed and set now (checked, not kept)."""
    policy = _policy(policy)
    headers = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if not sep or not name.strip() or not re.fullmatch(r"[A-Za-z0-9-]+", name.strip()):
            raise TargetConfigError(f"a header is written 'Name: value', not {line.split(':')[0]!r}...")
        headers[name.strip()] = value.strip()
    for name, value in headers.items():
        check_variables(value, policy, name)  # before looking the variable up: a refusal says nothing of it
        missing = [v for v in _VAR.findall(value) if v not in os.environ]
        if missing:
            raise TargetConfigError(f"header {name} uses ${{{missing[0]}}}, which is not set in the environment")
    return headers


def resolve(value: str, policy: Any = None) -> str:
    """A header value with its ${VAR}s read from the environment now (only the names `policy` allows)."""
    check_variables(value, _policy(policy))

    def sub(match: "re.Match[str]") -> str:
        if match.group(1) not in os.environ:
            raise TargetConfigError(f"${{{match.group(1)}}} is not set in the environment")
        return os.environ[match.group(1)]

    return _VAR.sub(sub, value)


class HttpTarget:
    """POSTs each question as JSON to `url` and reads the answer, contexts and tool calls back."""

    kind = "http"

    def __init__(self, url: str, *, body: Optional[str] = None, headers: Sequence[str] = (),
                 fields: Optional[Dict[str, str]] = None, timeout: float = 60.0,
                 no_contexts_reason: Optional[str] = None, policy: Any = None) -> None:
        if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
            raise TargetConfigError(f"an HTTP target needs an http:// or https:// URL, not {public_url(url)!r}")
        self.policy = _policy(policy)
        check_url(url, self.policy)
        self.url, self.timeout = url, float(timeout)
        self.body = check_body(body or DEFAULT_BODY)
        self.headers = parse_headers(headers, self.policy)
        self.fields = _check_fields(fields or {})
        self.no_contexts_reason = no_contexts_reason

    def call(self, question: str) -> TargetResponse:
        reply = _decode(self._post(render_body(self.body, question)))
        answer = pick(reply, "answer", self.fields.get("answer"))
        if answer is None:
            raise TargetError(no_answer_message(reply))
        if not isinstance(answer, str):
            raise TargetError(f"the answer field holds a JSON {type(answer).__name__}, not text; "
                              "point --target-field answer=PATH at the text")
        return assemble_response(answer, pick(reply, "contexts", self.fields.get("contexts")),
                         pick(reply, "tool_calls", self.fields.get("tool_calls")))

    def _post(self, data: bytes) -> bytes:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers.update({name: resolve(value, self.policy) for name, value in self.headers.items()})
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        try:
            with _opener(self.policy).open(request, timeout=self.timeout) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            raise _status_error(exc) from None
        except (TimeoutError, socket.timeout):
            raise TargetError(f"timed out after {self.timeout:g} s", retryable=True) from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                raise TargetError(f"timed out after {self.timeout:g} s", retryable=True) from None
            raise TargetError(f"cannot reach {public_url(self.url)} ({exc.reason})", retryable=True) from None
        except (ConnectionError, OSError) as exc:  # reset or closed mid-reply
            raise TargetError(f"connection to {public_url(self.url)} failed ({exc})", retryable=True) from None

    def describe(self) -> Dict[str, Any]:
        return {"kind": self.kind, "url": public_url(self.url), "body": self.body,
                "header_names": sorted(self.headers), "fields": dict(self.fields), "timeout_s": self.timeout}


class _CheckedRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to a URL the allow-list covers (urllib would carry the headers there)."""

    def __init__(self, allow: Sequence[str]) -> None:
        self.allow = tuple(allow)

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        if not url_allowed(newurl, self.allow):
            raise TargetError(f"the target redirected to {public_url(newurl)}, which is not allowed here "
                              "(not under [targets].allow)")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _opener(policy: Any) -> urllib.request.OpenerDirector:
    if not getattr(policy, "restricted", False):
        return urllib.request.build_opener()
    return urllib.request.build_opener(_CheckedRedirects(getattr(policy, "allow", ())))


def _check_fields(fields: Dict[str, str]) -> Dict[str, str]:
    for name, path in fields.items():
        if name not in FIELD_NAMES:
            raise TargetConfigError(f"unknown target field {name!r}; the fields are {', '.join(FIELD_NAMES)}")
        parse_path(path)
    return dict(fields)


def _status_error(exc: urllib.error.HTTPError) -> TargetError:
    snippet = exc.read()[:_SNIPPET].decode("utf-8", "replace").strip()
    message = f"HTTP {exc.code} {exc.reason}" + (f": {snippet}" if snippet else "")
    retryable = exc.code in (408, 409, 429) or exc.code >= 500
    return TargetError(message, retryable=retryable, retry_after=_retry_after(exc.headers.get("Retry-After")))


def _retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After in seconds, from either form the standard allows (seconds, or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, (parsedate_to_datetime(value) - datetime.now(timezone.utc)).total_seconds())
    except (TypeError, ValueError):
        return None


def _decode(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        text = raw[:_SNIPPET].decode("utf-8", "replace").strip()
        raise TargetError(f"the reply is not valid JSON (it starts {text!r}); the endpoint must return JSON") from None


def parse_field_specs(items: Sequence[str]) -> Dict[str, str]:
    """['answer=data.reply.text', ...] as {'answer': 'data.reply.text'} (TargetConfigError if malformed)."""
    fields: Dict[str, str] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not path.strip():
            raise TargetConfigError(f"a target field is written NAME=PATH (e.g. answer=data.reply.text), not {item!r}")
        fields[name.strip()] = path.strip()
    return _check_fields(fields)


def headers_named(lines: List[str]) -> List[str]:
    """Only the names of header lines: what may be shown or stored."""
    return [line.partition(":")[0].strip() for line in lines]
