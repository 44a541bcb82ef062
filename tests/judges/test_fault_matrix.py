"""The fault matrix, small (issue 6 §1): a run against a server that injects every fault kind
keeps every row and explains every score.

The server is tests/openai_server.py driven by bench/faults.py's FaultInjector: about 10% of
chat requests each meet a 429 with Retry-After, a 500 or 503, a stall past the client timeout,
a dropped connection, a non-JSON body, a truncated reply and an empty reply. The injector
records which behaviours each prompt met, in order, so each metric's expected outcome is worked
out from what the server actually did and compared with what the report says.

Backoff and Retry-After waits go through a fake clock; only the stalls cost real time (the
client timeout, 0.5 s each, a few at a time).
"""
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from evaluator.model import METHOD_BLEND, METHOD_FALLBACK, METHOD_SKIPPED, METRICS
from evaluator.judges.openai import OpenAIJudge
from evaluator.scoring.evaluation import RAGEvaluator
from evaluator.metrics.registry import build_prompt
from openai_server import ChatServer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from faults import (  # noqa: E402
    RETRIED_MARK,
    FaultInjector,
    FaultPlan,
    fault_samples,
    metric_rows,
    prompt_key,
    rows_lost,
)

# One fault-injected run of the whole matrix serves every test (seconds): slow, and on one
# pytest-xdist worker in `.ci/run`.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("fault_matrix")]

N_SAMPLES = 40
MAX_RETRIES = 2
TIMEOUT = 0.5
# What the judge's error says for a call that ran out of retries on each kind.
EXHAUSTED_WORDS = {"429": "HTTP 429", "HTTP 500": "HTTP 500", "HTTP 503": "HTTP 503", "stall": "timeout",
                   "drop": "connection", "malformed": "malformed"}
CONTENT_WORDS = {"truncated": "No JSON score", "empty": "empty reply"}


class FakeClock:
    """Time that only moves when the code under test sleeps (backoff, Retry-After pauses)."""

    def __init__(self):
        self.now = 0.0
        self._lock = threading.Lock()

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        with self._lock:
            self.now += seconds


@pytest.fixture(scope="module")
def run():
    injector = FaultInjector(FaultPlan(rate=0.10, seed=3, retry_after=2.0, stall_s=1.0))
    samples = fault_samples(N_SAMPLES, seed=3)
    clock = FakeClock()
    with ChatServer(responder=injector) as server:
        # The scenario's Retry-After (2 s) outlasts the default call deadline of its 0.5 s timeouts;
        # a deadline no call reaches keeps every retry path in play. It is read on the fake clock, which
        # adds up the waits of all eight rows: at 60 s a call once found it spent by other rows' waits and
        # gave up after one malformed reply (CI). The deadline has its own tests: tests/judges/test_openai_judge.py
        # and tests/test_trickling_judge_deadline.py.
        judge = OpenAIJudge("fault-test", server.base_url, timeout=TIMEOUT, max_retries=MAX_RETRIES,
                            max_call_seconds=1e6,
                            max_concurrency=8, sleep=clock.sleep, clock=clock)
        with judge:
            # 70% of requests fail here on purpose (10% per kind); unusable replies now count as failed
            # calls, so the run's circuit breaker would stop it: this test checks every row, not the stop.
            # One call per metric (each prompt only its own fields: the server is not known to reuse a prefix),
            # so each score's prompt, and the faults it met, can be predicted on its own (history_of).
            report = RAGEvaluator(judge, language="en", judge_health=None,
                                  judge_mode="separate").evaluate_dataset(samples, max_workers=8)
        requests = len(server.chat_requests)
    return {"injector": injector, "samples": samples, "report": report, "usage": judge.usage(),
            "requests": requests}


def history_of(run, sample, metric):
    prompt = build_prompt(metric, "en", sample.question, sample.answer, sample.contexts, sample.ground_truth)
    return run["injector"].history.get(prompt_key(prompt), [])


def test_every_fault_kind_was_injected(run):
    injected = run["injector"].injected
    kinds = ("ok", "429", "HTTP 500", "HTTP 503", "stall", "drop", "malformed", "truncated", "empty")
    assert all(injected[k] > 0 for k in kinds), dict(injected)
    assert sum(injected.values()) == run["requests"]


def test_no_sample_is_lost_or_duplicated(run):
    ids = [s.sample_id for s in run["samples"]]
    assert rows_lost(ids, run["report"]) == {"missing": 0, "duplicated": 0, "unknown": 0}
    assert [r.sample_id for r in run["report"].results] == ids  # input order kept


def test_every_score_is_judge_fallback_or_skipped_as_the_server_behaved(run):
    outcomes = Counter()
    for result, sample in zip(run["report"].results, run["samples"]):
        for metric in METRICS:
            ms, seen = getattr(result, metric), history_of(run, sample, metric)
            outcomes[check_score(ms, seen, sample)] += 1
    # The scenario must exercise every path, or the checks above prove little.
    assert set(outcomes) == {"first try", "after retries", "bad content", "out of retries", "skipped"}, outcomes


def check_score(ms, seen, sample):
    """Assert `ms` is what the behaviours `seen` by its prompt must produce; name the path."""
    if not seen:
        assert ms.method == METHOD_SKIPPED and sample.ground_truth is None and ms.reasoning
        return "skipped"
    last, retries = seen[-1], len(seen) - 1
    if last == "ok":
        assert ms.method == METHOD_BLEND and ms.error is None and ms.llm_score == 0.75
        if retries:
            assert f"{RETRIED_MARK} {retries} retr" in ms.reasoning, (seen, ms.reasoning)
            return "after retries"
        assert RETRIED_MARK not in ms.reasoning
        return "first try"
    assert ms.method == METHOD_FALLBACK and ms.reasoning and ms.llm_score is None, (seen, ms)
    assert ms.heuristic_score is not None and ms.score == pytest.approx(ms.heuristic_score, abs=1e-4)
    if last in CONTENT_WORDS:
        assert CONTENT_WORDS[last] in ms.error, (seen, ms.error)
        assert (f"after {retries} retries" in ms.error) == bool(retries), (seen, ms.error)
        return "bad content"
    assert retries == MAX_RETRIES, seen
    assert EXHAUSTED_WORDS[last] in ms.error and f"after {MAX_RETRIES} retries" in ms.error, (seen, ms.error)
    return "out of retries"


def test_method_counts_match_the_scores(run):
    report = run["report"]
    for row in metric_rows(report):
        assert row.unexplained == 0
        counts = report.method_counts(row.metric)
        assert counts.get(METHOD_BLEND, 0) == row.judge
        assert counts.get(METHOD_FALLBACK, 0) == row.fallback
        assert counts.get(METHOD_SKIPPED, 0) == row.skipped
        assert sum(counts.values()) == N_SAMPLES


def test_judge_usage_agrees_with_the_server(run):
    history = run["injector"].history.values()
    usage = run["usage"]
    assert usage["requests"] == run["requests"]
    assert usage["retries"] == sum(len(seen) - 1 for seen in history)
    assert usage["rate_limited"] == run["injector"].injected["429"]
    completions = sum(k in ("ok", "truncated", "empty") for seen in history for k in seen)
    assert usage["calls"] == completions
    out_of_retries = sum(1 for seen in history if seen[-1] in EXHAUSTED_WORDS)
    assert usage["failures"] == out_of_retries
