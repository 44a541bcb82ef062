"""Documents cut into chunks: at headings first, then between paragraphs, within a size limit.

A chunk keeps its document's title, the heading it sits under (`section`; a document with no
headings has one section per chunk, "part N"), and its position in the document, so a test item
can name the chunks it came from and the coverage map can say which sections no item touches.
A paragraph longer than the limit is cut between sentences; a sentence longer than the limit is cut
between words. Chunk ids are `<title slug>#<position>`: stable while the document is unchanged.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, List, Sequence, Tuple

from ..text import sentences
from .documents import Document

DEFAULT_CHUNK_CHARS = 1200
MIN_CHUNK_CHARS = 200
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_BLANK = re.compile(r"\n\s*\n")
_SLUG = re.compile(r"[^\w]+", re.UNICODE)


@dataclass(frozen=True)
class Chunk:
    """A piece of one document: what a question is written from and checked against."""

    chunk_id: str
    title: str  # the document's title
    section: str  # the heading path it sits under ("Refunds > Exceptions"), or "part N"
    position: int  # 0-based order in its document
    text: str


def slug(title: str) -> str:
    return _SLUG.sub("-", title.lower()).strip("-")[:60] or "doc"


def sections_of(body: str) -> Iterator[Tuple[str, str]]:
    """(heading path, text) for each run of text under one heading; "" before the first heading."""
    path: List[Tuple[int, str]] = []
    lines: List[str] = []
    for line in body.splitlines():
        m = _HEADING.match(line)
        if not m:
            lines.append(line)
            continue
        if "\n".join(lines).strip():
            yield " > ".join(h for _, h in path), "\n".join(lines).strip()
        lines = []
        level = len(m.group(1))
        path = [(lv, h) for lv, h in path if lv < level] + [(level, m.group(2).strip())]
    if "\n".join(lines).strip():
        yield " > ".join(h for _, h in path), "\n".join(lines).strip()


def pieces(text: str, limit: int) -> Iterator[str]:
    """`text` as pieces of at most `limit` characters, cut between paragraphs, else sentences, else words."""
    for para in (p.strip() for p in _BLANK.split(text)):
        if not para:
            continue
        if len(para) <= limit:
            yield para
            continue
        for sent in sentences(para):
            if len(sent) <= limit:
                yield sent
            else:
                yield from _by_words(sent, limit)


def _by_words(text: str, limit: int) -> Iterator[str]:
    line: List[str] = []
    size = 0
    for word in text.split():
        if line and size + len(word) + 1 > limit:
            yield " ".join(line)
            line, size = [], 0
        line.append(word)
        size += len(word) + 1
    if line:
        yield " ".join(line)


def _packed(parts: Sequence[str], limit: int) -> List[str]:
    """Consecutive pieces joined while the result stays within `limit` (paragraphs kept apart)."""
    out: List[str] = []
    for part in parts:
        if out and len(out[-1]) + 2 + len(part) <= limit:
            out[-1] = f"{out[-1]}\n\n{part}"
        else:
            out.append(part)
    return out


def chunk_document(doc: Document, max_chars: int = DEFAULT_CHUNK_CHARS, base: str = "") -> List[Chunk]:
    """The chunks of one document, in order; ids start with `base` (default: the title's slug)."""
    limit = max(MIN_CHUNK_CHARS, int(max_chars))
    chunks: List[Chunk] = []
    base = base or slug(doc.title)
    for heading, text in sections_of(doc.body):
        for part in _packed(list(pieces(text, limit)), limit):
            position = len(chunks)
            section = heading or f"part {position + 1}"
            chunks.append(Chunk(f"{base}#{position}", doc.title, section, position, part))
    return chunks


def chunk_documents(docs: Sequence[Document], max_chars: int = DEFAULT_CHUNK_CHARS) -> List[Chunk]:
    """Every document's chunks, documents in their order (two titles with one slug get -2, -3 ...)."""
    chunks: List[Chunk] = []
    seen: dict = {}
    for doc in docs:
        base = slug(doc.title)
        seen[base] = seen.get(base, 0) + 1
        chunks.extend(chunk_document(doc, max_chars, base if seen[base] == 1 else f"{base}-{seen[base]}"))
    return chunks
