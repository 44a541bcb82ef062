"""Judge repeats: k calls per judged metric, the mean as the score, and the judge's own noise."""
import json
from collections import defaultdict

import pytest

from evaluator import EvalSample, RAGEvaluator, RubricMetric
from evaluator.analysis.noise import format_judge_noise, judge_noise
from evaluator.io.records import result_from_record, result_to_record
from evaluator.judges.openai import OpenAIJudge
from evaluator.metrics.scoring import blend
from openai_server import ChatServer, reply
from tests.fakes import ScriptedJudge

TONE = RubricMetric("tone", "The answer is polite.")


def samples(n=2):
    return [EvalSample(f"Question {i}?", f"Answer {i}.", [f"Context {i}."], f"Ref {i}", f"s{i}") for i in range(n)]


def scripted(scores_by_sample):
    """Each (sample, metric) prompt gets its listed scores in turn, one per repeat."""
    seen = defaultdict(int)

    def answer(prompt):
        sample = next(i for i in scores_by_sample if f"Question {i}?" in prompt)
        metric = "tone" if "CRITERION" in prompt else "relevancy"
        k = seen[sample, metric]
        seen[sample, metric] += 1
        return json.dumps({"score": scores_by_sample[sample][metric][k], "reasoning": "r"})
    return ScriptedJudge(answer)


SCRIPT = {0: {"tone": [0.2, 0.6, 1.0], "relevancy": [0.9, 0.9, 0.9]},
          1: {"tone": [0.8, 0.8, 0.8], "relevancy": [0.5, 0.7, 0.9]}}


def test_k_repeats_cost_k_calls_and_score_their_mean():
    judge = scripted(SCRIPT)
    report = RAGEvaluator(judge, metrics=["answer_relevancy", TONE], repeats=3).evaluate_dataset(samples())
    assert judge.calls == 2 * 2 * 3
    tone0 = report.results[0].scores["tone"]
    assert tone0.llm_scores == [0.2, 0.6, 1.0] and tone0.score == 0.6 and tone0.llm_std == 0.4
    rel1 = report.results[1].scores["answer_relevancy"]
    assert rel1.llm_scores == [0.5, 0.7, 0.9] and rel1.llm_score == 0.7
    assert rel1.score == blend(0.7, rel1.heuristic_score)
    back = result_from_record(json.loads(json.dumps(result_to_record(report.results[0]))))
    assert back.scores["tone"].llm_scores == [0.2, 0.6, 1.0] and back.scores["tone"].llm_std == 0.4


def test_judge_noise_figures_match_a_hand_computation():
    report = RAGEvaluator(scripted(SCRIPT), metrics=["answer_relevancy", TONE], repeats=3).evaluate_dataset(samples())
    noise = {n.metric: n for n in judge_noise(report)}
    # tone: stds 0.4 and 0.0; bands Problem/Needs improvement/Excellent vs Good/Good/Good -> 1 of 2 flips.
    assert noise["tone"].mean_std == 0.2 and noise["tone"].band_flip_share == 0.5
    assert noise["tone"].samples == 2 and noise["tone"].repeats == 3
    # relevancy: stds 0.0 and 0.2; the band is read on the blended score of each repeat.
    h1 = report.results[1].scores["answer_relevancy"].heuristic_score
    from evaluator.analysis.advice import band
    flips = len({band(blend(s, h1)) for s in (0.5, 0.7, 0.9)}) > 1
    assert noise["answer_relevancy"].mean_std == 0.1
    assert noise["answer_relevancy"].band_flip_share == (0.5 if flips else 0.0)
    assert "Judge noise" in format_judge_noise(judge_noise(report))


def test_no_repeats_no_noise_figures():
    report = RAGEvaluator(ScriptedJudge(), metrics=["answer_relevancy"]).evaluate_dataset(samples())
    assert judge_noise(report) == [] and format_judge_noise([]) == ""
    assert report.results[0].scores["answer_relevancy"].llm_scores == []


def test_a_failed_repeat_is_left_out_of_the_mean_and_said():
    judge = ScriptedJudge(queue=['{"score": 0.4}', RuntimeError("HTTP 500"), '{"score": 0.8}'])
    ms = RAGEvaluator(judge, metrics=[TONE], repeats=3).evaluate(samples(1)[0]).scores["tone"]
    assert ms.llm_scores == [0.4, 0.8] and ms.score == 0.6 and "1 of 3 judge calls gave no score" in ms.reasoning


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_repeats_must_be_a_positive_whole_number(bad):
    with pytest.raises(ValueError, match="repeats"):
        RAGEvaluator(ScriptedJudge(), repeats=bad)


def test_each_repeat_has_its_own_cache_entry_so_a_cached_rerun_is_free(tmp_path):
    with ChatServer() as srv:
        srv.queue(*(reply(json.dumps({"score": s})) for s in (0.2, 0.4, 0.6)))
        judge = OpenAIJudge("test-model", base_url=srv.base_url, cache=tmp_path / "cache.sqlite3", temperature=0.7)
        first = RAGEvaluator(judge, metrics=[TONE], repeats=3).evaluate(samples(1)[0]).scores["tone"]
        judge.close()
        again_judge = OpenAIJudge("test-model", base_url=srv.base_url, cache=tmp_path / "cache.sqlite3",
                                  temperature=0.7)
        again = RAGEvaluator(again_judge, metrics=[TONE], repeats=3).evaluate(samples(1)[0]).scores["tone"]
        assert again_judge.usage()["cache_hits"] == 3
        again_judge.close()
        assert len(srv.chat_requests) == 3
    assert first.llm_scores == again.llm_scores == [0.2, 0.4, 0.6]


def test_judge_noise_reaches_the_json_and_html_exports():
    from evaluator.report.export import html_report, results_json

    report = RAGEvaluator(scripted(SCRIPT), metrics=["answer_relevancy", TONE], repeats=3).evaluate_dataset(samples())
    data = json.loads(results_json(report))
    assert {n["metric"]: n["band_flip_share"] for n in data["judge_noise"]}["tone"] == 0.5
    page = html_report(report, use_vl_convert=False)
    assert "Judge noise" in page and "0.200, 0.600, 1.000" in page
