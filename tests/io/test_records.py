"""records: lossless dict form of results, and the flat row used by tables and CSV."""
import json

import pytest

from evaluator import OfflineJudge, RAGEvaluator
from evaluator.model import (
    METHOD_BLEND, METHOD_FALLBACK, METHOD_RULE, METHOD_SKIPPED, METRICS, RULE_METRICS,
    EvalResult, EvalSample, MetricScore,
)
from evaluator.io.records import (
    flat_row, result_from_compact_record, result_from_record, result_to_compact_record, result_to_record,
    sample_from_record, sample_to_record,
)


def full_result() -> EvalResult:
    sample = EvalSample(
        question="ما هي عاصمة فرنسا؟", answer="Paris.\nIt is.", contexts=["Paris: capital", "Lyon: city"],
        ground_truth="Paris", sample_id="s-1", expected_answer_keywords=["Paris"], expected_docs=["Paris"],
        category="geo", metadata={"source": "wiki", "n": 3, "nested": {"a": [1, 2]}},
    )
    return EvalResult(
        sample_id="s-1",
        faithfulness=MetricScore("faithfulness", 0.123456789, "judge says ok", method=METHOD_BLEND,
                                 llm_score=0.1, heuristic_score=0.16, raw_reply='{"score": 0.1}',
                                 verdicts=[{"claim": "Paris", "verdict": 1}]),
        answer_relevancy=MetricScore("answer_relevancy", 0.5, "fallback", method=METHOD_FALLBACK,
                                     heuristic_score=0.5, raw_reply="garbage", error="No JSON score"),
        context_precision=MetricScore("context_precision", 1.0, "all relevant", method=METHOD_BLEND,
                                      llm_score=1.0, heuristic_score=1.0),
        context_recall=MetricScore("context_recall", 0.0, "No reference", skipped=True, method=METHOD_SKIPPED),
        answer_correctness=MetricScore("answer_correctness", 0.75, "close", method=METHOD_BLEND,
                                       llm_score=0.8, heuristic_score=0.6333),
        elapsed_sec=1.25,
        extra={"keyword_coverage": MetricScore("keyword_coverage", 1.0, "1/1", method=METHOD_RULE)},
        sample=sample,
    )


def test_record_round_trips_every_field_exactly():
    result = full_result()
    assert result_from_record(result_to_record(result, 7)) == result


def test_record_survives_json_and_keeps_unrounded_scores():
    record = result_to_record(full_result(), 7)
    back = json.loads(json.dumps(record))
    assert back["index"] == 7 and back["overall"] == full_result().overall()
    assert back["metrics"]["faithfulness"]["score"] == 0.123456789
    assert back["metrics"]["context_recall"]["score"] is None
    assert back["metrics"]["answer_relevancy"]["error"] == "No JSON score"
    assert result_from_record(back) == full_result()


def test_record_has_sample_text_and_all_metrics():
    record = result_to_record(full_result())
    assert record["question"] == "ما هي عاصمة فرنسا؟"
    assert record["contexts"] == ["Paris: capital", "Lyon: city"]
    assert record["category"] == "geo" and record["metadata"]["nested"] == {"a": [1, 2]}
    assert list(record["metrics"]) == list(METRICS) + ["keyword_coverage"]


def test_result_without_sample_round_trips_to_none():
    result = full_result()
    result.sample = None
    record = result_to_record(result)
    assert record["question"] is None
    assert result_from_record(record) == result


def test_offline_evaluator_result_round_trips():
    sample = EvalSample("What is RAG?", "Retrieval augmented generation.", ["RAG means retrieval augmented generation."],
                        "Retrieval augmented generation", sample_id="x", expected_docs=["RAG means"])
    result = RAGEvaluator(OfflineJudge()).evaluate(sample)
    assert result_from_record(json.loads(json.dumps(result_to_record(result, 0)))) == result


def test_sample_record_round_trip():
    sample = full_result().sample
    assert sample_from_record(sample_to_record(sample, 2)) == sample
    assert sample_from_record(sample_to_record(None)) is None


def test_flat_row_has_fixed_columns_and_none_for_skipped():
    row = flat_row(full_result())
    assert row["sample_id"] == "s-1" and row["category"] == "geo" and row["n_contexts"] == 2
    assert row["faithfulness"] == pytest.approx(0.1235) and row["context_recall"] is None
    assert row["keyword_coverage"] == 1.0 and row["expected_doc_recall"] is None
    assert row["answer_relevancy_method"] == METHOD_FALLBACK and row["expected_doc_recall_method"] is None
    assert row["overall"] == full_result().overall() and row["elapsed_sec"] == 1.25
    for name in METRICS + RULE_METRICS:
        assert name in row and f"{name}_method" in row


def test_compact_record_round_trips_without_the_sample_text():
    result = full_result()
    record = json.loads(json.dumps(result_to_compact_record(result)))
    assert "Paris: capital" not in json.dumps(record)
    assert record["metrics"]["faithfulness"]["score"] == 0.123456789
    assert "error" not in record["metrics"]["faithfulness"]  # defaults are left out
    assert result_from_compact_record(record, result.sample) == result


@pytest.mark.parametrize("embedded", [None, EvalSample("Q?", "A.", ["C."], sample_id="other")])
def test_compact_record_can_embed_its_own_sample(embedded):
    result = full_result()
    result.sample = embedded
    record = json.loads(json.dumps(result_to_compact_record(result, with_sample=True)))
    assert result_from_compact_record(record, full_result().sample) == result
