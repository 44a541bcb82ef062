"""DSPy Evaluate results (dspy 3.4, `Evaluate(..., save_as_json=..., save_as_csv=...)`).

Each row is the example merged with the program's prediction: a key both have is written twice, as
`example_<key>` (the devset's gold value) and `pred_<key>` (the program's), and the metric's score is under the
metric's name (`answer_exact_match`: true/false). Read plainly, the gold `example_answer` would be unread and
`pred_answer` unknown, so the reading is recognised by an example_/pred_ pair:
    pred_answer (pred_response, pred_output)       the answer
    example_answer (...)                           the reference (ground_truth)
    question, context(s)                           as their names say
    reasoning                                      the program's reasoning (ChainOfThought), kept as metadata
    each other number or true/false column         the metric's score, kept as external_dspy_<metric>
A devset saved alone (`[ex.toDict() for ex in devset]`) carries no such mark: its `answer` is the gold answer,
so load it with a target that answers each question and map `--mapping ground_truth=answer`.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from .grades import grade_column
from .readings import Reading, Tally
from .sources import Records

ANSWERS = ("answer", "response", "output")
PLAIN = ("question", "query", "context", "contexts", "reasoning", "rationale")


def detect(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
           ) -> Optional[Reading]:
    """The Reading of DSPy Evaluate results, else None."""
    pair = next((a for a in ANSWERS if f"pred_{a}" in by_key and f"example_{a}" in by_key), None)
    if pair is None:
        return None
    chosen = {"answer": by_key[f"pred_{pair}"], "ground_truth": by_key[f"example_{pair}"]}
    scores = [c for k, c in by_key.items() if k not in PLAIN and not k.startswith(("pred_", "example_"))
              and _score(first.get(c))]
    kept = [c for k, c in by_key.items() if c not in chosen.values() and c not in scores
            and k not in ("question", "query", "context", "contexts")]
    note = (f"DSPy Evaluate results: {chosen['answer']} (the program's) as answer, {chosen['ground_truth']} (the "
            "devset's gold) as ground_truth" + (f"; the metric ({', '.join(scores)}) kept as external_dspy_<metric>"
                                                 if scores else "")
            + "; kept as metadata: " + (", ".join(kept) or "none") + ".")
    return Reading("DSPy", mapping={f: c for f, c in chosen.items() if f not in mapping},
                   regroup=_renamer(scores) if scores else None, notes=(note,), quiet=tuple(kept))


def _score(value: Any) -> bool:
    """A metric's cell: a number or true/false (JSON), or their text (CSV: "True", "0.5")."""
    if isinstance(value, (bool, int, float)):
        return True
    if not isinstance(value, str):
        return False
    text = value.strip().casefold()
    try:
        float(text)
    except ValueError:
        return text in ("true", "false")
    return True


def _renamer(scores: List[str]) -> Any:
    def regroup(records: Records, tally: Tally) -> Records:
        for where, row in records:
            yield where, {(grade_column("dspy", k) if k in scores else k): v for k, v in row.items()}
    return regroup
