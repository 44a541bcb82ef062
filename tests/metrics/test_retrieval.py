"""Retrieval metrics by document id: hand-computed values on ranked fixtures, and agreement with scikit-learn."""
from __future__ import annotations

import math
from typing import Dict, List, Optional

import pytest

from evaluator import EvalSample, OfflineJudge, RAGEvaluator
from evaluator.errors import MetricError
from evaluator.metrics.registry import get_metric, resolve_metrics
from evaluator.metrics.retrieval import NO_IDS, NO_RELEVANCE, NONE_RELEVANT, canonical, score

L2, L3, L4, L5 = (math.log2(n) for n in (2, 3, 4, 5))


def row(ids: Optional[List[str]], docs: Optional[List[str]] = None,
        relevance: Optional[Dict[str, float]] = None) -> EvalSample:
    return EvalSample("q", "a", ["c"], sample_id="s1", expected_docs=docs, retrieval_ids=ids, relevance=relevance)


BINARY = row(["d2", "d1", "d9", "d3"], docs=["d1", "d3", "d7"])  # relevant at ranks 2 and 4; d7 never retrieved
DUPLICATE = row(["d1", "d1", "d2"], docs=["d1", "d2"])  # the repeat at rank 2 gains nothing and keeps its rank
MISSING_ID = row(["", "d1"], docs=["d1"])  # a document without an id at rank 1
SHORT = row(["d1"], docs=["d1", "d2"])  # k larger than the list
GRADED = row(["a", "b", "c", "d"], relevance={"a": 1, "b": 3, "c": 0, "d": 2, "e": 3})
TIES = row(["x", "y", "z"], relevance={"x": 2, "y": 2, "z": 2})  # equal grades: any order of them is ideal
CASE = row([" D1 ", "d2"], docs=["d1"])  # ids compared trimmed and case-insensitively

CASES = [
    (BINARY, "hit", 1, 0.0),
    (BINARY, "hit", 2, 1.0),
    (BINARY, "recall", 2, 1 / 3),
    (BINARY, "recall", 4, 2 / 3),
    (BINARY, "precision", 2, 1 / 2),
    (BINARY, "precision", 4, 2 / 4),
    (BINARY, "mrr", 5, 1 / 2),
    (BINARY, "mrr", 1, 0.0),
    (BINARY, "ndcg", 4, (1 / L3 + 1 / L5) / (1 + 1 / L3 + 1 / L4)),
    (BINARY, "ndcg_exp", 4, (1 / L3 + 1 / L5) / (1 + 1 / L3 + 1 / L4)),  # 0/1 grades: both gains agree
    (DUPLICATE, "recall", 2, 1 / 2),
    (DUPLICATE, "precision", 3, 2 / 3),
    (DUPLICATE, "ndcg", 3, (1 + 1 / L4) / (1 + 1 / L3)),
    (MISSING_ID, "mrr", 5, 1 / 2),
    (MISSING_ID, "precision", 2, 1 / 2),
    (MISSING_ID, "ndcg", 5, (1 / L3) / 1),
    (SHORT, "precision", 5, 1 / 5),  # divided by k, as trec_eval
    (SHORT, "recall", 10, 1 / 2),
    (SHORT, "ndcg", 10, 1 / (1 + 1 / L3)),
    (SHORT, "hit", 10, 1.0),
    (GRADED, "ndcg", 3, (1 + 3 / L3 + 0) / (3 + 3 / L3 + 2 / L4)),
    (GRADED, "ndcg_exp", 3, (1 + 7 / L3 + 0) / (7 + 7 / L3 + 3 / L4)),
    (GRADED, "ndcg", 5, (1 + 3 / L3 + 0 + 2 / L5) / (3 + 3 / L3 + 2 / L4 + 1 / L5)),
    (GRADED, "recall", 4, 3 / 4),  # grade 0 is not relevant: a, b, d of a, b, d, e
    (GRADED, "precision", 3, 2 / 3),
    (GRADED, "mrr", 5, 1.0),
    (TIES, "ndcg", 3, 1.0),
    (TIES, "ndcg_exp", 2, 1.0),
    (CASE, "hit", 1, 1.0),
]


@pytest.mark.parametrize("sample, family, k, expected", CASES)
def test_each_metric_equals_the_hand_computed_value(sample, family, k, expected):
    got = score(family, k, sample)
    assert not got.skipped, got.reasoning
    assert got.score == pytest.approx(expected, abs=1e-12)
    assert got.name == f"{family}@{k}"


