"""Read conversation datasets: multi-turn chats in the shapes other tools write them.

    ragas MultiTurnSample   {"user_input": [{"type": "human"|"ai"|"tool", "content", "tool_calls"}],
                             "reference", "reference_tool_calls"}  (to_jsonl, or a CSV/JSON of them)
    deepeval                {"turns": [{"role", "content", "retrieval_context", "tools_called"}],
                             "scenario", "expected_outcome"}  goldens and test cases; JSON, JSONL or
                             CSV with the turns as a JSON cell
    OpenAI messages         {"messages": [{"role", "content", "tool_calls", "tool_call_id"}]} per line
                            (a system message is kept in metadata, not as a turn)
    ShareGPT                {"conversations": [{"from": "human"|"gpt"|"system", "value"}]} (JSONL, or a
                            Hugging Face `datasets` Parquet); LLaMA-Factory's function_call / observation
                            turns are a tool call and its output; system messages are kept in metadata
    long table              one row per turn: conversation_id, turn, role, content, optional
                            contexts / tool_calls / reference (CSV or JSONL), rows ordered by turn
    ragmeter's own          {"conversation_id", "scenario", "expected_outcome", "turns": [{"role",
                             "content", "contexts", "tool_calls", "reference"}]} (sample_data, replays)

`dataset_kind(source)` says whether a file holds conversations or single-turn samples;
`load_conversations` reads it. Bad input raises DatasetError naming the file, the line (or item)
and what to do: a turn without a role, an unknown role, an assistant turn before any user turn,
a tool turn with no tool call before it. An empty conversation is skipped, by name, in `skipped`.

A tool's reply is evidence for the assistant turn that answers after it: with `tool_evidence=True`
(the default; `--no-tool-evidence` on the CLI) its output becomes one of that turn's contexts, marked
"tool" in `Turn.context_origins`, so "It is 18 °C in Paris" after the weather tool said so is grounded.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple

from ..conversation import ASSISTANT, ROLES, TOOL, USER, Conversation, Turn, tool_outputs_as_contexts
from ..errors import DatasetError, TargetError
from .shapes import contexts_of, tool_call
from ..model import EvalSample
from .cells import label_cell
from .dialects import HUMAN_PREFIX, is_label
from .rows import source_rows
from .sources import Source, Where, open_source
from .surfaces import LIBRARY, Surface

CONVERSATIONS, SAMPLES = "conversations", "samples"
# The keys a conversation is read from, in any of the formats: what --mapping FIELD=COLUMN may name.
FIELDS = ("conversation_id", "turn", "role", "content", "contexts", "tool_calls", "reference", "turns", "messages",
          "user_input", "scenario", "expected_outcome", "expected_tools", "reference_tool_calls")
RAGAS, DEEPEVAL, OPENAI, LONG = "ragas MultiTurnSample", "deepeval conversational", "OpenAI messages", "long table"
SHAREGPT = "ShareGPT"
# ragas message types and other tools' role names (ShareGPT's "gpt", LLaMA-Factory's "observation"), as our roles.
ROLE_NAMES = {"human": USER, "user": USER, "ai": ASSISTANT, "assistant": ASSISTANT, "bot": ASSISTANT,
              "gpt": ASSISTANT, "chatgpt": ASSISTANT, "tool": TOOL, "function": TOOL, "observation": TOOL}
_SYSTEM_ROLES = ("system", "developer")
_LONG_KEYS = ("conversation_id", "role", "content")


@dataclass
class ConversationSet:
    """What `load_conversations` found: the conversations, the format, and what it skipped and why."""

    conversations: List[Conversation]
    format: str
    skipped: List[Tuple[str, str]] = field(default_factory=list)  # (conversation id, reason)
    counts: Dict[str, int] = field(default_factory=dict)  # "system messages kept as metadata" -> 3

    def note(self) -> str:
        """The load note: "ShareGPT: 120 conversations, 3 system messages kept as metadata"."""
        n = len(self.conversations)
        parts = [f"{n:,} conversation{'s' if n != 1 else ''}"] + [
            f"{k:,} {what.format(s='s' if k != 1 else '', them='them' if k != 1 else 'it')}"
            for what, k in self.counts.items() if k]
        return f"{self.format}: {', '.join(parts)}."

    @property
    def kind(self) -> str:
        return CONVERSATIONS


def _norm_keys(row: Mapping[str, Any]) -> Dict[str, Any]:
    return {str(k).strip().lower(): v for k, v in row.items()}


def _decoded(value: Any) -> Any:
    """A CSV cell holding JSON (a list of turns) as data; anything else as it is."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _message_list(value: Any) -> bool:
    value = _decoded(value)
    return isinstance(value, list) and bool(value) and all(isinstance(m, dict) for m in value)


