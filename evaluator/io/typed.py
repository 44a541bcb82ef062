"""A sample typed by hand into a form (the dashboard's Spot check): question, answer, a box of contexts,
an optional reference."""
from __future__ import annotations

from typing import List, Optional

from ..model import EvalSample

SEPARATOR = "---"  # a line of its own between contexts that span lines
TYPED_ID = "spot-check"


def split_contexts(text: Optional[str]) -> List[str]:
    """Contexts typed in one box: one per line, or blocks separated by a line of ---."""
    lines = (text or "").splitlines()
    if not any(line.strip() == SEPARATOR for line in lines):
        return [line.strip() for line in lines if line.strip()]
    blocks: List[str] = []
    current: List[str] = []
    for line in lines + [SEPARATOR]:
        if line.strip() == SEPARATOR:
            blocks.append("\n".join(current).strip())
            current = []
        else:
            current.append(line)
    return [b for b in blocks if b]


def typed_sample(question: str, answer: str, contexts: str, ground_truth: str = "") -> EvalSample:
    """The sample the fields hold, trimmed; an empty reference is none."""
    return EvalSample(question.strip(), answer.strip(), split_contexts(contexts), ground_truth.strip() or None,
                      sample_id=TYPED_ID)
