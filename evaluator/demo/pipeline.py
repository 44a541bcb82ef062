"""A tiny RAG pipeline to try targets with: lexical retrieval (BM25) and an extractive answer.

    rag_answer(question) -> (answer, docs)   docs: [{"title", "body", "similarity"}], the tutorial's shape
    agent_answer(question) -> {"answer", "tool_calls"}   the same work done as two tool steps
    chat(messages) -> {"answer", "contexts"}   a chat turn: the last user message, read with the one before

No model, no network: the answer is the help-page sentence that shares the most words with the
question, so its scores move only when retrieval or the question changes.
"""
from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache
from typing import Any, Dict, List, Tuple

from ..text import content_words, sentences
from .documents import DOCUMENTS

TOP_K = 3
NOT_FOUND = "I could not find this in the help pages."
_K1, _B = 1.2, 0.75


@lru_cache(maxsize=1)
def _index() -> Tuple[List[Counter], Dict[str, float], float]:
    """Per-document term counts, each term's IDF, and the mean document length."""
    docs = [Counter(content_words(f"{d['title']} {d['title']} {d['body']}")) for d in DOCUMENTS]
    df = Counter(term for doc in docs for term in doc)
    n = len(docs)
    idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
    return docs, idf, sum(sum(d.values()) for d in docs) / n


def search(question: str, top_k: int = TOP_K) -> List[Dict[str, Any]]:
    """The best-matching documents by BM25, with their score as `similarity` (0 matches left out)."""
    docs, idf, mean_len = _index()
    terms = set(content_words(question))
    scored: List[Dict[str, Any]] = []
    for doc, source in zip(docs, DOCUMENTS):
        length = sum(doc.values())
        score = sum(idf[t] * doc[t] * (_K1 + 1) / (doc[t] + _K1 * (1 - _B + _B * length / mean_len))
                    for t in terms if t in doc)
        if score > 0:
            scored.append({**source, "similarity": round(score, 3)})
    return sorted(scored, key=lambda d: -d["similarity"])[:top_k]


def extract_answer(question: str, docs: List[Dict[str, Any]]) -> str:
    """The sentence of the top two documents that shares the most question words."""
    terms = set(content_words(question))
    best, best_overlap = NOT_FOUND, 0
    for doc in docs[:2]:
        for sentence in sentences(doc["body"]):
            overlap = len(terms & set(content_words(sentence)))
            if overlap > best_overlap:
                best, best_overlap = sentence.strip(), overlap
    return best


def rag_answer(question: str) -> Tuple[str, List[Dict[str, Any]]]:
    """Answer from the help pages: (answer text, retrieved documents)."""
    docs = search(question)
    return extract_answer(question, docs), docs


def agent_answer(question: str) -> Dict[str, Any]:
    """The same pipeline as an agent: a search_docs step, then a read_doc step on the best hit."""
    hits = search(question)
    calls = [{"name": "search_docs", "arguments": {"query": question},
              "output": [h["title"] for h in hits]}]
    if hits:
        calls.append({"name": "read_doc", "arguments": {"title": hits[0]["title"]},
                      "output": f"{hits[0]['title']}\n{hits[0]['body']}"})
    return {"answer": extract_answer(question, hits), "tool_calls": calls}


FOLLOW_UP_WORDS = 4  # a user turn this short ("And for students?") is read with the turn before it


def chat(messages: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Answer the last user message of an OpenAI-style `messages` list. A short follow-up that
    finds nothing alone is searched with the previous user message, so "And for students?" stays
    on topic."""
    users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    if not users:
        return {"answer": NOT_FOUND, "contexts": []}
    query = users[-1]
    docs = search(query)
    if not docs and len(users) > 1 and len(content_words(query)) <= FOLLOW_UP_WORDS:
        query = f"{users[-2]} {query}"
        docs = search(query)
    return {"answer": extract_answer(query, docs), "contexts": [f"{d['title']}\n{d['body']}" for d in docs]}
