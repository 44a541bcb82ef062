"""The demo pipeline shipped with ragmeter: as a Python target and as an HTTP server."""
import json
import urllib.request
from pathlib import Path

import pytest

from evaluator import OfflineJudge, RAGEvaluator
from evaluator.demo import agent_answer, rag_answer
from evaluator.io.datasets import load_dataset
from evaluator.targets import TargetConfig
from evaluator.targets.pipeline import evaluate_with_target
from target_server import demo_pipeline

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = ROOT / "sample_data" / "demo_questions.jsonl"
AGENT_QUESTIONS = ROOT / "sample_data" / "demo_agent_questions.jsonl"


def test_rag_answer_retrieves_the_right_page_and_quotes_it():
    answer, docs = rag_answer("How much does a day pass cost?")
    assert docs[0]["title"] == "Day passes" and docs[0]["similarity"] > docs[-1]["similarity"]
    assert answer == "A day pass costs 9 euros and gives unlimited rides of up to 45 minutes each for 24 hours."
    assert rag_answer("Do you deliver pizza?") == ("I could not find this in the help pages.", [])


@pytest.fixture
def server():
    with demo_pipeline() as url:
        yield url


def test_http_demo_and_callable_demo_give_the_same_report(server):
    samples = load_dataset(QUESTIONS, needs_answer=False)
    by_function = evaluate_with_target(RAGEvaluator(OfflineJudge()), samples,
                                       TargetConfig("evaluator.demo:rag_answer").build())
    by_http = evaluate_with_target(RAGEvaluator(OfflineJudge()), samples, TargetConfig(f"{server}/ask").build())
    assert by_http.mean_scores() == by_function.mean_scores()
    assert by_http.target_stats()["failures"] == 0 and len(by_http.results) == 10
    assert by_http.mean_scores()["expected_doc_recall"] == 1.0
    assert 0 < by_http.mean_scores()["keyword_coverage"] < 1  # some extracted sentences miss keywords, on purpose


def test_http_demo_agent_route_and_bad_requests(server):
    samples = load_dataset(AGENT_QUESTIONS, needs_answer=False)
    report = evaluate_with_target(RAGEvaluator(OfflineJudge()), samples, TargetConfig(f"{server}/agent").build())
    assert report.mean_scores()["tool_call_recall"] == 1.0
    assert [c["name"] for c in report.results[0].sample.tool_calls] == ["search_docs", "read_doc"]
    assert agent_answer("Do you deliver pizza?")["tool_calls"][0]["output"] == []
    request = urllib.request.Request(f"{server}/ask", data=b'{"q": 1}', method="POST")
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=5)
    assert err.value.code == 400 and "question" in json.loads(err.value.read())["error"]
