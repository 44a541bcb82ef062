"""Posting alert events to a webhook (Slack's incoming webhooks, or any endpoint taking JSON).

The URL is the operator's configuration (`ragmeter collect --webhook URL`, or the team config), never
typed in a page. Every post is bounded like every outside call: one total deadline over all its tries
(connect, send, read and the waits between retries), a cap on the reply's bytes (bounded.py), and a
bounded number of retries, only for what a retry can fix (a connection failure, 429, 5xx). A failed
post is recorded on its event and tried again at the next poll (alerts.MAX_ATTEMPTS in all).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Union
from urllib.parse import urlsplit

import httpx2

from ..bounded import BoundedTransport, ReplyTooLarge, inner_transport
from ..errors import RagmeterError
from ..retrying import Failed, GaveUp, with_retries
from ..store.history import RunStore
from . import alerts

DEADLINE = 10.0  # seconds for one event's post, every try and wait included
REPLY_BYTES = 64 * 1024  # Slack answers "ok"; nothing a webhook says needs more
RETRIES = 2
BACKOFF = 0.5  # seconds before the first retry, doubled after each


class WebhookError(RagmeterError, ValueError):
    """A webhook URL that cannot be used."""


@dataclass(frozen=True)
class Delivery:
    """How one post went: `ok`, and for people a line saying what happened."""

    ok: bool
    detail: str


class _PostFailed(Failed):
    def __init__(self, detail: str, retryable: bool) -> None:
        self.detail, self.retryable = detail, retryable


def check_url(url: str) -> str:
    """`url` when it is an http(s) URL with a host; WebhookError saying what to give otherwise."""
    parts = urlsplit((url or "").strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WebhookError(f"The webhook must be an http:// or https:// URL with a host, not {shown(url)!r} "
                           "(e.g. https://hooks.slack.com/services/...).")
    return url.strip()


def shown(url: str) -> str:
    """The URL as logs and messages show it: scheme and host only (a Slack webhook's path is its secret)."""
    parts = urlsplit(url or "")
    return f"{parts.scheme}://{parts.hostname}/…" if parts.hostname else "(not a URL)"


@dataclass(frozen=True)
class Webhook:
    """Where alert events are posted, and the bounds on each post."""

    url: str
    deadline: float = DEADLINE
    max_reply_bytes: int = REPLY_BYTES
    retries: int = RETRIES

    def __post_init__(self) -> None:
        check_url(self.url)

    def post(self, body: Dict[str, object], sleep: Callable[[float], object] = time.sleep) -> Delivery:
        """POST `body` as JSON: retried while a retry may help and the deadline allows."""
        end = time.monotonic() + self.deadline
        outcome: Union[Delivery, GaveUp[_PostFailed]] = with_retries(
            lambda: self._attempt(body, end), retries=self.retries, delay=lambda n, _: BACKOFF * 2 ** (n - 1),
            sleep=sleep, fits=lambda wait: time.monotonic() + wait < end)
        if isinstance(outcome, GaveUp):
            tries = outcome.retries + 1
            why = "out of time" if outcome.out_of_time else f"after {tries} tr{'y' if tries == 1 else 'ies'}"
            return Delivery(False, f"{outcome.failure.detail} ({why})")
        return outcome

    def _attempt(self, body: Dict[str, object], end: float) -> Union[Delivery, _PostFailed]:
        left = end - time.monotonic()
        if left <= 0:
            return _PostFailed(f"no reply within the {self.deadline:g} s deadline", retryable=False)
        try:
            # Redirects are not followed: the operator's URL is the one place an alert may go.
            transport = BoundedTransport(left, self.max_reply_bytes, inner_transport(self.url))
            with httpx2.Client(transport=transport, timeout=left, follow_redirects=False) as client:
                reply = client.post(self.url, json=body)
        except httpx2.TimeoutException:
            return _PostFailed(f"no reply from {shown(self.url)} within the {self.deadline:g} s deadline", False)
        except ReplyTooLarge as exc:  # the post arrived; the same reply would come again
            return _PostFailed(f"{shown(self.url)}: {exc}", retryable=False)
        except httpx2.HTTPError as exc:  # refused, reset: it may be back in a moment
            return _PostFailed(f"{shown(self.url)}: {exc}", retryable=True)
        if reply.status_code < 300:
            return Delivery(True, f"HTTP {reply.status_code}")
        retryable = reply.status_code == 429 or reply.status_code >= 500
        return _PostFailed(f"{shown(self.url)} answered HTTP {reply.status_code}", retryable)


def deliver(store: RunStore, project: str, webhook: Optional[Webhook]) -> List[Delivery]:
    """Post every undelivered event of `project`, oldest first, recording each outcome on its event."""
    if webhook is None:
        return []
    done = []
    for event in alerts.undelivered(store, project):
        result = webhook.post(alerts.payload(event))
        alerts.mark_delivery(store, event, result.ok, result.detail)
        done.append(result)
    return done


__all__ = ["DEADLINE", "Delivery", "REPLY_BYTES", "Webhook", "WebhookError", "check_url", "deliver", "shown"]
