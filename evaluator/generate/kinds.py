"""The kinds of test item, in one registry: what each is written from and how it is asked for.

    single        one fact from one chunk
    multi         needs two chunks: two sections of one document, or a related chunk of another
    summary       an overview of one document, from up to four of its chunks spread over it
    unanswerable  on a chunk's topic but not answered by the documents (the pipeline should say so)
    variant       a fact from one chunk, asked the way users type: paraphrased, misspelt
    cloze         offline only: a sentence with a word blanked (retrieval checks, no judge)

A kind is an entry in KINDS; `--kinds single=3,multi=1` weights the mix.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

from ..errors import RagmeterError
from .prompts import MULTI_TASK, SINGLE_TASK, SUMMARY_TASK, VARIANT_TASK

ONE, TWO, DOCUMENT = "one chunk", "two chunks", "document"


@dataclass(frozen=True)
class Kind:
    name: str
    source: str  # ONE, TWO or DOCUMENT: what a question of this kind is written from
    task: Optional[str]  # the writing task (None: the kind has its own prompt)
    label: str


KINDS: Dict[str, Kind] = {k.name: k for k in (
    Kind("single", ONE, SINGLE_TASK, "single fact"),
    Kind("multi", TWO, MULTI_TASK, "needs two chunks"),
    Kind("summary", DOCUMENT, SUMMARY_TASK, "document summary"),
    Kind("unanswerable", ONE, None, "not in the documents"),
    Kind("variant", ONE, VARIANT_TASK, "user-style variant"),
)}
OFFLINE_KIND = Kind("cloze", ONE, None, "cloze (offline, retrieval checks only)")
DEFAULT_MIX: Dict[str, float] = {"single": 4, "multi": 2, "summary": 1, "unanswerable": 1, "variant": 2}


def parse_mix(text: str) -> Dict[str, float]:
    """`single=3,multi=1` (or `single,multi`: equal weights) as {kind: weight}; RagmeterError when wrong."""
    mix: Dict[str, float] = {}
    for part in (p.strip() for p in (text or "").split(",") if p.strip()):
        name, _, weight = part.partition("=")
        name = name.strip()
        if name not in KINDS:
            raise RagmeterError(f"--kinds: unknown kind {name!r}; choose from {', '.join(KINDS)}")
        try:
            mix[name] = float(weight) if weight.strip() else 1.0
        except ValueError:
            raise RagmeterError(f"--kinds: weight {weight!r} of {name} is not a number") from None
        if mix[name] < 0:
            raise RagmeterError(f"--kinds: weight of {name} is negative")
    if not any(mix.values()):
        raise RagmeterError("--kinds: give at least one kind a weight above 0, e.g. single=3,multi=1")
    return {k: v for k, v in mix.items() if v > 0}
