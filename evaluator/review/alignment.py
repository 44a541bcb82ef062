"""Teach the judge from its reviewers (opt-in): few-shot examples built from reviewed disagreements.

From a run's reviews, the samples where a reviewer disagreed with the judge and gave their own
score become examples: the sample, the judge's (wrong) score and verdict, the reviewer's score
and note. A named set of them is saved in the run history, a new version each time; a later run
with `--align-with NAME` (or NAME@vN) adds them to each metric's prompt and records the set in
its settings.

The examples are user text (samples, notes), so they go inside their own data fence, after a
line ragmeter writes saying they are data; the fence markers are removed from them, as from the
sample under judgement (see metrics.prompts).

`measure_alignment` proves the effect honestly: it splits the reviewed samples in two (seeded),
builds the examples from one part only, and measures agreement with the reviewers on the other
part, before and after. No sample it learned from is ever measured.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ..analysis.agreement import spearman
from ..analysis.stats import bootstrap_ci, mean_std, paired_bootstrap_ci
from ..errors import ReviewError
from ..scoring.evaluation import Language, RAGEvaluator
from ..metrics.examples import MAX_TEXT, Example, ExampleSet, aligned_metric
from ..metrics.metric import Metric
from ..model import EvalResult, EvalSample
from ..store.reviews import DISAGREE, ReviewStore
from .exam_items import is_exam_sample

# --- building and storing ---------------------------------------------------------------------

def _verdict(result: EvalResult, metric: str) -> str:
    ms = result.scores[metric]
    if ms.verdicts:
        return json.dumps(ms.verdicts, ensure_ascii=False)[:MAX_TEXT]
    return (ms.reasoning or "")[:MAX_TEXT]


def build_example_set(store: ReviewStore, run_id: str, *, metrics: Optional[Iterable[str]] = None, limit: int = 4,
                      indices: Optional[Iterable[int]] = None) -> ExampleSet:
    """Examples from the run's reviewed disagreements (largest gap first, `limit` per metric), only
    from the samples in `indices` when given (the training part of a split)."""
    results = dict(store.runs.indexed_results(run_id))
    allowed = None if indices is None else set(indices)
    wanted = None if metrics is None else set(metrics)
    found: Dict[str, List[Tuple[float, Example]]] = {}
    for r in store.reviews(run_id):
        result = results.get(r.index)
        if r.verdict != DISAGREE or r.human_score is None or result is None or result.sample is None:
            continue
        if (allowed is not None and r.index not in allowed) or (wanted is not None and r.metric not in wanted):
            continue
        ms = result.scores.get(r.metric)
        if ms is None or ms.skipped or is_exam_sample(result.sample):  # the exam's items never teach a judge
            continue
        s = result.sample
        example = Example(s.question, s.answer, tuple(s.contexts), s.ground_truth or "", round(ms.score, 4),
                          _verdict(result, r.metric), round(r.human_score, 4), r.note, f"{run_id}:{r.index}")
        found.setdefault(r.metric, []).append((abs(ms.score - r.human_score), example))
    return ExampleSet(examples={m: tuple(e for _, e in sorted(items, key=lambda p: -p[0])[:limit])
                                for m, items in found.items()})


def save_example_set(store: ReviewStore, name: str, built: ExampleSet) -> ExampleSet:
    """Store `built` as the next version of `name`; returns the saved set."""
    name = name.strip()
    if not name or "@" in name:
        raise ReviewError(f"example set name {name!r}: give a name without '@' (versions are added as @vN)")
    if not any(built.examples.values()):
        raise ReviewError("no reviewed disagreements with a corrected score to learn from: review some samples "
                          "first (disagree, and give the score you would give)")
    rows = store.runs.query("SELECT MAX(version) FROM example_sets WHERE name = ?", (name,))
    version = int(rows[0][0] or 0) + 1
    saved = replace(built, name=name, version=version,
                    created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    store.runs.write("INSERT INTO example_sets (name, version, created_at, body) VALUES (?, ?, ?, ?)",
                      (name, version, saved.created_at, json.dumps(saved.to_dict(), ensure_ascii=False)))
    return saved


def load_example_set(store: ReviewStore, spec: str) -> ExampleSet:
    """The set named `spec` ("name" for its latest version, or "name@v2"); ReviewError when unknown."""
    name, _, version = spec.partition("@")
    if version:
        rows = store.runs.query("SELECT body FROM example_sets WHERE name = ? AND version = ?",
                                 (name, int(version.lstrip("v") or 0)))
    else:
        rows = store.runs.query("SELECT body FROM example_sets WHERE name = ? ORDER BY version DESC LIMIT 1",
                                 (name,))
    if not rows:
        known = ", ".join(list_example_sets(store)) or "none yet"
        raise ReviewError(f"no example set {spec!r} in {store.runs.path} (saved sets: {known}); "
                          "make one with: ragmeter review align RUN_ID --name NAME")
    return ExampleSet.from_dict(json.loads(rows[0][0]))


def list_example_sets(store: ReviewStore) -> List[str]:
    return [f"{n}@v{v}" for n, v in store.runs.query("SELECT name, version FROM example_sets ORDER BY name, version")]


# --- the honest proof: learn on one part, measure on the other ------------------------------------

@dataclass(frozen=True)
class AlignmentCheck:
    """Agreement with the reviewers on held-out samples, before and after adding the examples."""

    metric: str
    train: Tuple[int, ...]
    test: Tuple[int, ...]
    n_examples: int
    error_before: Optional[float]  # mean |judge - human| on the test part
    error_before_ci: Optional[Tuple[float, float]]
    error_after: Optional[float]
    error_after_ci: Optional[Tuple[float, float]]
    change_ci: Optional[Tuple[float, float]]  # paired CI of (after - before) error: below 0 is better
    spearman_before: Optional[float]
    spearman_after: Optional[float]


def split_reviewed(indices: Iterable[int], test_share: float = 0.5, seed: int = 0) -> Tuple[List[int], List[int]]:
    """(train, test): a seeded shuffle of the reviewed sample indices, `test_share` of them held out."""
    pool = sorted(set(indices))
    random.Random(seed).shuffle(pool)
    n_test = max(1, round(len(pool) * test_share)) if len(pool) > 1 else 0
    return sorted(pool[n_test:]), sorted(pool[:n_test])


def _human_means(store: ReviewStore, run_id: str, metric: str) -> Dict[int, float]:
    values: Dict[int, List[float]] = {}
    results = dict(store.runs.indexed_results(run_id))
    for r in store.reviews(run_id, metric=metric):
        human = r.human_score
        if human is None and r.verdict != DISAGREE and r.index in results:
            human = results[r.index].scores[metric].score
        if human is not None:
            values.setdefault(r.index, []).append(human)
    return {i: sum(v) / len(v) for i, v in values.items()}


def _scores(evaluator: RAGEvaluator, samples: Sequence[EvalSample], metric: str) -> List[float]:
    return [evaluator.evaluate(s).scores[metric].score for s in samples]


def measure_alignment(store: ReviewStore, run_id: str, metric: str, judge: Any, *, test_share: float = 0.5,
                      seed: int = 0, limit: int = 4, language: Language = "auto",
                      base: Optional[Metric] = None) -> AlignmentCheck:
    """Split the run's reviewed samples, build examples from the train part, score the test part
    with and without them (`judge`), and compare each with the reviewers' scores."""
    from ..metrics.registry import get_metric

    humans = _human_means(store, run_id, metric)
    train, test = split_reviewed(humans, test_share, seed)
    if not train or not test:
        raise ReviewError(f"{metric}: {len(humans)} reviewed sample(s); a split needs at least two")
    built = build_example_set(store, run_id, metrics=[metric], indices=train, limit=limit)
    examples = built.examples.get(metric, ())
    if {e.source for e in examples} & {f"{run_id}:{i}" for i in test}:  # never measure what it learned
        raise RuntimeError("alignment split leaked a training example into the test part")
    metric_def = base or get_metric(metric)
    samples_by_index = dict(enumerate(store.runs.samples(run_id)))
    samples = [samples_by_index[i] for i in test]
    human = [humans[i] for i in test]
    before = _scores(RAGEvaluator(judge, language=language, metrics=[metric_def]), samples, metric)
    after = _scores(RAGEvaluator(judge, language=language, metrics=[aligned_metric(metric_def, examples)]),
                    samples, metric)
    err_b = [abs(a - b) for a, b in zip(before, human)]
    err_a = [abs(a - b) for a, b in zip(after, human)]
    return AlignmentCheck(metric, tuple(train), tuple(test), len(examples), mean_std(err_b)[0],
                          bootstrap_ci(err_b, seed=seed), mean_std(err_a)[0], bootstrap_ci(err_a, seed=seed),
                          paired_bootstrap_ci([a - b for a, b in zip(err_a, err_b)], seed=seed),
                          spearman(before, human) if len(test) >= 2 else None,
                          spearman(after, human) if len(test) >= 2 else None)
