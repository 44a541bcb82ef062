"""The document id a context object carries: imported by the readers and by targets alike, so it imports nothing.

A context given as an object (a dict, or a LangChain Document) may carry its document's id: "id",
"doc_id", "document_id" or "doc_uri" (MLflow) on the object, or the same or "source" under its
"metadata". Without any of them, its title ("title", or metadata's) stands in: ragmeter's own test sets
name documents by title in `expected_docs` (generate/, the demo pipeline), so titles are their ids.
Retrieval metrics rank by these ids (metrics/retrieval.py).
"""
from __future__ import annotations

from typing import Any

_ID_KEYS = ("id", "doc_id", "document_id", "doc_uri")  # doc_uri: MLflow's retriever documents and expectations
_META_ID_KEYS = _ID_KEYS + ("source",)


def context_id(item: Any) -> str:
    """The document id a context object carries (see the module docstring), or ""."""
    if not isinstance(item, dict):
        item = {"metadata": getattr(item, "metadata", None)}  # a LangChain Document
    meta = item.get("metadata")
    found = next((item[k] for k in _ID_KEYS if item.get(k) not in (None, "")), None)
    if found is None and isinstance(meta, dict):
        found = next((meta[k] for k in _META_ID_KEYS if meta.get(k) not in (None, "")), None)
    if found is None:  # a title is the id expected_docs use for ragmeter's own test sets
        found = item.get("title") or (meta.get("title") if isinstance(meta, dict) else None)
    return str(found).strip() if isinstance(found, (str, int, float)) and not isinstance(found, bool) else ""
