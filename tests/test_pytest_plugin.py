"""The pytest plugin, as a user's test project runs it: a real pytest in a subprocess.

The `pytest11` entry point is not installed in the shared development venv, so the project loads the plugin
with `-p evaluator.testing.plugin` (what the entry point does once ragmeter is installed), with plugin
autoloading off so an installed copy cannot register it twice.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator import RunStore

ROOT = Path(__file__).resolve().parent.parent

ROWS = [
    {"sample_id": "q-good", "question": "How long is the warranty?", "answer": "Two years.",
     "contexts": ["Warranty: two years on every kettle."], "expected_docs": ["warranty"],
     "retrieval_ids": ["warranty", "returns"]},
    {"sample_id": "q-meh", "question": "Can I return a kettle?", "answer": "Within 30 days.",
     "contexts": ["Returns: within 30 days."], "expected_docs": ["returns"],
     "retrieval_ids": ["shipping", "returns"]},
    {"sample_id": "q-bad", "question": "Do you ship abroad?", "answer": "Yes, to the EU.",
     "contexts": ["Shipping: EU only."], "expected_docs": ["shipping"],
     "retrieval_ids": ["warranty", "returns", "faq", "shipping"]},
]

TESTS = '''
def test_retrieval_is_good_enough(rag_eval):
    report = rag_eval("data.jsonl", metrics=["faithfulness", "mrr", "ndcg@3"], fail_under={THRESHOLDS})
    assert len(report.results) == 3
'''


def project(tmp_path: Path, thresholds: dict) -> Path:
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    (tmp_path / "test_rag.py").write_text(TESTS.replace("{THRESHOLDS}", repr(thresholds)), encoding="utf-8")
    return tmp_path


def run_pytest(where: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "evaluator.testing.plugin", "-p", "no:cacheprovider",
                           "-q", *args], cwd=where, env=env, capture_output=True, text=True, timeout=240)


def test_a_passing_threshold_exits_0_and_writes_the_report_and_the_history(tmp_path):
    done = run_pytest(project(tmp_path, {"mrr": 0.5, "faithfulness": 0.1}), "--ragmeter-report", "out/report.html")
    assert done.returncode == 0, done.stdout + done.stderr
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "q-bad" in html and "ndcg@3" in html
    (run,) = RunStore().list_runs()  # saved like a CLI run, in this test's history
    assert run.n_done == 3 and run.dataset_name == "data.jsonl" and run.settings["dataset_version"]
    assert f"run {run.run_id}" in done.stdout


def test_a_report_that_cannot_be_written_fails_the_session_and_says_so(tmp_path):
    project(tmp_path, {"mrr": 0.5})
    (tmp_path / "taken").write_text("a file, not a folder", encoding="utf-8")
    done = run_pytest(tmp_path, "--ragmeter-report", "taken/report.html")
    assert done.returncode == 1 and "1 passed" in done.stdout
    assert "ragmeter report taken/report.html: not written" in done.stdout


def test_a_missed_threshold_exits_1_naming_the_metric_its_ci_and_the_worst_sample(tmp_path):
    done = run_pytest(project(tmp_path, {"ndcg@3": 0.9}))
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "ndcg@3 mean 0.544, 95% CI" in out and "(3/3 scored) is below 0.9" in out
    worst = out[out.index("worst samples:"):]
    assert worst.splitlines()[1].split()[:2] == ["q-bad", "0.000"]  # the worst first, with its score
    assert "0 of 1 relevant found" in worst  # and its one-line reason


def test_a_metric_that_is_never_scored_fails_as_na_never_as_zero(tmp_path):
    project(tmp_path, {"recall": 0.1})
    rows = [dict(r, retrieval_ids=None) for r in ROWS]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = run_pytest(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "recall@5 is N/A: not scored on any of 3 samples" in done.stdout


def test_rows_in_memory_and_an_unknown_metric(tmp_path):
    (tmp_path / "test_rows.py").write_text('''
import pytest

def test_rows(rag_eval):
    rows = [{"sample_id": "m1", "question": "q", "answer": "a", "contexts": ["a"]}]
    assert len(rag_eval(rows, metrics=["faithfulness"]).results) == 1

def test_typo(rag_eval):
    with pytest.raises(Exception, match="unknown metric 'faithfulnes'"):
        rag_eval([{"question": "q", "answer": "a"}], metrics=["faithfulnes"])
''', encoding="utf-8")
    done = run_pytest(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_entry_point_is_declared_for_installed_copies():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '[project.entry-points.pytest11]\nragmeter = "evaluator.testing.plugin"' in text


def test_a_judge_is_asked_over_the_openai_protocol_once_then_the_cache_answers(tmp_path):
    from openai_server import ChatServer, reply

    with ChatServer(default=reply('{"score": 0.9, "reasoning": "on topic"}')) as srv:
        (tmp_path / "test_judged.py").write_text(f'''
def test_judged(rag_eval):
    report = rag_eval([{{"sample_id": "j1", "question": "Warranty?", "answer": "Two years.",
                        "contexts": ["Warranty: two years."]}}],
                      metrics=["answer_relevancy"], judge={{"model": "m", "base_url": "{srv.base_url}"}},
                      fail_under={{"answer_relevancy": 0.5}})
    assert report.results[0].scores["answer_relevancy"].method == "llm_blend"
''', encoding="utf-8")
        first = run_pytest(tmp_path)
        asked = len(srv.chat_requests)
        second = run_pytest(tmp_path)
    assert first.returncode == 0 == second.returncode, first.stdout + second.stdout
    assert asked == 1 and len(srv.chat_requests) == 1  # the re-run's reply came from the on-disk cache
