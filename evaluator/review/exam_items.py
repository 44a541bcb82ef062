"""The built-in judge exam: items that need meaning, generated from the facts of review/exam_facts.py.

Every fact (a frame filled by one of its rows) makes four items per metric, one in each cell of
"high or low word overlap" x "label 1 or 0", so that counting shared words predicts nothing:

    metric              high overlap, 1   low overlap, 1      high overlap, 0          low overlap, 0
    faithfulness        near copy         other words         flipped / partly backed  other words, value swapped
                        (each over "source and more")
    answer_relevancy    near copy         other words         restates the question    another fact's answer
    context_precision   source and more   told in other words flipped                  neighbour / told, swapped
    context_recall      source and more   told in other words flipped                  told, value swapped
    answer_correctness  the source        other words         flipped                  other words, value swapped

(answer_relevancy reads the question and the answer; context_precision and context_recall read the one
context against the reference, `near`; faithfulness reads the answer against the source and its neighbour,
whose sentence holds the flipped word said of something else; answer_correctness the answer against `near`.) "Source and more" is the source followed by its neighbour, a passage that holds
the answer among other sentences on the subject. "Told in other words" is the subject as a heading followed
by `other`, so a passage names what it is about without the question's wording. Which of two wrong kinds a fact uses, and
which other fact lends a wrong answer, follow from the seed: `generate(seed)` gives the same items for the
same seed. The labels follow from the construction, never from anyone's opinion. bench/judge_exam.py
measures that the heuristics, which count words, score near chance on them.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Dict, FrozenSet, List, Mapping, Sequence, Tuple

from ..model import EvalSample
from .exam_facts import FRAMES, Frame, Row

EXAM_METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall", "answer_correctness")
SEED = 47
HIGH, LOW = "high", "low"  # word overlap of an item, by construction


@dataclass(frozen=True)
class ExamItem:
    """One exam question: a sample, the metric it tests, and its label (1 = the good side, 0 = the bad).
    `kind` says how it was built ("near copy", "flipped", ...) and `overlap` whether it shares many words."""

    item_id: str
    metric: str
    label: int
    sample: EvalSample
    lang: str
    kind: str = ""
    overlap: str = ""


@dataclass(frozen=True)
class Fact:
    """A frame filled by one row: every wording of the frame as text."""

    key: str
    lang: str
    texts: Mapping[str, str]

    def __getitem__(self, wording: str) -> str:
        return self.texts[wording]


WORDINGS = ("question", "source", "near", "other", "other_wrong", "flipped", "restated", "neighbour", "extra")


def fill(template: str, row: Row) -> str:
    """`template` with {s}/{v}/{w}/{n} from `row`; {S}/{V}/{W} the same with a capital first letter."""
    slots = dict(row)
    slots.update({k.upper(): v[:1].upper() + v[1:] for k, v in row.items()})
    return template.format(**slots)


def facts() -> List[Fact]:
    """Every frame filled by each of its rows, in the tables' order."""
    out = []
    for frame in FRAMES:
        for i, row in enumerate(frame.rows):
            texts = {w: fill(getattr(frame, w), row) for w in WORDINGS}
            texts["told"] = told(frame, row, texts["other"])
            texts["told_wrong"] = told(frame, row, texts["other_wrong"])
            out.append(Fact(f"{frame.lang}-{frame.key}-{i + 1}", frame.lang, texts))
    return out


def told(frame: Frame, row: Row, other: str) -> str:
    """The passage in other words: its subject as a heading, then `other` (whose first letter is lowered
    unless it opens with a name)."""
    body = other if frame.other.startswith("{") else other[:1].lower() + other[1:]
    return f"{fill('{S}', row)}: {body}"


# One item maker per metric: (fact, another fact, the seeded choice) -> four (label, overlap, kind, sample).
Cell = Tuple[int, str, str, EvalSample]
Maker = Callable[[Fact, Fact, bool], List[Cell]]


def _sample(fact: Fact, answer: str, contexts: Sequence[str], reference: str = "") -> EvalSample:
    return EvalSample(fact["question"], answer, list(contexts), ground_truth=reference or None)


