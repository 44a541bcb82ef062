"""The metric registry: one definition per metric, choosing metrics, metrics without a heuristic."""
import csv
import io
import json
from dataclasses import replace

import pytest

from evaluator import EvalSample, OfflineJudge, RAGEvaluator
from evaluator.analysis.advice import recommendations
from evaluator.cli.command import UsageError, missed_thresholds, parse_thresholds
from evaluator.report.export import html_report, results_csv, results_json
from evaluator.io.records import result_from_record, result_to_record
from evaluator.metrics.registry import METRIC_REGISTRY, Metric, get_metric, register, resolve_metrics
from evaluator.model import METHOD_LLM, METHOD_SKIPPED, METHOD_UNSCORED, METRICS, EvalReport
from tests.fakes import ScriptedJudge

BREVITY_PROMPT = """Is the ANSWER brief and to the point?
{guard}
{json_only}
{{"score": <0.0-1.0>, "reasoning": "<one sentence>"}}

{data}"""


@pytest.fixture
def brevity():
    """A metric added in a few lines (registered for this test only)."""
    yield register(Metric("brevity", prompts={"en": BREVITY_PROMPT}, shows=("answer",),
                          advice=("Answers ramble.", ("Ask for one short paragraph.",))))
    del METRIC_REGISTRY["brevity"]


def samples(n=3, gt=True):
    return [EvalSample(f"Question {i}?", f"Answer {i}.", [f"Context {i}."], f"Ref {i}" if gt else None, f"s{i}")
            for i in range(n)]


def brevity_judge():
    """Scores 0.2 for brevity, 0.9 for everything else, so the new metric's numbers are its own."""
    return ScriptedJudge(lambda p: '{"score": 0.2, "reasoning": "long"}' if "brief" in p
                         else '{"score": 0.9, "reasoning": "fine"}')


def test_a_new_metric_shows_in_report_exports_advice_and_fail_under(brevity):
    judge = brevity_judge()
    report = RAGEvaluator(judge, metrics=["faithfulness", "brevity"]).evaluate_dataset(samples())
    assert judge.calls == 3 * 2
    assert report.metric_names() == ["faithfulness", "brevity"]
    assert report.mean_scores()["brevity"] == 0.2  # no heuristic: the judge's score unblended
    assert report.results[0].scores["brevity"].method == METHOD_LLM
    assert "brevity" in report.format_report()
    rows = list(csv.DictReader(io.StringIO(results_csv(report))))
    assert [r["brevity"] for r in rows] == ["0.2"] * 3 and rows[0]["brevity_method"] == METHOD_LLM
    data = json.loads(results_json(report))
    assert data["mean_scores"]["brevity"] == 0.2 and "brevity" in data["records"][0]["metrics"]
    assert "brevity" in html_report(report)
    advice = recommendations(report.mean_scores())
    assert advice[0].metric == "brevity" and advice[0].actions == ["Ask for one short paragraph."]
    assert missed_thresholds(report, parse_thresholds(["brevity=0.5"])) == ["brevity: 0.2000 < 0.5"]


def test_records_round_trip_a_chosen_subset(brevity):
    report = RAGEvaluator(brevity_judge(), metrics=["brevity"]).evaluate_dataset(samples(1))
    back = result_from_record(json.loads(json.dumps(result_to_record(report.results[0]))))
    assert list(back.scores) == ["brevity"] and back.scores["brevity"] == report.results[0].scores["brevity"]
    assert back.faithfulness.skipped and "Not chosen" in back.faithfulness.reasoning


@pytest.mark.parametrize("chosen, gt, calls_per_sample", [
    (None, True, 5), (None, False, 3), (["answer_relevancy"], True, 1),
    (["faithfulness", "context_recall"], True, 2), (["faithfulness", "context_recall"], False, 1),
    (["keyword_coverage"], True, 0),
])
def test_calls_per_sample_follow_the_chosen_judged_metrics(chosen, gt, calls_per_sample):
    judge = ScriptedJudge()
    report = RAGEvaluator(judge, metrics=chosen).evaluate_dataset(samples(4, gt))
    assert judge.calls == 4 * calls_per_sample
    if chosen:
        assert [n for n in report.metric_names()] == [n for n in chosen if n != "keyword_coverage"]


