"""analysis/tally.py: the figures of rows counted one at a time, in any order, equal the figures of the report
that holds them (so a run whose rows stream past is summarised, judged and printed as if it held them)."""
import json
import random

import pytest

from evaluator.analysis import summary
from evaluator.analysis.aggregate import category_rows, histogram_rows
from evaluator.analysis.agreement import agreement_table, external_pairs
from evaluator.analysis.noise import judge_noise
from evaluator.analysis.stats import summarize
from evaluator.analysis.tally import ReportTally
from evaluator.conversation import Conversation, Turn
from evaluator.model import (LANGUAGE_NOTE_KEY, METHOD_BLEND, METHOD_FALLBACK, METHOD_OFFLINE, METHOD_UNSCORED,
                             EvalReport, EvalResult, EvalSample, MetricScore, TurnResult)
from evaluator.scoring.verdict import from_decision, verdict


def varied_row(i: int) -> EvalResult:
    """Row i of a run with everything a summary counts: categories, human labels, another tool's grades,
    repeated judgements, target calls (one failing), English-prompt notes, fallbacks, an unusable reply,
    skipped metrics and a rule metric on some rows."""
    rng = random.Random(i)
    metadata = {}
    if i % 3 == 0:
        metadata["human_labels"] = {"human_faithfulness": rng.choice([0, 1])}
    if i % 4 == 0:
        metadata["external_scores"] = {"external_ragas_faithfulness": rng.random()}
    if i % 7 == 0:
        metadata[LANGUAGE_NOTE_KEY] = "Written in German: scored with the English prompts"
    sample = EvalSample(f"q{i}", f"a{i}", [f"c{i}"], sample_id=f"s{i}", category=f"cat{i % 40}" if i % 5 else None,
                        metadata=metadata, target_latency_ms=float(100 + i) if i % 2 else None,
                        target_error="HTTP 502 from the target" if i == 9 else None)
    repeats = [rng.random() for _ in range(3)]
    faith = MetricScore("faithfulness", sum(repeats) / 3, "why", method=METHOD_BLEND, llm_scores=repeats,
                        heuristic_score=rng.random())
    if i % 11 == 0:
        faith = MetricScore("faithfulness", rng.random(), "fell back", method=METHOD_FALLBACK,
                            error="HTTP 429 Too Many Requests")
    relevancy = (MetricScore("answer_relevancy", 0.0, "no question", skipped=True, method="skipped") if i % 6 == 1
                 else MetricScore("answer_relevancy", rng.random(), "why", method=METHOD_OFFLINE))
    scores = {"faithfulness": faith, "answer_relevancy": relevancy}
    if i == 13:
        scores["context_recall"] = MetricScore("context_recall", 0.0, "prose", skipped=True, method=METHOD_UNSCORED,
                                               error="the reply was not JSON")
    if i % 8 == 0:
        scores["keyword_coverage"] = MetricScore("keyword_coverage", rng.random(), "kw", method="rule")
    return EvalResult(sample.sample_id, scores=scores, sample=sample, elapsed_sec=0.1)


def conversation_row(i: int) -> EvalResult:
    conv = Conversation(f"c{i}", [Turn("user", f"hi {i}"), Turn("assistant", f"hello {i}"), Turn("user", "more"),
                         Turn("assistant", "sure")])
    turns = [TurnResult(k * 2 + 1, k * 2, EvalResult(None, scores={"faithfulness": MetricScore(
        "faithfulness", (i + k) / 20, "t", method=METHOD_OFFLINE)}, sample=EvalSample(
        "q", "a", [], target_latency_ms=50.0 + k))) for k in range(2)]
    return EvalResult(f"c{i}", scores={"faithfulness": MetricScore("faithfulness", i / 20, "mean", method=METHOD_OFFLINE),
                                       "goal_completion": MetricScore("goal_completion", 0.5, "g", method=METHOD_OFFLINE)},
                      sample=EvalSample("", "", [], conversation=conv), turns=turns)


def shuffled_tally(report: EvalReport, seed: int) -> ReportTally:
    """The rows added as a concurrent run finishes them: out of order."""
    rows = list(enumerate(report.results))
    random.Random(seed).shuffle(rows)
    tally = ReportTally(total_time=report.total_time, usage=dict(report.usage))
    return tally.add_all(rows)


@pytest.fixture
def report():
    return EvalReport([varied_row(i) for i in range(120)], total_time=12.5,
                      usage={"calls": 240, "failures": 11, "cache_hits": 0})


def test_rows_counted_out_of_order_give_the_reports_own_figures(report):
    tally = shuffled_tally(report, seed=3)
    assert tally.metric_names() == report.metric_names()
    assert tally.summaries() == summarize(report)  # bootstrap CIs too: scores are resampled in row order
    assert tally.judge_noise() == judge_noise(report)
    assert tally.agreement() == {**agreement_table(report), **agreement_table(external_pairs(report))}
    assert tally.histogram() == histogram_rows(report)
    assert tally.category_rows() == category_rows(report)
    assert tally.target_stats() == report.target_stats()
    assert tally.language_note() == report.language_note()
    means = tally.means()
    assert means.pop("overall") == report.overall_mean() and means == report.mean_scores()


def test_the_verdict_from_a_tally_names_the_first_failure_in_row_order(report):
    decision = shuffled_tally(report, seed=5).decision()
    assert decision["target_cause"] == "HTTP 502 from the target"
    assert decision["judge_cause"] == "HTTP 429"
    counts = decision["counts"]
    assert counts["total"] == 120 and counts["target_failures"] == 1 and counts["unusable_replies"] == 1
    assert counts["fallbacks"] == 12  # 11 fallbacks (i % 11 == 0) and the unusable reply
    ending = from_decision(json.loads(json.dumps(decision)))  # what the summary stores reads back the same
    assert ending == verdict(report) and ending.kind == "judge_failed"
    missed = from_decision(decision, thresholds={"answer_relevancy": 0.99})  # this caller's thresholds
    assert missed.missed[0].startswith("answer_relevancy: ") and missed.missed == verdict(
        report, thresholds={"answer_relevancy": 0.99}).missed


def test_a_summary_prints_the_same_table_as_the_report(report):
    built = summary.RunSummary.from_dict(json.loads(json.dumps(summary.build(report, settings={"model": "m"}).to_dict())))
    assert summary.format_summary(built) == report.format_report()
    chats = EvalReport([conversation_row(i) for i in range(6)], total_time=3.0)
    assert summary.format_summary(summary.build(chats)) == chats.format_report()
    assert summary.format_summary(summary.build(EvalReport())) == EvalReport().format_report()


def test_an_empty_tally_is_a_run_with_nothing_scored():
    ending = from_decision(ReportTally().decision())
    assert ending.kind == "nothing_scored" and ending.cause == "the run had no rows"


def test_the_runs_worst_turn_is_kept_whatever_order_the_rows_come_in():
    chats = EvalReport([conversation_row(i) for i in (5, 2, 7, 2, 9)])
    worst = shuffled_tally(chats, seed=1).worst_turn
    found = [(n, r.worst_turn()) for n, r in enumerate(chats.results)]
    n, turn = min(found, key=lambda p: p[1].result.overall())  # the first of the equal ones, as the page picks
    assert worst == {"row": n, "turn": turn.index, "overall": turn.result.overall(), "sample_id": "c2"} and n == 1
