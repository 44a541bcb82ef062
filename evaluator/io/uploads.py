"""Uploads: a file's bytes as the dashboard received them, read as a dataset or as conversations.

The dashboard holds an upload as `(name, bytes)`; everything here reads those bytes with the dashboard's
wording of advice (io.surfaces.DASHBOARD): a preview before the columns are mapped, the samples under a
mapping, whether the file holds conversations, and the conversations themselves. `upload_token` names
one reading of one upload (content, mapping and options), so a caller can tell a new dataset from the
one it holds.
"""
from __future__ import annotations

import hashlib
import io
import json
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ..conversation import ASSISTANT, USER, Conversation
from ..errors import DatasetError
from ..model import EvalSample
from .conversations import CONVERSATIONS, ConversationSet, dataset_kind, load_conversations
from .datasets import DatasetPreview, inspect_dataset, load_dataset
from .filetypes import DATASET, formats_for
from .lookalikes import lookalike_warnings, unread_columns, unread_note
from .surfaces import DASHBOARD

PREVIEW_ROWS = 5  # raw rows a preview shows
CELL_CHARS = 300  # a preview cell's text is cut to this
FIRST_MESSAGE_CHARS = 200  # a conversation preview's first message and scenario are cut to this


def digest(data: bytes) -> str:
    """A short content hash: the same bytes, the same digest."""
    return hashlib.sha256(data).hexdigest()[:16]


def upload_token(data: bytes, *options: Any) -> str:
    """The digest of an upload read with `options` (mapping, limits): a new token means a new dataset."""
    return digest(data + repr(options).encode())


def upload_types() -> List[str]:
    """The suffixes a dataset upload may have, without the dot (.eval too: an inspect_ai log)."""
    return [t.lstrip(".") for t in formats_for(DATASET)]


def preview_upload(data: bytes, name: str, max_bytes: Optional[int] = None,
                   sheet: Optional[str] = None) -> DatasetPreview:
    """Columns, first raw rows and detected mapping of an upload (of a workbook: `sheet`, else the one found; the
    preview lists its sheets); DatasetError when it cannot be read."""
    return inspect_dataset(io.BytesIO(data), preview_rows=PREVIEW_ROWS, max_bytes=max_bytes, name=name,
                           surface=DASHBOARD, sheet=sheet)


def load_upload(data: bytes, name: str, mapping: Optional[Mapping[str, Optional[str]]] = None, *,
                max_rows: Optional[int] = None, max_bytes: Optional[int] = None,
                needs_answer: bool = True, sheet: Optional[str] = None) -> List[EvalSample]:
    """The samples of an upload under `mapping` (field -> column); DatasetError with file, line and column."""
    return load_dataset(io.BytesIO(data), dict(mapping or {}), max_rows=max_rows, max_bytes=max_bytes, name=name,
                        surface=DASHBOARD, needs_answer=needs_answer, sheet=sheet)


def mapping_warnings(preview: DatasetPreview, mapping: Mapping[str, Optional[str]]) -> List[str]:
    """The unread columns of an upload, under the mapping the user chose, that look like a reference, contexts or
    ids (io/lookalikes.py): the dashboard shows each in a yellow box."""
    chosen = {f: c for f, c in mapping.items() if c}
    unread = unread_columns(preview.columns, chosen.values())
    return (lookalike_warnings(unread, chosen, DASHBOARD, preview.quiet)
            + unread_note(preview.tool, unread, DASHBOARD, preview.quiet))


def preview_cells(preview: DatasetPreview) -> List[Dict[str, str]]:
    """The preview's first rows as text (JSON cells may hold lists or objects), each cell cut to CELL_CHARS."""
    def cell(value: Any) -> str:
        if isinstance(value, str):
            return value if len(value) <= CELL_CHARS else value[:CELL_CHARS - 3] + "…"
        return "" if value is None else json.dumps(value, ensure_ascii=False, default=str)[:CELL_CHARS]

    return [{str(k): cell(v) for k, v in row.items()} for row in preview.rows]


def is_conversation_upload(data: bytes, name: str, max_bytes: Optional[int] = None) -> bool:
    """Whether the upload's first row is a conversation (a file that cannot be read: no, the row reader says why)."""
    try:
        return dataset_kind(io.BytesIO(data), name=name, max_bytes=max_bytes, surface=DASHBOARD) == CONVERSATIONS
    except DatasetError:
        return False


def load_conversation_upload(data: bytes, name: str, max_bytes: Optional[int] = None,
                             tool_evidence: bool = True) -> ConversationSet:
    """Every conversation of an upload; `tool_evidence`: a tool's reply is a context of the reply after it."""
    return load_conversations(io.BytesIO(data), name=name, max_bytes=max_bytes, surface=DASHBOARD,
                              tool_evidence=tool_evidence)


def conversation_samples(found: ConversationSet) -> List[EvalSample]:
    """One sample per conversation: what a run scores."""
    return [EvalSample.from_conversation(c) for c in found.conversations]


def first_user_message(conversation: Conversation) -> str:
    return next((t.content for t in conversation.turns if t.role == USER), "")


def conversation_rows(conversations: Sequence[Conversation]) -> List[Dict[str, Any]]:
    """One preview row per conversation: id, turns, assistant turns, tool calls, first user message, goal."""
    return [{"conversation_id": conv.conversation_id, "turns": len(conv.turns),
             "assistant turns": sum(1 for t in conv.turns if t.role == ASSISTANT),
             "tool calls": len(conv.all_tool_calls()),
             "first user message": first_user_message(conv)[:FIRST_MESSAGE_CHARS],
             "scenario": (conv.scenario or conv.expected_outcome or "")[:FIRST_MESSAGE_CHARS]}
            for conv in conversations]