def row_format(row: Mapping[str, Any]) -> Optional[str]:
    """Which conversation format a row is in, or None for a single-turn sample."""
    keys = _norm_keys(row)
    if {"epoch", "target"} <= set(keys):  # an inspect_ai sample: its messages are the prompt a solver built
        return None
    if _message_list(keys.get("messages")):
        return OPENAI
    if _message_list(keys.get("conversations")) and _sharegpt_turn(_decoded(keys["conversations"])[0]):
        return SHAREGPT
    if _message_list(keys.get("user_input")):
        return RAGAS
    if "turns" in keys and isinstance(_decoded(keys["turns"]), list):
        return DEEPEVAL
    if all(k in keys for k in _LONG_KEYS):
        return LONG
    return None


def holds_conversations(src: Source) -> bool:
    """Whether an opened source's first row is a conversation (or a turn of one)."""
    with source_rows(src) as rows:
        first = next(rows.records, None)
    return first is not None and is_conversation_row(first[1])


def dataset_kind(source: Any, *, name: Optional[str] = None, max_bytes: Optional[int] = None,
                 surface: Surface = LIBRARY) -> str:
    """CONVERSATIONS when the file's first row is a conversation (or a turn of one), else SAMPLES."""
    return CONVERSATIONS if holds_conversations(open_source(source, name, max_bytes, surface)) else SAMPLES


def load_conversations(source: Any, *, name: Optional[str] = None, max_bytes: Optional[int] = None,
                       max_rows: Optional[int] = None, surface: Surface = LIBRARY,
                       tool_evidence: bool = True) -> ConversationSet:
    """Every conversation of a file (see the module docstring for the formats and `tool_evidence`)."""
    return read_conversations(open_source(source, name, max_bytes, surface), max_rows, surface, tool_evidence)


def is_conversation_row(row: Dict[str, Any], mapping: Optional[Mapping[str, Optional[str]]] = None) -> bool:
    """Whether a file's first row (its keys renamed by `mapping`) starts a conversation file."""
    return row_format(_renamed(row, mapping)) is not None


def conversation_rows(records: Iterable[Tuple[Where, Dict[str, Any]]], name: str, max_rows: Optional[int],
                      surface: Surface, notes: List[str],
                      mapping: Optional[Mapping[str, Optional[str]]] = None,
                      tool_evidence: bool = True) -> List[EvalSample]:
    """The rows of a conversation file (how `load_dataset` reads one): one EvalSample per conversation.

    `mapping` (FIELD -> column) renames the file's keys to the FIELDS a conversation is read from."""
    unknown = [f for f in mapping or {} if f not in FIELDS]
    if unknown:
        raise DatasetError(f"is a conversation file: the mapping names {', '.join(map(repr, unknown))}, which a "
                           f"conversation does not have; its fields are {', '.join(FIELDS)}", file=name)
    found = conversations_in([(w, _renamed(r, mapping)) for w, r in records], name, max_rows, surface, tool_evidence)
    notes.append(found.note())
    notes.extend(f"skipped conversation {cid}: {reason}" for cid, reason in found.skipped)
    return [EvalSample.from_conversation(c) for c in found.conversations]


def _renamed(row: Dict[str, Any], mapping: Optional[Mapping[str, Optional[str]]]) -> Dict[str, Any]:
    """The row with each mapped column under its field's name."""
    if not mapping:
        return row
    by_key = {str(k).strip().lower(): k for k in row}
    out = dict(row)
    for name, column in mapping.items():
        key = by_key.get(str(column or "").strip().lower())
        if key is not None:
            out[name] = out.pop(key)
    return out


