"""A small BM25 index over chunks: the lexical retriever of the quality gate and the coverage map.

The gate asks it for the chunks nearest an "unanswerable" question (the judge then checks that
none of them answers it), and for a related chunk in another document (multi-chunk questions);
coverage uses it to place a hand-written question on the section it most likely came from.
Words are ragmeter's content words (stemmed, stop words dropped, English and Arabic).
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Dict, List, Optional, Sequence, Tuple

from ..text import content_words
from .chunking import Chunk

K1, B = 1.5, 0.75


class LexicalIndex:
    """BM25 (k1 1.5, b 0.75) over `chunks`; `search` gives (chunk, score) best first."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.chunks = list(chunks)
        self._terms = [Counter(content_words(f"{c.title} {c.section} {c.text}")) for c in self.chunks]
        self._lengths = [sum(t.values()) for t in self._terms]
        self._avg = (sum(self._lengths) / len(self._lengths)) if self._lengths else 1.0
        df: Counter = Counter()
        for terms in self._terms:
            df.update(terms.keys())
        n = len(self.chunks)
        self._idf: Dict[str, float] = {w: math.log(1 + (n - d + 0.5) / (d + 0.5)) for w, d in df.items()}

    def score(self, query_words: Sequence[str], i: int) -> float:
        terms, length = self._terms[i], self._lengths[i]
        total = 0.0
        for w in query_words:
            tf = terms.get(w, 0)
            if tf:
                total += self._idf[w] * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / (self._avg or 1.0)))
        return total

    def search(self, query: str, k: int = 4, *, among: Optional[Sequence[int]] = None) -> List[Tuple[Chunk, float]]:
        """The `k` best chunks for `query` (only those at indexes `among`, when given), score > 0."""
        words = list(dict.fromkeys(content_words(query)))
        indexes = range(len(self.chunks)) if among is None else among
        scored = [(self.score(words, i), i) for i in indexes]
        scored = [(s, i) for s, i in scored if s > 0]
        scored.sort(key=lambda p: (-p[0], p[1]))
        return [(self.chunks[i], s) for s, i in scored[:k]]
