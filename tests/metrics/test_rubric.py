"""Rubric metrics: TOML in, one judge call per sample, skipped offline, unscored on failure,
probability-weighted (G-Eval) where the server sends token probabilities."""
import pytest

from evaluator import EvalSample, OfflineJudge, RAGEvaluator, RubricMetric, load_rubrics
from evaluator.judges.openai import OpenAIJudge
from evaluator.metrics.judging import TOP_LOGPROBS
from evaluator.metrics.rubric import parse_rubrics, rubrics_to_toml
from evaluator.model import METHOD_LLM, METHOD_SKIPPED, METHOD_UNSCORED, METRICS
from openai_server import ChatServer, error, reply, scored_reply

RUBRICS_TOML = '''
[politeness]
criteria = "The answer is polite and professional: no sarcasm, no blame."
fields = ["question", "answer"]
scale = "1-5"
steps = ["Read the answer's tone", "Look for blame or sarcasm"]

[cites_sources]
criteria = "The answer only uses facts found in the contexts."
fields = ["answer", "contexts"]
scale = "pass-fail"
'''


def samples(n=3):
    return [EvalSample(f"Question {i}?", f"Answer {i}.", [f"Context {i}."], f"Ref {i}", f"s{i}") for i in range(n)]


@pytest.fixture
def rubrics(tmp_path):
    path = tmp_path / "rubrics.toml"
    path.write_text(RUBRICS_TOML, encoding="utf-8")
    return load_rubrics(path)


def rubric_or_builtin(request):
    """The server's answer: a JSON 1-5 / pass-fail score for rubric prompts, 0.8 for built-ins."""
    if "CRITERION: The answer is polite" in request.prompt:
        return reply('{"reasoning": "courteous", "score": 4}')
    if "CRITERION:" in request.prompt:
        return reply('{"reasoning": "grounded", "score": 1}')
    return None


def test_toml_rubrics_load_as_written(rubrics):
    polite, cites = rubrics
    assert polite == RubricMetric("politeness", "The answer is polite and professional: no sarcasm, no blame.",
                                  fields=("question", "answer"), scale="1-5",
                                  steps=("Read the answer's tone", "Look for blame or sarcasm"))
    assert cites.scale == "pass-fail" and cites.needs == ("answer", "contexts") and cites.steps == ()
    assert parse_rubrics(rubrics_to_toml(rubrics)) == rubrics
    prompt = polite.prompt(samples(1)[0], "en")
    assert "no sarcasm, no blame" in prompt and "1. Read the answer's tone" in prompt
    assert "Context 0." not in prompt  # only the fields asked for are shown


