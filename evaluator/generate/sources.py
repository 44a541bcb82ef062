"""The documents a generation is written from, as the Generate page takes them: uploaded files or a
folder, chunked; the generation's name; a chunk shown with the sentences an item's reference draws on."""
from __future__ import annotations

import html
from typing import Any, Iterable, List, Optional, Sequence

from ..text import content_words, sentences
from .chunking import Chunk, chunk_documents
from .documents import DOCUMENT_FILES, load_documents, load_uploads

NAME_CHARS = 80  # a generation is named after its documents' titles, cut to this
SHARED_WORDS = 0.5  # a sentence is marked when it shares this share of the reference's (or its own) words


def document_types() -> List[str]:
    """The suffixes a document upload may have, without the dot."""
    return [t.lstrip(".") for t in DOCUMENT_FILES]


def upload_chunks(files: Iterable[Any], chunk_chars: int, max_decoded: Optional[int] = None) -> List[Chunk]:
    """Chunks of uploaded files (anything with name and getvalue); `max_decoded` caps what a table may decode to."""
    return chunk_documents(load_uploads(files, max_decoded=max_decoded), chunk_chars)


def folder_chunks(folder: str, chunk_chars: int) -> List[Chunk]:
    """Chunks of every document under a folder (or of one file)."""
    return chunk_documents(load_documents(folder), chunk_chars)


def generation_name(chunks: Sequence[Chunk]) -> str:
    """Its documents' titles, cut to NAME_CHARS."""
    titles = sorted({c.title for c in chunks})
    name = ", ".join(titles)
    return name if len(name) <= NAME_CHARS else f"{len(titles)} documents: {name[:NAME_CHARS - 20]}…"


def source_html(chunk: Chunk, reference: str) -> str:
    """The chunk as escaped HTML, the sentences that share most of the reference's words marked."""
    ref = set(content_words(reference))
    parts = []
    for sent in sentences(chunk.text):
        words = set(content_words(sent))
        text = html.escape(sent)
        shared = bool(ref) and len(words & ref) >= SHARED_WORDS * min(len(ref), len(words) or 1)
        parts.append(f"<mark>{text}</mark>" if shared else text)
    head = html.escape(f"{chunk.title} · {chunk.section} · {chunk.chunk_id}")
    return f"<div dir='auto'><b>{head}</b><br>{' '.join(parts)}</div>"