def read_conversations(src: Source, max_rows: Optional[int], surface: Surface,
                       tool_evidence: bool = True) -> ConversationSet:
    with source_rows(src) as rows:
        return conversations_in(list(rows.records), src.name, max_rows, surface, tool_evidence)


def conversations_in(records: Rows, name: str, max_rows: Optional[int], surface: Surface,
                     tool_evidence: bool = True) -> ConversationSet:
    """The conversations of a file's rows (`name` for messages)."""
    if not records:
        raise DatasetError("has no rows; add one conversation per line", file=name)
    fmt = row_format(records[0][1])
    if fmt is None:
        raise records[0][0].error("is not a conversation: give each line a 'messages' or 'turns' list, a ragas "
                                  "'user_input' list, or one row per turn with conversation_id, role, content")
    groups = _long_groups(records) if fmt == LONG else [(w, [(w, r)]) for w, r in records]
    found = ConversationSet([], fmt)
    for number, (where, rows_of) in enumerate(groups, 1):
        if max_rows is not None and len(found.conversations) >= max_rows:
            raise DatasetError(f"has more than {max_rows:,} conversations; {surface.limit_advice('rows')}",
                               file=name)
        conv = _READERS[fmt](rows_of, where, number)
        if not conv.turns:
            found.skipped.append((conv.conversation_id, "empty conversation: it has no turns"))
            continue
        _check(conv, where)
        found.counts[_SYSTEM_NOTE] = found.counts.get(_SYSTEM_NOTE, 0) + ("system" in conv.metadata)
        used = tool_outputs_as_contexts(conv) if tool_evidence else 0
        found.counts[_EVIDENCE_NOTE] = found.counts.get(_EVIDENCE_NOTE, 0) + used
        found.conversations.append(conv)
    _check_ids(found.conversations, name)
    if not found.conversations:
        raise DatasetError("has no conversation with turns; every one was empty", file=name)
    return found


# --- one reader per format: rows -> Conversation ------------------------------------------------

Rows = List[Tuple[Where, Dict[str, Any]]]


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _opt(value: Any) -> Optional[str]:
    text = _text(_decoded(value) if not isinstance(value, str) else value).strip()
    return text or None


def _calls(value: Any, where: Where, turn: int) -> List[Dict[str, Any]]:
    value = _decoded(value)
    if value in (None, "", []):
        return []
    if not isinstance(value, list):
        raise where.error(f"turn {turn}: tool calls must be a list of {{'name', 'arguments'}} objects")
    try:
        return [tool_call(c) for c in value]
    except TargetError as exc:
        raise where.error(f"turn {turn}: {exc}") from None


def _contexts(value: Any, where: Where, turn: int) -> List[str]:
    value = _decoded(value)
    if value in (None, ""):
        return []
    try:
        return contexts_of(value)
    except TargetError as exc:
        raise where.error(f"turn {turn}: {exc}") from None


def _role(raw: Any, where: Where, turn: int) -> str:
    if raw is None or not str(raw).strip():
        raise where.error(f"turn {turn} has no role; give every turn a role: user, assistant or tool")
    role = ROLE_NAMES.get(str(raw).strip().lower())
    if role is None:
        raise where.error(f"turn {turn} has the role {str(raw)[:30]!r}; use user, assistant or tool "
                          "(ragas: human, ai, tool)")
    return role


def _id(keys: Dict[str, Any], number: int) -> str:
    for key in ("conversation_id", "id", "name", "thread_id", "session_id"):
        if keys.get(key) not in (None, ""):
            return str(keys[key])
    return f"conv-{number}"


