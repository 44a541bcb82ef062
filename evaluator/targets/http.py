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
import re
from email.utils import parsedate_to_datetime
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, Sequence
from urllib.parse import urlsplit, urlunsplit

import httpx2

from ..bounded import MAX_RETRY_AFTER, TARGET_REPLY_BYTES, ReplyTooLarge, bounded_client, over_retry_cap
from ..errors import TargetConfigError, TargetError
from ..io.redact import redact_text, remember, remember_url
from ..io.fields import FIELD_NAMES, no_answer_message, parse_path, pick
from .policy import check_url, check_variables, public_url, url_allowed
from ..io.shapes import TargetResponse, assemble_response
from ..environment import secret

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
        missing = [v for v in _VAR.findall(value) if secret(v) is None]
        if missing:
            raise TargetConfigError(f"header {name} uses ${{{missing[0]}}}, which is not set in the environment")
    return headers


def resolve(value: str, policy: Any = None) -> str:
    """A header value with its ${VAR}s read from the environment now (only the names `policy` allows);
    each value read is remembered as a secret (io.redact), so an endpoint echoing it cannot carry it to disk."""
    check_variables(value, _policy(policy))

    def sub(match: "re.Match[str]") -> str:
        found = secret(match.group(1))
        if found is None:
            raise TargetConfigError(f"${{{match.group(1)}}} is not set in the environment")
        remember(found)
        return found

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
        remember_url(url)
        self.body = check_body(body or DEFAULT_BODY)
        self.headers = parse_headers(headers, self.policy)
        self.fields = _check_fields(fields or {})
        self.no_contexts_reason = no_contexts_reason
        self._http: Optional[httpx2.Client] = None

    def call(self, question: str) -> TargetResponse:
        reply = _decode(self._post(render_body(self.body, question)))
        answer = pick(reply, "answer", self.fields.get("answer"))
        if answer is None:
            raise TargetError(no_answer_message(reply))
        if not isinstance(answer, str):
            raise TargetError(f"the answer field holds a JSON {type(answer).__name__}, not text; "
                              "point --target-field answer=PATH at the text")
        return assemble_response(answer, pick(reply, "contexts", self.fields.get("contexts")),
                         pick(reply, "tool_calls", self.fields.get("tool_calls")),
                         pick(reply, "retrieval_ids", self.fields.get("retrieval_ids")))

    def _post(self, data: bytes) -> bytes:
        """The reply body; the whole call (connect, every read) ends within `timeout` seconds."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers.update({name: resolve(value, self.policy) for name, value in self.headers.items()})
        try:
            response = self._client().post(self.url, content=data, headers=headers)
        except httpx2.TimeoutException:
            raise TargetError(f"timed out after {self.timeout:g} s", retryable=True) from None
        except ReplyTooLarge as exc:
            raise TargetError(f"{exc}; the endpoint must answer with the answer and its contexts only") from None
        except httpx2.ConnectError as exc:
            raise TargetError(f"cannot reach {public_url(self.url)} ({_reason(exc)})", retryable=True) from None
        except (httpx2.TransportError, OSError) as exc:  # reset or closed mid-reply
            raise TargetError(f"connection to {public_url(self.url)} failed ({_reason(exc)})", retryable=True) from None
        if response.status_code >= 400:
            raise _status_error(response)
        return response.content

    def _client(self) -> httpx2.Client:
        """One pooled client per target (thread-safe), built on first use."""
        if self._http is None:
            hooks = {"response": [_redirect_check(getattr(self.policy, "allow", ()))]} \
                if getattr(self.policy, "restricted", False) else {}
            self._http = bounded_client(self.url, self.timeout, TARGET_REPLY_BYTES, trust_env=False,
                                        event_hooks=hooks)
        return self._http

    def describe(self) -> Dict[str, Any]:
        return {"kind": self.kind, "url": public_url(self.url), "body": self.body,
                "header_names": sorted(self.headers), "fields": dict(self.fields), "timeout_s": self.timeout}


def _redirect_check(allow: Sequence[str]) -> Any:
    """A response hook that refuses a redirect to a URL the allow-list does not cover (the client
    would carry the headers there); httpx2 calls it before following each redirect."""
    allowed = tuple(allow)

    def check(response: httpx2.Response) -> None:
        if response.has_redirect_location:
            newurl = str(response.request.url.join(response.headers["location"]))
            if not url_allowed(newurl, allowed):
                raise TargetError(f"the target redirected to {public_url(newurl)}, which is not allowed here "
                                  "(not under [targets].allow)")

    return check


def _check_fields(fields: Dict[str, str]) -> Dict[str, str]:
    for name, path in fields.items():
        if name not in FIELD_NAMES:
            raise TargetConfigError(f"unknown target field {name!r}; the fields are {', '.join(FIELD_NAMES)}")
        parse_path(path)
    return dict(fields)


def _status_error(response: httpx2.Response) -> TargetError:
    # A 401 body may echo the request's Authorization header: masked before it becomes a message.
    # Masked before it is cut, so a secret straddling the cut cannot leave its first half behind.
    snippet = redact_text(response.content[:64 * _SNIPPET].decode("utf-8", "replace").strip())[:_SNIPPET]
    message = f"HTTP {response.status_code} {response.reason_phrase}" + (f": {snippet}" if snippet else "")
    retryable = response.status_code in (408, 409, 429) or response.status_code >= 500
    wait = _retry_after(response.headers.get("Retry-After"))
    if retryable and over_retry_cap(wait):
        message += f" (it asks to retry after {wait:g} s, longer than the {MAX_RETRY_AFTER:g} s ragmeter waits)"
        retryable = False
    return TargetError(message, retryable=retryable, retry_after=wait)


def _reason(exc: BaseException) -> str:
    """The innermost cause's words ('[Errno 111] Connection refused'), not the wrapper's."""
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return str(exc) or type(exc).__name__


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
