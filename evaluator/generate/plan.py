"""Where the next item comes from: kinds in their mix, chunks spread over documents and sections.

`Planner.next()` gives a Slot (kind, the chunks it is written from, its language). Items are
spread, not taken from the first chunks: the kind is the one furthest behind its share; the anchor
chunk is taken from the document with the fewest items kept or in flight (then the fewest
tried, so a rejected slot is not retried at once), within it the section likewise, within that a
chunk at random (seeded). A rejected attempt gives its place back (`release`). Items already in a test set count as planned, so a
resumed or gap-filling run goes on spreading; `only` restricts anchors to some (title, section)
pairs (--fill-gaps: the sections no item touches).
"""
from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from ..text import detect_language
from .chunking import Chunk
from .kinds import DOCUMENT, KINDS, TWO
from .retrieval import LexicalIndex

Section = Tuple[str, str]  # (document title, section)
SUMMARY_CHUNKS = 4


@dataclass(frozen=True)
class Slot:
    kind: str
    chunks: Tuple[Chunk, ...]
    language: str


class Planner:
    def __init__(self, chunks: Sequence[Chunk], mix: Dict[str, float], language: str = "auto", *,
                 seed: int = 0, index: Optional[LexicalIndex] = None, only: Optional[Set[Section]] = None) -> None:
        self.chunks, self.mix, self.language = list(chunks), dict(mix), language
        self.index = index or LexicalIndex(self.chunks)
        self.random = random.Random(seed)
        self.by_doc: Dict[str, Dict[str, List[int]]] = defaultdict(lambda: defaultdict(list))
        for i, c in enumerate(self.chunks):
            if only is None or (c.title, c.section) in only:
                self.by_doc[c.title][c.section].append(i)
        self.doc_use: Counter = Counter()
        self.section_use: Counter = Counter()
        self.kind_use: Counter = Counter()
        self.tried: Counter = Counter()  # documents and sections ever planned, rejected ones included
        self.planned = 0

    @property
    def empty(self) -> bool:
        return not self.by_doc

    def count(self, kind: str, chunks: Iterable[Chunk]) -> None:
        """Count an item already kept (a resumed or existing test set): its kind and its chunks."""
        self.keep(kind)
        self._use(chunks)

    def keep(self, kind: str) -> None:
        """One more kept item of `kind`: kinds are balanced on kept items, chunks on planned ones."""
        self.kind_use[kind] += 1

    def _use(self, chunks: Iterable[Chunk], step: int = 1) -> None:
        for title in {c.title for c in chunks}:
            self.doc_use[title] += step
        for key in {(c.title, c.section) for c in chunks}:
            self.section_use[key] += step

    def release(self, slot: Slot) -> None:
        """A rejected attempt: its documents and sections are free again (and counted as tried)."""
        self._use(slot.chunks, -1)
        for c in slot.chunks:
            self.tried[c.title] += 1
            self.tried[(c.title, c.section)] += 1

    def next_kind(self, exclude: Iterable[str] = ()) -> str:
        total = sum(self.kind_use.values()) + 1
        weights = {k: w for k, w in self.mix.items() if k not in set(exclude)} or self.mix
        share = sum(weights.values())
        return max(weights, key=lambda k: (weights[k] / share * total - self.kind_use[k], weights[k]))

    def next(self, kind: Optional[str] = None, exclude: Iterable[str] = ()) -> Slot:
        kind = kind or self.next_kind(exclude)
        anchor = self._anchor()
        chunks = self._chunks_for(kind, anchor)
        self._use(chunks)
        self.planned += 1
        return Slot(kind, chunks, self._language(anchor))

    def _anchor(self) -> Chunk:
        title = min(self.by_doc, key=lambda t: (self.doc_use[t], self.tried[t], self.random.random()))
        sections = self.by_doc[title]
        section = min(sections, key=lambda s: (self.section_use[(title, s)], self.tried[(title, s)],
                                               self.random.random()))
        return self.chunks[self.random.choice(sections[section])]

    def _chunks_for(self, kind: str, anchor: Chunk) -> Tuple[Chunk, ...]:
        source = KINDS[kind].source if kind in KINDS else None
        if source == DOCUMENT:
            return self._document_chunks(anchor.title)
        if source == TWO:
            partner = self._partner(anchor)
            return (anchor, partner) if partner is not None else (anchor,)
        return (anchor,)

    def _document_chunks(self, title: str) -> Tuple[Chunk, ...]:
        mine = [c for c in self.chunks if c.title == title]
        if len(mine) <= SUMMARY_CHUNKS:
            return tuple(mine)
        step = (len(mine) - 1) / (SUMMARY_CHUNKS - 1)
        return tuple(mine[round(i * step)] for i in range(SUMMARY_CHUNKS))

    def _partner(self, anchor: Chunk) -> Optional[Chunk]:
        """Another section of the same document (every other time, when it has one), else the most
        related chunk of another document by the lexical index."""
        same = [i for i, c in enumerate(self.chunks) if c.title == anchor.title and c.section != anchor.section]
        if same and (self.planned % 2 == 0 or len(self.by_doc) == 1):
            return self.chunks[self.random.choice(same)]
        others = [i for i, c in enumerate(self.chunks) if c.title != anchor.title]
        hits = self.index.search(f"{anchor.section} {anchor.text}", k=1, among=others)
        if hits:
            return hits[0][0]
        return self.chunks[self.random.choice(same)] if same else None

    def _language(self, anchor: Chunk) -> str:
        if self.language == "mix":
            return ("en", "ar")[self.planned % 2]
        if self.language in ("en", "ar"):
            return self.language
        return detect_language(anchor.text)
