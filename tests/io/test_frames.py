"""Results frames and Parquet: lossless round trips, score_frame = the single-process scores, the streaming tally."""
import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from evaluator import OfflineJudge, RAGEvaluator
from evaluator.analysis.stats import summarize
from evaluator.cli.command import main
from evaluator.engines.partition import ROW_COLUMN, score_frame
from evaluator.engines.summary import RunTally
from evaluator.io.datasets import load_dataset, samples_from_rows
from evaluator.io.frames import (
    read_results_parquet,
    result_columns,
    results_frame,
    results_parquet,
)
from evaluator.io.records import result_to_record
from evaluator.model import (
    METHOD_BLEND,
    METHOD_FALLBACK,
    METRICS,
    RULE_METRICS,
    EvalResult,
    EvalSample,
    MetricScore,
)
from evaluator.runs.run import RunConfig

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data" / "sample.jsonl"
NAMES = METRICS + RULE_METRICS


def record(result: EvalResult, index: int) -> dict:
    data = result_to_record(result, index)
    data.pop("elapsed_sec")
    return data


def judged_result() -> EvalResult:
    """A result with every kind of detail: blend with verdicts, fallback with error, skip, rule metric, labels."""
    sample = EvalSample("Q =1+1", "A", ["c1", "c2"], None, "id-1", ["k"], None, "cat",
                        {"human_labels": {"faithfulness": 1.0}, "source": "web"})
    scores = {m: MetricScore(m, 0.25, "why", method=METHOD_BLEND, llm_score=0.2, heuristic_score=0.3751,
                             raw_reply='{"score": 0.2}', verdicts=[{"claim": "x", "verdict": "yes"}]) for m in METRICS}
    scores["answer_relevancy"] = MetricScore("answer_relevancy", 0.41, "fell back", method=METHOD_FALLBACK,
                                             heuristic_score=0.41, error="JudgeError: HTTP 500")
    scores["context_recall"] = MetricScore("context_recall", 0.0, "No reference", skipped=True, method="skipped")
    extra = {"keyword_coverage": MetricScore("keyword_coverage", 1.0, "1/1", method="rule")}
    return EvalResult("id-1", **scores, elapsed_sec=0.5, extra=extra, sample=sample)


def test_parquet_round_trip_is_lossless(tmp_path):
    offline = RAGEvaluator(OfflineJudge()).evaluate_dataset(load_dataset(SAMPLE)).results
    pairs = [(0, judged_result())] + [(i + 1, r) for i, r in enumerate(offline)]
    path = tmp_path / "r.parquet"
    assert results_parquet(pairs, path, NAMES) == len(pairs)
    back = read_results_parquet(path)
    assert [result_to_record(r, i) for i, r in back] == [result_to_record(r, i) for i, r in pairs]
    assert pq.read_schema(path).names == result_columns(NAMES)
    row = pq.read_table(path).slice(0, 1).to_pylist()[0]  # the analytics columns
    assert (row["faithfulness"], row["faithfulness_llm_score"], row["faithfulness_heuristic_score"]) == (0.25, 0.2, 0.3751)
    assert row["answer_relevancy_error"] == "JudgeError: HTTP 500" and row["context_recall"] is None
    assert row["expected_doc_recall_method"] is None  # this sample has no such metric


def test_empty_and_all_null_columns_keep_their_types(tmp_path):
    path = tmp_path / "empty.parquet"
    assert results_parquet([], path, NAMES) == 0
    schema = pq.read_schema(path)
    assert str(schema.field("faithfulness").type) == "double"
    assert str(schema.field("contexts").type) == "list<element: string>"


def test_cli_parquet_output_has_the_reports_rows(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "h.sqlite3"))
    out_json, out_parquet = tmp_path / "r.json", tmp_path / "out" / "r.parquet"
    assert main(["evaluate", str(SAMPLE), "-q", "-o", str(out_json)]) == 0
    assert main(["evaluate", str(SAMPLE), "-q", "-o", str(out_parquet)]) == 0
    records = json.loads(out_json.read_text(encoding="utf-8"))["records"]
    rows = pq.read_table(out_parquet).to_pylist()
    assert [r["sample_id"] for r in rows] == [r["sample_id"] for r in records]
    for row, rec in zip(rows, records):
        for name in METRICS:
            assert row[name] == rec["metrics"][name]["score"]
            assert row[f"{name}_method"] == rec["metrics"][name]["method"]