def _conversation(keys: Dict[str, Any], turns: List[Turn], number: int, where: Where, **known: Any) -> Conversation:
    taken = {"conversation_id", "id", "name", "turns", "messages", "user_input", "scenario", "expected_outcome",
             "reference", "reference_tool_calls", "expected_tools", "recorded_by"}
    meta = {k: v for k, v in keys.items() if k not in taken and not is_label(k) and v not in (None, "", [])}
    # human_<metric> keys are people's labels of the conversation, as a single-turn file's columns are (--labels).
    labels = {k[len(HUMAN_PREFIX):]: label_cell(v, where, k) for k, v in keys.items() if is_label(k)}
    if any(v is not None for v in labels.values()):
        meta["human_labels"] = {k: v for k, v in labels.items() if v is not None}
    return Conversation(_id(keys, number), turns, scenario=_opt(keys.get("scenario")),
                        expected_outcome=_opt(keys.get("expected_outcome")),
                        reference=_opt(keys.get("reference")), metadata=meta,
                        recorded_by=_opt(keys.get("recorded_by")), **known)


def _tool_names(value: Any, where: Where) -> Optional[List[str]]:
    value = _decoded(value)
    if not value:
        return None
    return [c["name"] for c in _calls(value if isinstance(value, list) else [value], where, 0)]


def _read_ragas(rows: Rows, where: Where, number: int) -> Conversation:
    keys = _norm_keys(rows[0][1])
    turns = []
    for i, msg in enumerate(_decoded(keys["user_input"]), 1):
        role = _role(msg.get("type", msg.get("role")), where, i)
        turns.append(Turn(role, _text(msg.get("content")), tool_calls=_calls(msg.get("tool_calls"), where, i)))
    return _conversation(keys, turns, number, where,
                         expected_tools=_tool_names(keys.get("reference_tool_calls"), where))


def _read_turn_list(rows: Rows, where: Where, number: int) -> Conversation:
    """deepeval goldens / test cases, and ragmeter's own records (the same keys, our names beside)."""
    keys = _norm_keys(rows[0][1])
    turns = []
    for i, raw in enumerate(_decoded(keys["turns"]) or [], 1):
        if not isinstance(raw, dict):
            raise where.error(f"turn {i} is a JSON {type(raw).__name__}; each turn is an object with role and content")
        t = _norm_keys(raw)
        turns.append(Turn(_role(t.get("role"), where, i), _text(t.get("content")),
                          _contexts(t.get("contexts", t.get("retrieval_context")), where, i),
                          _calls(t.get("tool_calls", t.get("tools_called")), where, i), _opt(t.get("reference")),
                          bool(t.get("not_asked")), _opt(t.get("error")), t.get("latency_ms")))
    return _conversation(keys, turns, number, where, expected_tools=_tool_names(keys.get("expected_tools"), where))


def _read_openai(rows: Rows, where: Where, number: int) -> Conversation:
    keys = _norm_keys(rows[0][1])
    turns, system = [], []
    for i, msg in enumerate(_decoded(keys["messages"]), 1):
        if str(msg.get("role", "")).strip().lower() in _SYSTEM_ROLES:
            system.append(_text(msg.get("content")))
            continue
        turns.append(Turn(_role(msg.get("role"), where, i), _text(msg.get("content")),
                          _contexts(msg.get("contexts"), where, i), _calls(msg.get("tool_calls"), where, i)))
    conv = _conversation(keys, turns, number, where)
    if system:
        conv.metadata["system"] = "\n".join(system)
    return conv


def _long_groups(records: Rows) -> List[Tuple[Where, Rows]]:
    """Rows grouped by conversation_id in first-seen order, each group sorted by its turn number."""
    groups: Dict[str, Rows] = {}
    for where, row in records:
        keys = _norm_keys(row)
        cid = _text(keys.get("conversation_id")).strip()
        if not cid:
            raise where.error("has no conversation_id; give every turn row the id of its conversation",
                              column="conversation_id")
        groups.setdefault(cid, []).append((where, keys))
    return [(rows[0][0], sorted(rows, key=lambda wr: _turn_number(wr))) for rows in groups.values()]


def _turn_number(item: Tuple[Where, Dict[str, Any]]) -> float:
    where, keys = item
    raw = keys.get("turn", keys.get("turn_index"))
    if raw in (None, ""):
        return float(where.line or where.item or 0)  # file order
    try:
        return float(raw)
    except (TypeError, ValueError):
        raise where.error(f"turn {str(raw)[:20]!r} is not a number; number the turns 1, 2, 3…", column="turn") from None


