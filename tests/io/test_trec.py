"""TREC runs with qrels and BEIR folders (io/trec.py), scored by the retrieval metrics with trec_eval's
conventions: every figure equals ranx's (tests/fixtures/trec_ranx_scores.json, written by ranx 0.3.21), except
where scores tie, where trec_eval's order (doc ids descending) is followed and checked by hand."""
import json
import math
from pathlib import Path

import pytest

from evaluator.cli.command import main
from evaluator.errors import DatasetError
from evaluator.io.trec import load_beir, load_trec, ranked
from evaluator.metrics.retrieval import retrieval_metric

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RUN, QRELS = FIXTURES / "trec_run.txt", FIXTURES / "trec_qrels.txt"
RANX = json.loads((FIXTURES / "trec_ranx_scores.json").read_text(encoding="utf-8"))
TIED = {"q1"}  # d2 and d3 share the score 8.0


def score(metric, sample):
    return retrieval_metric(metric.replace("hit_rate", "hit")).rule(sample).score


def test_a_run_and_its_qrels_become_one_sample_per_judged_query():
    notes = []
    samples = load_trec(str(RUN), str(QRELS), notes)
    assert [s.sample_id for s in samples] == ["q1", "q2", "q3"]
    q1 = samples[0]
    assert q1.retrieval_ids == ["d1", "d3", "d2", "d4", "d5", "d9"]  # the tie at 8.0: d3 before d2, as trec_eval
    assert q1.relevance == {"d1": 2.0, "d3": 1.0, "d9": 1.0, "d4": 0.0} and q1.answer == ""
    assert notes[1:] == ["1 query of the run has no judgments in the qrels and are not scored, as in trec_eval "
                         "(first: q4).", "1 judged query has no line in the run and are left out, as trec_eval "
                         "does without -c (first: q5)."]


@pytest.mark.parametrize("metric", RANX["metrics"])
def test_every_metric_equals_ranx_per_query_where_no_scores_tie(metric):
    for sample in load_trec(str(RUN), str(QRELS)):
        if sample.sample_id not in TIED:
            assert score(metric, sample) == pytest.approx(RANX["per_query"][sample.sample_id][metric], abs=1e-9)


def test_tied_scores_follow_trec_eval_by_hand():
    q1 = load_trec(str(RUN), str(QRELS))[0]
    ideal = 2 + 1 / math.log2(3) + 1 / math.log2(4)  # grades 2, 1, 1 in the best order
    assert score("ndcg@3", q1) == pytest.approx((2 + 1 / math.log2(3)) / ideal)  # d1, d3 (tie won), d2
    assert score("ndcg@10", q1) == pytest.approx((2 + 1 / math.log2(3) + 1 / math.log2(7)) / ideal)
    for metric in ("mrr@10", "precision@3", "precision@10", "recall@3", "recall@100", "hit_rate@1"):
        assert score(metric, q1) == pytest.approx(RANX["per_query"]["q1"][metric])  # order-blind at these cuts
    assert ranked({"b": 1.0, "a": 1.0, "c": 2.0}) == ["c", "b", "a"]


def test_the_cli_scores_a_run_with_its_qrels_and_the_retrieval_metrics(capsys, tmp_path):
    code = main(["evaluate", str(RUN), "--qrels", str(QRELS), "--no-history", "-q", "-o", str(tmp_path / "r.json")])
    out, err = capsys.readouterr()
    assert code == 0 and err.strip().splitlines()[-1] == "ragmeter: ok: 3 samples scored"
    assert "scoring ndcg@10,mrr@10,precision@10,recall@100,hit@10" in err
    means = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["mean_scores"]
    expected = (RANX["per_query"]["q2"]["precision@10"] + RANX["per_query"]["q1"]["precision@10"]) / 3
    assert means["precision@10"] == pytest.approx(expected, abs=1e-4)
    assert means["recall@100"] == pytest.approx(RANX["mean"]["recall@100"], abs=1e-4)


def test_a_beir_folder_with_a_run_reads_query_texts_from_queries_jsonl(capsys):
    notes = []
    samples = load_beir(str(FIXTURES / "beir_small"), str(FIXTURES / "beir_run.txt"), notes)
    assert [(s.sample_id, s.question) for s in samples] == [
        ("q1", "How long is the refund window?"), ("q2", "Do you ship to Canada?"), ("q3", "ما هي مدة الاسترداد؟")]
    assert samples[0].retrieval_ids == ["d1", "d3", "d2", "d4", "d5", "d9"]  # beir writes rank 0 everywhere
    assert notes[0].startswith("BEIR folder: judgments from qrels/test.tsv")
    code = main(["evaluate", str(FIXTURES / "beir_small"), "--run", str(FIXTURES / "beir_run.txt"), "--no-history",
                 "-q", "--metrics", "ndcg@3"])
    assert code == 0


@pytest.mark.parametrize("line, problem", [
    ("q1 Q0 d1 1 9.1\n", "line 1: has 5 columns; a TREC run line has 6 (query_id Q0 doc_id rank score run_name)"),
    ("q1 Q0 d1 1 high bm25\n", "line 1: the score 'high' (column 5) is not a number"),
    ("q1 Q0 d1 1 2 bm25\nq1 Q0 d1 2 1 bm25\n", "line 2: lists document 'd1' twice for query 'q1'"),
])
def test_a_malformed_run_line_is_refused_naming_file_and_line(tmp_path, capsys, line, problem):
    run = tmp_path / "run.tsv"
    run.write_text(line, encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        load_trec(str(run), str(QRELS))
    assert str(caught.value).startswith(f"{run}, {problem}")
    assert main(["evaluate", str(run), "--qrels", str(QRELS), "--no-history", "-q"]) != 0
    assert problem in capsys.readouterr().err.strip().splitlines()[-1]


def test_a_run_without_qrels_is_recognised_and_the_error_says_to_add_them(capsys):
    assert main(["evaluate", str(RUN), "--no-history", "-q"]) != 0
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "looks like a TREC run file" in last and "ragmeter evaluate RUN --qrels QRELS" in last


def test_a_run_sharing_no_query_with_the_qrels_is_refused(tmp_path):
    run = tmp_path / "other.run"
    run.write_text("x1 Q0 d1 1 1.0 bm25\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="shares no query id with the qrels"):
        load_trec(str(run), str(QRELS))