@pytest.mark.parametrize("text, message", [
    ('[p]\ncriteria = "x"\nscale = "1-10"', "scale '1-10' is not one of 0-1, 1-5, pass-fail"),
    ('[p]\ncriteria = "x"\nfields = ["answer", "sources"]', "unknown field(s) sources"),
    ('[p]\nfields = ["answer"]', "criteria is empty"),
    ('[p]\ncriteria = "x"\ncritera = "y"', "unknown key(s) critera"),
    ('[p]\ncriteria = "x"\nfields = "answer"', "fields must be a list of strings"),
    ('[faithfulness]\ncriteria = "x"', "built-in metric's"),
    ('[p]\ncriteria = "x"\nscale = 1-5', "line 3"),
    ('[polite-ness]\ncriteria = "x"', "letters, digits and underscores"),
    ("", "no rubrics"),
])
def test_bad_rubric_files_say_what_is_wrong_and_where(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as err:
        load_rubrics(path)
    assert message in str(err.value) and str(path) in str(err.value)


def test_missing_rubric_file_is_named(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_rubrics(tmp_path / "nope.toml")


def test_each_rubric_costs_exactly_one_call_per_sample(rubrics):
    # A server that reuses a cached prefix (vLLM): one call per metric, the judge mode "auto" on it.
    with ChatServer(responder=rubric_or_builtin, owned_by="vllm") as srv:
        judge = OpenAIJudge("test-model", base_url=srv.base_url)
        base = RAGEvaluator(judge, metrics=list(METRICS)).evaluate_dataset(samples())
        calls_base = len(srv.chat_requests)
        report = RAGEvaluator(judge, metrics=[*METRICS, *rubrics]).evaluate_dataset(samples())
        calls_rubrics = len(srv.chat_requests) - calls_base
    assert calls_base == 3 * 5 and calls_rubrics == 3 * (5 + 2)
    assert report.metric_names() == [*METRICS, "politeness", "cites_sources"]
    assert report.mean_scores()["politeness"] == 0.75 and report.mean_scores()["cites_sources"] == 1.0
    assert {r.scores["politeness"].method for r in report.results} == {METHOD_LLM}
    assert report.mean_scores()["faithfulness"] == base.mean_scores()["faithfulness"]


def test_offline_a_rubric_is_skipped_because_it_needs_a_judge(rubrics):
    report = RAGEvaluator(OfflineJudge(), metrics=["faithfulness", *rubrics]).evaluate_dataset(samples(2))
    for result in report.results:
        ms = result.scores["politeness"]
        assert ms.skipped and ms.method == METHOD_SKIPPED and ms.reasoning.startswith("Needs a judge")
    assert report.mean_scores()["politeness"] is None and report.mean_scores()["faithfulness"] is not None


def test_judge_failure_leaves_a_rubric_unscored_with_its_error_and_out_of_the_mean(rubrics):
    def responder(request):
        if "Question 0?" in request.prompt and "CRITERION" in request.prompt:
            return error(401, "bad key")
        return reply('{"reasoning": "ok", "score": 2}')

    with ChatServer(responder=responder) as srv:
        judge = OpenAIJudge("test-model", base_url=srv.base_url, max_retries=0)
        report = RAGEvaluator(judge, metrics=rubrics[:1]).evaluate_dataset(samples())
    failed = report.results[0].scores["politeness"]
    assert failed.method == METHOD_UNSCORED and failed.skipped and "HTTP 401" in failed.error
    assert failed.llm_score is None and "No score" in failed.reasoning
    assert report.mean_scores()["politeness"] == 0.25 and report.values("politeness") == [0.25, 0.25]
    assert report.method_counts("politeness") == {METHOD_UNSCORED: 1, METHOD_LLM: 2}


def test_logprobs_weight_the_score_and_the_record_says_so():
    polite = RubricMetric("politeness", "Polite.", scale="1-5")
    verdict = RubricMetric("verdict", "Correct.", scale="pass-fail")
    plain = RubricMetric("plain", "Plain 0-1 scale.")

    def responder(request):
        if "Polite." in request.prompt:
            return scored_reply('{"reasoning": "mostly polite", "score": ', {"4": 0.6, "3": 0.3, "5": 0.1})
        if "Correct." in request.prompt:
            return scored_reply('{"reasoning": "right", "score": ', {"1": 0.8, "0": 0.2})
        return reply('{"reasoning": "fine", "score": 0.6}')

    with ChatServer(responder=responder) as srv:
        judge = OpenAIJudge("test-model", base_url=srv.base_url)
        result = RAGEvaluator(judge, metrics=[polite, verdict, plain]).evaluate(samples(1)[0])
        asked = {next(line for line in r.prompt.split("\n") if line.startswith("CRITERION:")): r.body
                 for r in srv.chat_requests}
    weighted = (4 * 0.6 + 3 * 0.3 + 5 * 0.1 - 1) / 4  # (3.8 - 1) / 4 = 0.7
    assert result.scores["politeness"].score == pytest.approx(weighted, abs=1e-4)
    assert result.scores["politeness"].scored_from == "logprobs"
    assert result.scores["verdict"].score == pytest.approx(0.8) and result.scores["verdict"].scored_from == "logprobs"
    assert result.scores["plain"].score == 0.6 and result.scores["plain"].scored_from == "json"
    assert asked["CRITERION: Polite."]["top_logprobs"] == TOP_LOGPROBS and asked["CRITERION: Polite."]["logprobs"]
    assert "logprobs" not in asked["CRITERION: Plain 0-1 scale."]


def test_a_server_without_logprobs_gives_the_stated_score():
    polite = RubricMetric("politeness", "Polite.", scale="1-5")
    with ChatServer(default=reply('{"reasoning": "polite", "score": 4}')) as srv:
        judge = OpenAIJudge("test-model", base_url=srv.base_url)
        ms = RAGEvaluator(judge, metrics=[polite]).evaluate(samples(1)[0]).scores["politeness"]
        assert srv.chat_requests[0].body["logprobs"] is True
    assert ms.score == 0.75 and ms.scored_from == "json"


def test_a_cached_rerun_keeps_the_weighted_score_and_costs_nothing(tmp_path):
    polite = RubricMetric("politeness", "Polite.", scale="1-5")
    probs = scored_reply('{"reasoning": "ok", "score": ', {"2": 0.5, "3": 0.5})
    with ChatServer(default=probs) as srv:
        first = OpenAIJudge("test-model", base_url=srv.base_url, cache=tmp_path / "c.sqlite3")
        a = RAGEvaluator(first, metrics=[polite]).evaluate(samples(1)[0]).scores["politeness"]
        first.close()
        again = OpenAIJudge("test-model", base_url=srv.base_url, cache=tmp_path / "c.sqlite3")
        b = RAGEvaluator(again, metrics=[polite]).evaluate(samples(1)[0]).scores["politeness"]
        again.close()
        assert len(srv.chat_requests) == 1
    assert a.scored_from == b.scored_from == "logprobs" and a.score == b.score  # 2 or 3 -> 2.5 -> 0.375
    assert a.score == pytest.approx(0.375)