@pytest.mark.parametrize("sample, reason", [
    (row(None, docs=["d1"]), NO_IDS),
    (row([], docs=["d1"]), NO_IDS),
    (row(["d1", "d2"]), NO_RELEVANCE),
    (row(["d1"], relevance={"d1": 0}), NONE_RELEVANT),
    (row(["", ""], docs=["d1"]), "None of the 2 retrieved documents has an id"),
])
def test_a_row_without_ids_or_judgments_is_na_with_its_reason_never_zero(sample, reason):
    for family in ("hit", "recall", "precision", "mrr", "ndcg", "ndcg_exp"):
        got = score(family, 5, sample)
        assert got.skipped and reason in got.reasoning


def test_the_drill_down_breakdown_names_each_rank():
    got = score("ndcg_exp", 3, GRADED)
    assert [(v["rank"], v["doc_id"], v["grade"], v["gain"]) for v in got.verdicts] == [
        (1, "a", 1.0, 1.0), (2, "b", 3.0, 7.0), (3, "c", 0.0, 0.0)]
    notes = [v["note"] for v in score("ndcg", 3, DUPLICATE).verdicts]
    assert notes == ["", "duplicate of rank 1", ""]
    assert "b (rank 2)" in got.reasoning


@pytest.mark.parametrize("typed, name", [("ndcg@5", "ndcg@5"), ("ndcg", "ndcg@5"), ("mrr", "mrr@5"),
                                         ("hit@3", "hit@3"), ("NDCG_EXP@10", "ndcg_exp@10")])
def test_k_is_part_of_the_name_and_a_bare_name_means_five(typed, name):
    assert get_metric(typed).name == name == canonical(typed)


@pytest.mark.parametrize("typed", ["ndcg@0", "hit@99999"])
def test_an_impossible_k_is_refused_naming_the_metric(typed):
    with pytest.raises(MetricError, match=typed):
        get_metric(typed)


def test_an_evaluation_scores_them_without_a_judge_call_and_leaves_them_out_of_overall():
    report = RAGEvaluator(OfflineJudge(), metrics=["faithfulness", "ndcg@3", "mrr", "hit@1"]).evaluate_dataset(
        [BINARY, row(None, docs=["d1"])])
    first, second = report.results
    assert first.scores["mrr@5"].score == 0.5 and first.scores["hit@1"].score == 0.0
    assert second.scores["ndcg@3"].skipped and NO_IDS in second.scores["ndcg@3"].reasoning
    assert first.overall_score() == first.scores["faithfulness"].score
    assert [m.name for m in resolve_metrics(["ndcg@3", "ndcg@5"])] == ["ndcg@3", "ndcg@5"]


# --- agreement with scikit-learn's ndcg_score ---------------------------------------------------

sklearn_metrics = pytest.importorskip("sklearn.metrics")


def sklearn_ndcg(sample: EvalSample, k: int, exponential: bool) -> float:
    """sklearn's nDCG of our ranking: the retrieved list (repeats and id-less ranks as grade-0 fillers),
    padded with grade-0 fillers to k, then the relevant documents never retrieved, ranked below all."""
    grades = {d.strip().casefold(): float(g) for d, g in (sample.relevance or {}).items()} or \
        {d.strip().casefold(): 1.0 for d in sample.expected_docs or []}
    seen, y_true = set(), []
    for doc in sample.retrieval_ids or []:
        key = doc.strip().casefold()
        y_true.append(0.0 if not key or key in seen else grades.get(key, 0.0))
        seen.add(key)
    y_true += [0.0] * max(0, k - len(y_true))
    y_true += [g for d, g in grades.items() if d not in seen]
    gain = [2.0 ** g - 1.0 for g in y_true] if exponential else y_true
    y_score = [float(len(gain) - i) for i in range(len(gain))]  # strictly falling: no ties in the ranking
    return float(sklearn_metrics.ndcg_score([gain], [y_score], k=k))


@pytest.mark.parametrize("sample", [BINARY, DUPLICATE, MISSING_ID, SHORT, GRADED, TIES, CASE,
                                    row([f"d{i}" for i in range(12)], relevance={f"d{i}": (i * 7) % 4 for i in range(15)})])
@pytest.mark.parametrize("k", [1, 2, 3, 5, 10])
@pytest.mark.parametrize("family", ["ndcg", "ndcg_exp"])
def test_ndcg_agrees_with_sklearn_to_1e9(sample, k, family):
    ours = score(family, k, sample).score
    assert abs(ours - sklearn_ndcg(sample, k, family == "ndcg_exp")) < 1e-9