def test_unknown_metric_names_the_known_ones():
    with pytest.raises(ValueError) as err:
        RAGEvaluator(OfflineJudge(), metrics=["faithfulness", "politness"])
    assert "'politness'" in str(err.value) and all(m in str(err.value) for m in METRICS)
    with pytest.raises(ValueError, match="chosen twice"):
        resolve_metrics(["faithfulness", "faithfulness"])
    with pytest.raises(TypeError, match="list of names"):
        resolve_metrics("faithfulness")
    with pytest.raises(UsageError, match="unknown metric 'politness'"):
        parse_thresholds(["politness=0.5"])


def test_each_builtin_is_defined_in_its_registry_entry_only(monkeypatch):
    """Change an entry's prompt and advice: the evaluator and the advice follow, nothing else to edit."""
    entry = get_metric("answer_relevancy")
    changed = replace(entry, prompts={"en": "CHANGED brief check {guard} {json_only}\n{data}"}, languages=("en",),
                      advice=("CHANGED diagnosis", ("CHANGED action",)))
    monkeypatch.setitem(METRIC_REGISTRY, "answer_relevancy", changed)
    judge = ScriptedJudge()
    report = RAGEvaluator(judge, metrics=["answer_relevancy"]).evaluate_dataset(samples(1))
    assert judge.prompts[0].startswith("CHANGED brief check")
    advice = recommendations({"answer_relevancy": 0.1})
    assert advice[0].diagnosis == "CHANGED diagnosis" and advice[0].actions == ["CHANGED action"]
    assert report.results[0].scores["answer_relevancy"].heuristic_score is not None


def test_a_metric_object_need_not_be_registered():
    tone = Metric("tone", prompts={"en": BREVITY_PROMPT}, shows=("answer",))
    report = RAGEvaluator(ScriptedJudge('{"score": 0.4}'), metrics=[tone, "answer_relevancy"]).evaluate_dataset(
        samples(2))
    assert report.metric_names() == ["tone", "answer_relevancy"] and report.mean_scores()["tone"] == 0.4
    assert "tone" not in METRIC_REGISTRY


def test_without_a_heuristic_offline_is_skipped_and_failure_is_unscored_never_in_a_mean():
    tone = Metric("tone", prompts={"en": BREVITY_PROMPT}, shows=("answer",))
    offline = RAGEvaluator(OfflineJudge(), metrics=[tone, "answer_relevancy"]).evaluate(samples(1)[0])
    assert offline.scores["tone"].skipped and offline.scores["tone"].method == METHOD_SKIPPED
    assert "needs a judge" in offline.scores["tone"].reasoning.lower()
    judge = ScriptedJudge(queue=[RuntimeError("HTTP 500 from judge"), '{"score": 0.9}',
                                 "I cannot grade this.", '{"score": 0.9}', '{"score": 0.6}', '{"score": 0.9}'])
    report = RAGEvaluator(judge, metrics=[tone, "answer_relevancy"]).evaluate_dataset(samples(3))
    failed, unparsed, ok = (r.scores["tone"] for r in report.results)
    assert failed.method == METHOD_UNSCORED and failed.skipped and "HTTP 500" in failed.error
    assert unparsed.method == METHOD_UNSCORED and unparsed.raw_reply == "I cannot grade this."
    assert ok.score == 0.6 and report.mean_scores()["tone"] == 0.6 and report.method_counts("tone") == {
        METHOD_UNSCORED: 2, METHOD_LLM: 1}
    assert report.results[0].overall() == report.results[0].scores["answer_relevancy"].score


def test_seed_contract_attributes_and_the_old_scores_call():
    result = RAGEvaluator(OfflineJudge()).evaluate(samples(1)[0])
    assert result.faithfulness is result.scores["faithfulness"]
    assert list(result.scores) == list(METRICS)
    with pytest.warns(DeprecationWarning):
        assert result.scores() == result.score_values()
    report = EvalReport([result])
    assert report.metric_names() == list(METRICS)
