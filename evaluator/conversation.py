"""Conversations: multi-turn chats and agents, as plain data (no I/O, like model.py).

A `Conversation` is an id and its ordered `Turn`s (user, assistant or tool), with optional
conversation-level fields: the scenario (the user's goal), the expected outcome, a reference
answer and the tools it should use. An assistant turn carries that turn's retrieved contexts and
tool calls; a tool turn is the output of the call before it (the loaders also copy it onto that
call's "output"). A dataset holds conversations or single-turn samples, never both; either way its rows are
`EvalSample`s (model.py): a conversation's row carries it in `EvalSample.conversation`.

Scoring works on *exchanges*: a user turn and the assistant's reply to it (the last assistant turn
with text before the next user turn; the tool calls of every assistant turn in between are its
steps). `Exchange.history` is the conversation before the user turn, which the judge sees, so
"And shipping to Canada?" is judged as a question about the product of turn 1.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from .text import resolve_language

USER, ASSISTANT, TOOL = "user", "assistant", "tool"
ROLES = (USER, ASSISTANT, TOOL)
NOT_ASKED = "Not asked: the target failed on an earlier turn of this conversation."
# How a judge prompt names the speakers, and heads the conversation before a follow-up, per language.
LABELS = {"en": {USER: "User", ASSISTANT: "Assistant", TOOL: "Tool output"},
          "ar": {USER: "المستخدم", ASSISTANT: "المساعد", TOOL: "مخرجات الأداة"}}
HISTORY_HEAD = {"en": ("Conversation so far:", "The user now says:"), "ar": ("المحادثة حتى الآن:", "يقول المستخدم الآن:")}


@dataclass
class Turn:
    """One message of a conversation.

    For an assistant turn: `contexts` it retrieved, `tool_calls` it made ({"name", "arguments",
    "output"}), and an optional `reference` (the expected reply). `not_asked` marks a turn a target
    replay never reached; `error` the target failure at this turn; `latency_ms` its call time.
    `context_origins`, when set, says where each context came from ("retrieved", or "tool": the
    output of a tool called before this reply, read as evidence by the loaders).
    """

    role: str
    content: str
    contexts: List[str] = field(default_factory=list)
    tool_calls: List[Dict[str, Any]] = field(default_factory=list)
    reference: Optional[str] = None
    not_asked: bool = False
    error: Optional[str] = None
    latency_ms: Optional[float] = None
    context_origins: List[str] = field(default_factory=list)

    def to_dict(self) -> Dict[str, Any]:
        data: Dict[str, Any] = {"role": self.role, "content": self.content}
        if self.contexts:
            data["contexts"] = list(self.contexts)
        if self.tool_calls:
            data["tool_calls"] = [dict(c) for c in self.tool_calls]
        for key in ("reference", "error", "latency_ms"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        if self.not_asked:
            data["not_asked"] = True
        if self.context_origins:
            data["context_origins"] = list(self.context_origins)
        return data

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Turn":
        return cls(str(data["role"]), str(data.get("content") or ""), list(data.get("contexts") or []),
                   [dict(c) for c in data.get("tool_calls") or []], data.get("reference"),
                   bool(data.get("not_asked")), data.get("error"), data.get("latency_ms"),
                   [str(o) for o in data.get("context_origins") or []])


@dataclass(frozen=True)
class Exchange:
    """A user turn and the assistant's reply: what one turn's metrics score."""

    user_index: int  # position of the user turn in Conversation.turns
    reply_index: Optional[int]  # position of the reply turn; None when the user turn has no reply
    history: List[Turn]  # every turn before the user turn
    user: Turn
    reply: Optional[Turn]
    tool_calls: List[Dict[str, Any]]  # the calls of every assistant turn answering this user turn


@dataclass
class Conversation:
    """One multi-turn conversation to score."""

    conversation_id: str
    turns: List[Turn]
    scenario: Optional[str] = None
    expected_outcome: Optional[str] = None
    reference: Optional[str] = None  # a reference for the conversation as a whole (ragas `reference`)
    expected_tools: Optional[List[str]] = None  # tool names it should call (ragas reference_tool_calls)
    metadata: Dict[str, Any] = field(default_factory=dict)
    recorded_by: Optional[str] = None  # the target whose replies these are, after a replay

    def exchanges(self) -> List[Exchange]:
        """The user turns, each with the assistant's reply and that reply's steps."""
        out = []
        users = [i for i, t in enumerate(self.turns) if t.role == USER]
        for n, u in enumerate(users):
            end = users[n + 1] if n + 1 < len(users) else len(self.turns)
            answers = [i for i in range(u + 1, end) if self.turns[i].role == ASSISTANT]
            spoken = [i for i in answers if self.turns[i].content.strip()]
            chosen = spoken or answers
            reply: Optional[int] = chosen[-1] if chosen else None
            calls = [c for i in answers for c in self.turns[i].tool_calls]
            out.append(Exchange(u, reply, self.turns[:u], self.turns[u],
                                None if reply is None else self.turns[reply], calls))
        return out

    def all_tool_calls(self) -> List[Dict[str, Any]]:
        return [c for t in self.turns if t.role == ASSISTANT for c in t.tool_calls]

    def to_dict(self) -> Dict[str, Any]:
        """Our own conversation record (what sample_data/conversations.jsonl and a replay's recording hold)."""
        data: Dict[str, Any] = {"conversation_id": self.conversation_id}
        for key in ("scenario", "expected_outcome", "reference", "expected_tools", "recorded_by"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        data["turns"] = [t.to_dict() for t in self.turns]
        if self.metadata:
            data["metadata"] = dict(self.metadata)
        return data

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Conversation":
        """The conversation `to_dict` wrote (how the run history reads its conversations back)."""
        return cls(str(data["conversation_id"]), [Turn.from_dict(t) for t in data.get("turns") or []],
                   data.get("scenario"), data.get("expected_outcome"), data.get("reference"),
                   None if data.get("expected_tools") is None else list(data["expected_tools"]),
                   dict(data.get("metadata") or {}), data.get("recorded_by"))

    def first_error(self) -> Optional[str]:
        """The first target failure of a replay, as "turn N: error" (None when every call answered)."""
        for i, t in enumerate(self.turns):
            if t.error:
                return f"turn {i + 1}: {t.error}"
        return None


def tool_outputs_as_contexts(conv: Conversation) -> int:
    """Each tool turn's output becomes a context of the next assistant turn, marked "tool"; how many were added.

    The assistant's reply after a tool ran is grounded in that output ("It is 18 °C in Paris" after the weather
    tool said so), so faithfulness must see it as evidence, not report "no contexts were retrieved"."""
    added, pending = 0, []
    for turn in conv.turns:
        if turn.role == TOOL and turn.content.strip():
            pending.append(turn.content)
        elif turn.role == ASSISTANT and pending and turn.content.strip():
            origins = turn.context_origins or ["retrieved"] * len(turn.contexts)
            turn.contexts = list(turn.contexts) + pending
            turn.context_origins = origins + ["tool"] * len(pending)
            added, pending = added + len(pending), []
        elif turn.role == USER:
            pending = []
    return added


def in_context(ex: Exchange, language: str) -> str:
    """The user's turn as the judge sees it: the conversation so far, then what the user now says."""
    if not ex.history:
        return ex.user.content
    lang = resolve_language(language, ex.user.content)
    before, now = HISTORY_HEAD.get(lang, HISTORY_HEAD["en"])
    return f"{before}\n{transcript(ex.history, LABELS.get(lang, LABELS['en']))}\n\n{now}\n{ex.user.content}"


def transcript(turns: List[Turn], labels: Optional[Dict[str, str]] = None) -> str:
    """Turns as "User: ..." lines (tool output indented under the call), for a judge prompt."""
    names = labels or {USER: "User", ASSISTANT: "Assistant", TOOL: "Tool output"}
    lines = []
    for t in turns:
        if t.not_asked:
            continue
        calls = "".join(f"\n  [called {c.get('name', '?')}]" for c in t.tool_calls)
        lines.append(f"{names.get(t.role, t.role)}: {t.content.strip()}{calls}")
    return "\n".join(lines)