def _faithfulness(f: Fact, other: Fact, pick: bool) -> List[Cell]:
    wrong = ("flipped", f["flipped"]) if pick else ("partly backed", f["near"] + f["extra"])
    passage = [f["source"] + " " + f["neighbour"]]  # the neighbour holds the flipped word, said of something else
    return [(1, HIGH, "near copy", _sample(f, f["near"], passage)),
            (1, LOW, "other words", _sample(f, f["other"], passage)),
            (0, HIGH, wrong[0], _sample(f, wrong[1], passage)),
            (0, LOW, "other words, value swapped", _sample(f, f["other_wrong"], passage))]


def _relevancy(f: Fact, other: Fact, pick: bool) -> List[Cell]:
    return [(1, HIGH, "near copy", _sample(f, f["near"], [f["source"]])),
            (1, LOW, "other words", _sample(f, f["other"], [f["source"]])),
            (0, HIGH, "restates the question", _sample(f, f["restated"], [f["source"]])),
            (0, LOW, "another fact's answer", _sample(f, other["other"], [f["source"]]))]


def _precision(f: Fact, other: Fact, pick: bool) -> List[Cell]:
    wrong = ("neighbour", f["neighbour"]) if pick else ("told in other words, value swapped", f["told_wrong"])
    return _contexts(f, wrong)


def _recall(f: Fact, other: Fact, pick: bool) -> List[Cell]:
    return _contexts(f, ("told in other words, value swapped", f["told_wrong"]))


def _contexts(f: Fact, low_wrong: Tuple[str, str]) -> List[Cell]:
    return [(1, HIGH, "the source and more", _sample(f, f["near"], [f["source"] + " " + f["neighbour"]], f["near"])),
            (1, LOW, "told in other words", _sample(f, f["near"], [f["told"]], f["near"])),
            (0, HIGH, "flipped", _sample(f, f["near"], [f["flipped"]], f["near"])),
            (0, LOW, low_wrong[0], _sample(f, f["near"], [low_wrong[1]], f["near"]))]


def _correctness(f: Fact, other: Fact, pick: bool) -> List[Cell]:
    return [(1, HIGH, "the source", _sample(f, f["source"], [f["source"]], f["near"])),
            (1, LOW, "other words", _sample(f, f["other"], [f["source"]], f["near"])),
            (0, HIGH, "flipped", _sample(f, f["flipped"], [f["source"]], f["near"])),
            (0, LOW, "other words, value swapped", _sample(f, f["other_wrong"], [f["source"]], f["near"]))]


MAKERS: Dict[str, Maker] = {"faithfulness": _faithfulness, "answer_relevancy": _relevancy,
                            "context_precision": _precision, "context_recall": _recall,
                            "answer_correctness": _correctness}


def generate(seed: int = SEED) -> List[ExamItem]:
    """Four items per fact and metric (module docstring), metric by metric; the same seed, the same items."""
    rng = random.Random(seed)
    all_facts = facts()
    out = []
    for metric in EXAM_METRICS:
        for fact in all_facts:
            lender = rng.choice([f for f in all_facts if f.lang == fact.lang and f.key[:-2] != fact.key[:-2]])
            for label, overlap, kind, sample in MAKERS[metric](fact, lender, rng.random() < 0.5):
                item_id = f"exam-{fact.key}-{metric}-{label}{overlap[0]}"
                sample = EvalSample(sample.question, sample.answer, sample.contexts,
                                    ground_truth=sample.ground_truth, sample_id=item_id)
                out.append(ExamItem(item_id, metric, label, sample, fact.lang, kind, overlap))
    return out


def builtin_exam() -> List[ExamItem]:
    """The built-in items (the default seed), metric by metric."""
    return generate(SEED)


@lru_cache(maxsize=1)
def exam_questions() -> FrozenSet[str]:
    """Every question the built-in exam and its probes ask (all seeds: the questions come from the facts)."""
    return frozenset(f["question"] for f in facts())


def is_exam_sample(sample: EvalSample) -> bool:
    """True for a sample that asks one of the exam's questions: it must never teach a judge (few-shot
    examples), or the exam would grade the judge on what it was shown."""
    return sample.question in exam_questions()
