import pytest

from evaluator.model import EvalReport, EvalResult, EvalSample, MetricScore


def ms(name, score, skipped=False):
    return MetricScore(name, score, skipped=skipped)


def result(sid, f, r, p, rec=None, c=None):
    return EvalResult(
        sid, ms("faithfulness", f), ms("answer_relevancy", r), ms("context_precision", p),
        ms("context_recall", rec or 0.0, skipped=rec is None),
        ms("answer_correctness", c or 0.0, skipped=c is None),
    )


def test_eval_sample_field_order_and_defaults():
    s = EvalSample("q", "a", ["c"])
    assert (s.ground_truth, s.sample_id) == (None, None)
    s2 = EvalSample("q", "a", ["c"], "gt", "id-1")
    assert (s2.ground_truth, s2.sample_id) == ("gt", "id-1")


def test_metric_score_repr():
    assert repr(MetricScore("faithfulness", 0.8123)) == "MetricScore(faithfulness=0.812)"
    assert repr(MetricScore("context_recall", 0.0, skipped=True)) == "MetricScore(context_recall=N/A [skipped])"


def test_result_scores_round_and_none_when_skipped():
    r = result("s1", 0.123456, 0.5, 1.0)
    assert r.score_values() == {"faithfulness": 0.1235, "answer_relevancy": 0.5, "context_precision": 1.0,
                          "context_recall": None, "answer_correctness": None}


def test_overall_is_mean_of_non_skipped_and_zero_when_all_skipped():
    assert result("s", 0.2, 0.4, 0.6).overall() == 0.4
    all_skipped = EvalResult("s", *[MetricScore(n, 0.0, skipped=True) for n in (
        "faithfulness", "answer_relevancy", "context_precision", "context_recall", "answer_correctness")])
    assert all_skipped.overall() == 0.0


def test_result_to_dict_and_summary():
    r = result("s1", 0.9, 0.8, 0.7, 0.6, 0.5)
    r.elapsed_sec = 1.23456
    d = r.to_dict()
    assert d["overall"] == 0.7 and d["elapsed_sec"] == 1.2346 and d["sample_id"] == "s1"
    assert d["context_recall"] == 0.6
    text = r.summary()
    assert "s1" in text and "faithfulness" in text and "0.900" in text


def test_report_means_std_and_skipped_everywhere():
    rep = EvalReport([result("a", 0.2, 1.0, 0.5), result("b", 0.4, 0.0, 0.5)], total_time=2.0)
    means, stds = rep.mean_scores(), rep.std_scores()
    assert means["faithfulness"] == 0.3 and means["context_recall"] is None
    assert stds["answer_relevancy"] == pytest.approx(0.7071, abs=1e-4)
    assert stds["context_recall"] is None
    single = EvalReport([result("a", 0.2, 1.0, 0.5)])
    assert single.std_scores()["faithfulness"] is None


def test_report_to_dict_and_print(capsys):
    rep = EvalReport([result("a", 0.2, 1.0, 0.5), result("b", 0.4, 0.0, 0.5)], total_time=2.0)
    d = rep.to_dict()
    assert d["num_samples"] == 2 and d["total_time_s"] == 2.0 and len(d["samples"]) == 2
    assert set(d) >= {"mean_scores", "std_scores", "overall_mean"}
    rep.print_report()
    out = capsys.readouterr().out
    assert "faithfulness" in out and "±" in out and "N/A" in out


def test_rule_metrics_join_means_only_when_present():
    r = result("a", 0.2, 1.0, 0.5)
    r.scores["keyword_coverage"] = MetricScore("keyword_coverage", 0.5, method="rule")
    rep = EvalReport([r, result("b", 0.4, 0.0, 0.5)])
    assert rep.mean_scores()["keyword_coverage"] == 0.5
    assert "expected_doc_recall" not in rep.mean_scores()
    assert r.overall() == round((0.2 + 1.0 + 0.5) / 3, 4)  # rule metrics do not change overall


def test_metric_score_dict_round_trip():
    m = MetricScore("faithfulness", 0.75, "why", method="llm_blend", llm_score=0.9, heuristic_score=0.4,
                    raw_reply="{}", verdicts=[{"claim": "x", "verdict": "supported"}])
    assert MetricScore.from_dict(m.to_dict()) == m


def test_a_single_turn_row_is_a_conversation_of_one_exchange():
    from evaluator.model import EvalReport, EvalSample, MetricScore
    from evaluator.model import EvalResult as Result

    row = EvalSample("Capital of France?", "Paris.", ["Paris is the capital."], "Paris", sample_id="q1")
    (ex,) = row.exchanges()
    assert (ex.user.content, ex.reply.content, ex.reply.contexts, ex.reply.reference) == (
        "Capital of France?", "Paris.", ["Paris is the capital."], "Paris")
    report = EvalReport([Result("q1", sample=row, scores={"faithfulness": MetricScore("faithfulness", 0.5)}),
                         Result("q2", sample=row, scores={"faithfulness": MetricScore("faithfulness", 1.0)})])
    assert not report.multi_turn and report.turn_mean_scores() == report.mean_scores() == {"faithfulness": 0.75}
    assert report.turn_counts() == {"faithfulness": (2, 2)}
    assert "RAG evaluation report: 2 samples" in report.format_report() and "per turn" not in report.format_report()
    assert "conversations" not in report.to_dict()