def _read_long(rows: Rows, where: Where, number: int) -> Conversation:
    turns = []
    for i, (here, keys) in enumerate(rows, 1):
        turns.append(Turn(_role(keys.get("role"), here, i), _text(keys.get("content")),
                          _contexts(keys.get("contexts"), here, i), _calls(keys.get("tool_calls"), here, i),
                          _opt(keys.get("reference"))))
    first = dict(rows[0][1])
    first.pop("role", None), first.pop("content", None), first.pop("turn", None), first.pop("contexts", None)
    first.pop("tool_calls", None)
    return _conversation(first, turns, number, where)


def _sharegpt_turn(message: Any) -> bool:
    return isinstance(message, dict) and "from" in message and "value" in message


def _read_sharegpt(rows: Rows, where: Where, number: int) -> Conversation:
    """ShareGPT: {"from", "value"} turns; LLaMA-Factory's function_call turn is a call, observation its output."""
    keys = _norm_keys(rows[0][1])
    turns: List[Turn] = []
    system = [_text(keys.pop("system"))] if _opt(keys.get("system")) else []
    messages = _decoded(keys.pop("conversations", None))
    if not isinstance(messages, list):
        raise where.error('has no "conversations" list; in a ShareGPT file every line holds one: '
                          '{"conversations": [{"from": "human", "value": "..."}, {"from": "gpt", "value": "..."}]}')
    for i, msg in enumerate(messages, 1):
        if not isinstance(msg, dict) or not _sharegpt_turn(msg):
            raise where.error(f"turn {i} is not a ShareGPT message; each needs \"from\" and \"value\"")
        speaker, value = str(msg.get("from") or "").strip().lower(), _text(msg.get("value"))
        if speaker in _SYSTEM_ROLES:
            system.append(value)
        elif speaker == "function_call":
            turns.append(Turn(ASSISTANT, "", tool_calls=_calls([_decoded(value)], where, i)))
        else:
            turns.append(Turn(_role(speaker, where, i), value))
    conv = _conversation(keys, turns, number, where)
    if system:
        conv.metadata["system"] = "\n".join(system)
    return conv


_READERS: Dict[str, Callable[[Rows, Where, int], Conversation]] = {
    RAGAS: _read_ragas, DEEPEVAL: _read_turn_list, OPENAI: _read_openai, LONG: _read_long, SHAREGPT: _read_sharegpt}
_SYSTEM_NOTE = "with a system message kept as metadata (not a turn)"
_EVIDENCE_NOTE = "tool output{s} used as context of the reply after {them}"




# --- checks ---------------------------------------------------------------------------------------

def _check(conv: Conversation, where: Where) -> None:
    """The order rules every format shares; tool outputs are copied onto the calls they answer."""
    first = conv.turns[0]
    if first.role != USER:
        raise where.error(f"conversation {conv.conversation_id!r} starts with a{'n' if first.role == ASSISTANT else ''} "
                          f"{first.role} turn; a conversation starts with the user's message (move or drop the "
                          "opening turn)")
    pending: List[Dict[str, Any]] = []
    for i, t in enumerate(conv.turns, 1):
        if t.role == ASSISTANT:
            pending = list(t.tool_calls)
        elif t.role == TOOL:
            if not pending:
                raise where.error(f"conversation {conv.conversation_id!r}, turn {i}: tool output with no tool call "
                                  "before it; give the assistant turn before it the tool_calls it answers")
            call = pending.pop(0)
            if call.get("output") in (None, ""):
                call["output"] = t.content
        else:
            pending = []


def _check_ids(conversations: List[Conversation], name: str) -> None:
    seen: Dict[str, int] = {}
    for conv in conversations:
        if conv.conversation_id in seen:
            raise DatasetError(f"conversation id {conv.conversation_id!r} is used twice; make the ids unique",
                               file=name)
        seen[conv.conversation_id] = 1
