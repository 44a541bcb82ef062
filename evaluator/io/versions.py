"""Dataset versions: a content hash of a run's test set, recorded in its settings.

The version covers what each row asks and expects (sample id, question, reference, expected keywords,
documents and tools, graded relevance, category), normalised: text trimmed, lists in their order, keys
sorted. It leaves out what the pipeline under test produced (answer, contexts, tool calls, retrieval
ids, a target's latency and errors), so two runs of two pipelines on the same test set share a version,
and a re-scored run keeps its run's. Row order does not matter (the rows' digests are sorted before
they are hashed): a shuffled file is the same version.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Dict, Iterable, Optional

from ..conversation import USER
from ..model import EvalSample

VERSION_KEY = "dataset_version"  # run settings key: the 12-hex-digit version
ROWS_KEY = "dataset_rows"  # run settings key: how many rows the version covers
_ASKS = ("sample_id", "question", "ground_truth", "expected_answer_keywords", "expected_docs", "expected_tools",
         "relevance", "category")


def _normal(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (list, tuple)):
        return [_normal(v) for v in value]
    if isinstance(value, dict):
        return {str(k).strip(): _normal(v) for k, v in value.items()}
    return value


def row_digest(sample: EvalSample) -> str:
    """The hash of one row's test-set fields (see the module docstring)."""
    fields: Dict[str, Any] = {name: _normal(getattr(sample, name)) for name in _ASKS}
    if sample.conversation is not None:  # what the user says in each turn, not what was replied
        fields["question"] = [t.content.strip() for t in sample.conversation.turns if t.role == USER]
    text = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def dataset_version(samples: Iterable[EvalSample]) -> str:
    """The version of a test set: 12 hex digits of the hash of its sorted row digests."""
    return version_of_digests(row_digest(s) for s in samples)


def version_of_digests(digests: Iterable[str]) -> str:
    """The version from the rows' digests, in any order (a streamed run collects them as rows arrive)."""
    return hashlib.sha256("\n".join(sorted(digests)).encode("ascii")).hexdigest()[:12]


def version_settings(samples: Iterable[EvalSample]) -> Dict[str, Any]:
    """The run settings that record the test set's version and size."""
    rows = list(samples)
    return {VERSION_KEY: dataset_version(rows), ROWS_KEY: len(rows)}


def version_of(settings: Dict[str, Any]) -> Optional[str]:
    """A stored run's dataset version, or None for a run saved before versions were recorded."""
    value = settings.get(VERSION_KEY)
    return str(value) if value else None
