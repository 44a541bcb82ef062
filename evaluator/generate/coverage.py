"""The coverage map: which documents and sections a test set touches, by kind and language.

An item touches the chunks it names (`chunk_ids`, written by `ragmeter generate`). An item written
by hand names none: it touches the section of its `expected_docs` documents that the lexical index
ranks first for its question and reference answer; an item with no expected documents is placed
on the best-ranked chunk of the whole corpus only when its words clearly match one (a question the
documents cannot answer touches nothing). `Coverage.rows()` is one row per (document, section);
`uncovered()` the sections no item touches (what --fill-gaps writes for).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set

from ..text import content_words
from .chunking import Chunk
from .items import TestItem
from .plan import Section
from .retrieval import LexicalIndex

MIN_SHARED_WORDS = 3  # a hand-written item without expected_docs must share this many words with a chunk


@dataclass
class SectionCoverage:
    title: str
    section: str
    chunks: int
    items: int = 0
    kinds: Counter = field(default_factory=Counter)
    languages: Counter = field(default_factory=Counter)


@dataclass
class Coverage:
    sections: Dict[Section, SectionCoverage]
    placed: Dict[str, List[str]]  # item id -> chunk ids it touches
    unplaced: List[str]  # items that touch nothing (unanswerable, or naming no known document)

    def rows(self) -> List[SectionCoverage]:
        return list(self.sections.values())

    def uncovered(self) -> List[Section]:
        return [key for key, row in self.sections.items() if not row.items]

    def documents(self) -> Dict[str, List[SectionCoverage]]:
        docs: Dict[str, List[SectionCoverage]] = defaultdict(list)
        for row in self.sections.values():
            docs[row.title].append(row)
        return dict(docs)

    def summary(self) -> str:
        docs = self.documents()
        touched_docs = sum(1 for rows in docs.values() if any(r.items for r in rows))
        touched = sum(1 for r in self.sections.values() if r.items)
        return (f"coverage: {touched_docs}/{len(docs)} documents and {touched}/{len(self.sections)} sections "
                f"touched by at least one item; {len(self.unplaced)} item(s) touch no document")

    def table(self, limit: int = 40) -> str:
        """The CLI's coverage table: one line per document, then the untouched sections."""
        lines = [f"{'document':<36} {'sections':>9} {'items':>6}  kinds / languages"]
        for title, rows in self.documents().items():
            kinds: Counter = sum((r.kinds for r in rows), Counter())
            langs: Counter = sum((r.languages for r in rows), Counter())
            touched = sum(1 for r in rows if r.items)
            items = sum(r.items for r in rows)
            mix = " ".join(f"{k}:{v}" for k, v in sorted(kinds.items()))
            lang = " ".join(f"{k}:{v}" for k, v in sorted(langs.items()))
            lines.append(f"{_cut(title, 36):<36} {touched:>4}/{len(rows):<4} {items:>6}  {mix or '-'}"
                         f"{' / ' + lang if lang else ''}")
        gaps = self.uncovered()
        if gaps:
            lines.append(f"untouched sections ({len(gaps)}):")
            lines += [f"  {_cut(t, 36)} · {_cut(s, 40)}" for t, s in gaps[:limit]]
            if len(gaps) > limit:
                lines.append(f"  … and {len(gaps) - limit} more")
        lines.append(self.summary())
        return "\n".join(lines)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def compute_coverage(chunks: Sequence[Chunk], items: Sequence[TestItem],
                     index: Optional[LexicalIndex] = None) -> Coverage:
    """The coverage of `items` over `chunks` (see the module docstring for how an item is placed)."""
    index = index or LexicalIndex(chunks)
    by_id = {c.chunk_id: c for c in chunks}
    sections: Dict[Section, SectionCoverage] = {}
    for c in chunks:
        row = sections.setdefault((c.title, c.section), SectionCoverage(c.title, c.section, 0))
        row.chunks += 1
    placed: Dict[str, List[str]] = {}
    unplaced: List[str] = []
    for item in items:
        touched = [by_id[c] for c in item.chunk_ids if c in by_id] or _place(item, chunks, index)
        if not touched:
            unplaced.append(item.id)
            continue
        placed[item.id] = [c.chunk_id for c in touched]
        for key in dict.fromkeys((c.title, c.section) for c in touched):
            row = sections[key]
            row.items += 1
            row.kinds[item.kind or "hand-written"] += 1
            row.languages[item.language or "?"] += 1
    return Coverage(sections, placed, unplaced)


def _place(item: TestItem, chunks: Sequence[Chunk], index: LexicalIndex) -> List[Chunk]:
    """The chunk a hand-written item most likely came from (see the module docstring)."""
    query = f"{item.question} {item.ground_truth}"
    wanted = {d.strip().lower() for d in item.expected_docs if d.strip()}
    if wanted:
        among = [i for i, c in enumerate(chunks) if c.title.lower() in wanted]
        if not among:
            return []
        hits = index.search(query, k=1, among=among)
        return [hits[0][0]] if hits else [chunks[among[0]]]
    hits = index.search(query, k=1)
    if not hits:
        return []
    shared: Set[str] = set(content_words(query)) & set(content_words(hits[0][0].text))
    return [hits[0][0]] if len(shared) >= MIN_SHARED_WORDS else []
