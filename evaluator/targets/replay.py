"""Replaying conversations against a target that chats: the user turns one by one, with the history.

    chat_target(TargetConfig("evaluator.demo:chat"))            # a function receiving `messages`
    chat_target(TargetConfig("http://host/chat", body='{"messages": {messages}}'))
    chat_target(TargetConfig("openai:gpt-4o-mini"))              # the chat history as the request
    replayed = replay(conversation, target)

`messages` is the OpenAI shape: [{"role": "user"|"assistant", "content": ...}], ending with the
user turn to answer. A function returns an answer, (answer, contexts) or a dict with answer,
contexts and tool_calls, as single-turn targets do. The target's replies replace the file's
assistant turns (tool turns are dropped: the target's own calls are kept on its reply). When a
call fails at turn k, the conversation is kept: turn k carries the error and every later turn is
marked not asked. A conversation recorded by the same target with turns not asked resumes at the
first of them, the earlier replies kept.
"""
from __future__ import annotations

import json
import threading
from typing import Any, Dict, List, Optional, Sequence

from ..conversation import ASSISTANT, USER, Conversation, Turn
from ..errors import TargetConfigError
from ..model import EvalSample
from .base import RetryPolicy, Target, ask
from .chat import ChatTarget
from .function import FunctionTarget
from .http import HttpTarget, PLACEHOLDER
from ..io.shapes import TargetResponse

MESSAGES = "{messages}"
DEFAULT_CHAT_BODY = '{"messages": {messages}}'


def render_messages(template: str, messages: List[Dict[str, str]]) -> bytes:
    """The body with {messages} as a JSON array and {question} as the last user turn (JSON-escaped)."""
    last = next((m["content"] for m in reversed(messages) if m["role"] == USER), "")
    body = template.replace(MESSAGES, json.dumps(messages, ensure_ascii=False))
    return body.replace(PLACEHOLDER, json.dumps(last, ensure_ascii=False)[1:-1]).encode("utf-8")


class HttpChatTarget(HttpTarget):
    """An HTTP endpoint that takes the whole history: the body template has a {messages} slot."""

    def __init__(self, url: str, *, body: Optional[str] = None, **options: Any) -> None:
        template = body or DEFAULT_CHAT_BODY
        if MESSAGES not in template:
            raise TargetConfigError(f"a conversation target's body needs {MESSAGES} where the history goes, "
                                    f"e.g. {DEFAULT_CHAT_BODY}")
        try:
            json.loads(render_messages(template, [{"role": USER, "content": "q"}]))
        except ValueError as exc:
            raise TargetConfigError(f"the body is not JSON once {MESSAGES} is filled in ({exc}); "
                                    f"write {MESSAGES} without quotes around it") from None
        super().__init__(url, **options)
        self.body = template

    def call(self, question: Any) -> TargetResponse:
        self._messages = question
        return super().call("")

    def _post(self, data: bytes) -> bytes:
        return super()._post(render_messages(self.body, self._messages))


class ChatHistoryTarget(ChatTarget):
    """`openai:MODEL` with the conversation so far as the request's messages."""

    def __init__(self, model: str, **options: Any) -> None:
        super().__init__(model, **options)
        self.body = json.dumps({"model": model, "messages": "@@M@@"}).replace('"@@M@@"', MESSAGES)

    def call(self, question: Any) -> TargetResponse:
        self._messages = question
        return super().call("")

    def _post(self, data: bytes) -> bytes:
        return HttpTarget._post(self, render_messages(self.body, self._messages))


class _Bound:
    """One call's messages bound to a target, so `ask` (retries, timing) can make it."""

    def __init__(self, target: Any, messages: List[Dict[str, str]]) -> None:
        self.target, self.messages = target, messages

    def call(self, question: str) -> TargetResponse:
        return self.target.call(self.messages)

    def describe(self) -> Dict[str, Any]:
        return dict(self.target.describe())


def chat_target(config: Any) -> Target:
    """The conversation form of a TargetConfig's target (a function gets `messages` as its argument)."""
    if config.kind == "http":
        return HttpChatTarget(config.spec, body=config.body, headers=config.headers, fields=config.fields,
                              timeout=config.timeout)
    if config.kind == "openai":
        return ChatHistoryTarget(config.spec.partition(":")[2], base_url=config.base_url, timeout=config.timeout)
    target = config.build()
    assert isinstance(target, FunctionTarget)
    return target


def row_target(config: Any, samples: Sequence[EvalSample]) -> Target:
    """The target that answers these rows: its conversation form when they are conversations (a dataset
    holds one kind), else the target itself; TargetConfigError when it cannot be used."""
    return chat_target(config) if any(s.conversation is not None for s in samples) else config.build()


def history_messages(turns: List[Turn]) -> List[Dict[str, str]]:
    return [{"role": t.role, "content": t.content} for t in turns
            if t.role in (USER, ASSISTANT) and not t.not_asked and (t.role == USER or t.content)]


def _resume_at(conv: Conversation, spec: str) -> int:
    """Index of the first user turn still to ask: 0, or the first not asked of our own recording."""
    if conv.recorded_by != spec:
        return 0
    for i, t in enumerate(conv.turns):
        if t.not_asked or t.error:
            return max((j for j in range(i + 1) if conv.turns[j].role == USER), default=0)
    return len(conv.turns)


def replay(conv: Conversation, target: Target, spec: str, policy: RetryPolicy = RetryPolicy(),
           stop: Optional[threading.Event] = None) -> Conversation:
    """The conversation with the target's replies in place of the file's (see the module docstring)."""
    start = _resume_at(conv, spec)
    turns = [t for t in conv.turns[:start] if not t.not_asked]
    failed = False
    for t in conv.turns[start:]:
        if t.role != USER:
            continue  # the file's replies and tool outputs give way to the target's
        turns.append(Turn(USER, t.content))
        if failed:
            turns[-1].not_asked = True
            turns.append(Turn(ASSISTANT, "", not_asked=True))
            continue
        got = ask(_Bound(target, history_messages(turns)), "", policy, stop)
        reference = _reference_after(conv, t)
        turns.append(Turn(ASSISTANT, got.answer, list(got.contexts), list(got.tool_calls), reference,
                          error=got.error, latency_ms=got.latency_ms))
        failed = got.error is not None
    return Conversation(conv.conversation_id, turns, conv.scenario, conv.expected_outcome, conv.reference,
                        conv.expected_tools, dict(conv.metadata), recorded_by=spec)


def _reference_after(conv: Conversation, user: Turn) -> Optional[str]:
    """The file's reference for the reply to `user`: on the assistant turn that answered it there."""
    i = next(n for n, t in enumerate(conv.turns) if t is user)
    for t in conv.turns[i + 1:]:
        if t.role == USER:
            return None
        if t.role == ASSISTANT and t.reference:
            return t.reference
    return None


__all__ = ["ChatHistoryTarget", "HttpChatTarget", "chat_target", "replay", "row_target"]