CELLS = [  # raw cells as a CSV file would hold them, and the same values as typed columns
    ({"contexts": '["a", "b"]', "keywords": "x; y", "id": ""}, {"contexts": ["a", "b"], "keywords": ["x", "y"]}),
    ({"contexts": "['a', 'b']", "keywords": "x|y", "id": "s9"}, {"contexts": ["a", "b"], "keywords": ["x", "y"], "id": "s9"}),
    ({"contexts": "one context", "human_faithfulness": "1"}, {"contexts": ["one context"], "human_faithfulness": 1}),
]


@pytest.mark.parametrize("raw,typed", CELLS)
def test_rows_give_the_samples_load_dataset_gives(tmp_path, raw, typed):
    base = {"question": "Q?", "answer": "A.", "extra col": "kept"}
    path = tmp_path / "d.csv"
    pd.DataFrame([{**base, **raw}]).to_csv(path, index=False)
    expected = load_dataset(path)
    assert samples_from_rows([(1, {**base, **raw})]) == expected
    assert samples_from_rows([(1, {**base, **typed})]) == expected


def test_a_row_without_number_or_id_has_no_id():
    [sample] = samples_from_rows([(None, {"question": "Q?", "answer": "A."})])
    assert sample.sample_id is None


def test_score_frame_gives_the_single_process_scores_in_order():
    samples = load_dataset(SAMPLE)
    rows = pd.read_json(SAMPLE, lines=True, dtype=False)
    rows[ROW_COLUMN] = range(1, len(rows) + 1)
    out = score_frame(rows, RunConfig())
    expected = RAGEvaluator(OfflineJudge()).evaluate_dataset(samples).results
    assert len(out) == len(expected) and list(out["index"]) == list(range(len(expected)))
    got = results_frame([], [m.name for m in RunConfig().chosen_metrics()])  # the run's metrics' columns
    assert list(out.columns) == list(got.columns)
    from evaluator.io.frames import results_from_frame
    assert [record(r, i) for i, r in results_from_frame(out)] == [record(r, i) for i, r in enumerate(expected)]
    assert out["judge_calls"].sum() == 0


def test_score_frame_reads_ragas_columns_with_array_cells():
    import numpy as np

    frame = pd.DataFrame({"user_input": ["Where is the office?"], "response": ["In Cairo."],
                          "retrieved_contexts": [np.array(["Our office is in Cairo."])], "reference": ["Cairo."]})
    out = score_frame(frame, RunConfig())
    sample = EvalSample("Where is the office?", "In Cairo.", ["Our office is in Cairo."], "Cairo.")
    expected = RAGEvaluator(OfflineJudge()).evaluate(sample)
    assert out.loc[0, "index"] == -1 and out.loc[0, "sample_id"] is None
    assert [out.loc[0, m] for m in METRICS] == [expected.metric_scores()[m].score for m in METRICS]


def test_tally_gives_the_reports_summary():
    report = RAGEvaluator(OfflineJudge()).evaluate_dataset(load_dataset(SAMPLE))
    frame = results_frame(enumerate(report.results), report.metric_names())
    tally = RunTally()
    tally.add(frame.iloc[:10])
    tally.add(frame.iloc[10:])
    assert tally.summaries() == summarize(report)
    assert tally.means() == report.mean_scores()
    assert tally.overall_mean() == report.overall_mean()
    assert tally.format_report(report.total_time) == report.format_report()


def test_ray_input_rows_carry_retrieval_ids_and_graded_relevance():
    from evaluator.engines.ray import samples_frame

    graded = EvalSample("q", "a", ["c"], sample_id="g", retrieval_ids=["d2", "", "d1"], relevance={"d1": 3, "d2": 1})
    plain = EvalSample("q2", "a2", ["c"], sample_id="p", expected_docs=["d1"], retrieval_ids=["d1"])
    out = score_frame(samples_frame([graded, plain]), RunConfig(metrics=("ndcg_exp@3", "mrr")))
    from evaluator.io.frames import results_from_frame
    results = [r for _, r in results_from_frame(out)]
    assert [r.sample.retrieval_ids for r in results] == [["d2", "", "d1"], ["d1"]]
    assert results[0].sample.relevance == {"d1": 3.0, "d2": 1.0}
    expected = RAGEvaluator(OfflineJudge(), metrics=["ndcg_exp@3", "mrr"]).evaluate(graded)
    assert results[0].scores["ndcg_exp@3"].score == expected.scores["ndcg_exp@3"].score
    assert out["mrr@5"].tolist() == [1.0, 1.0]  # d2 (grade 1) is relevant at rank 1
