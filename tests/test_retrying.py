"""The one retry loop, and its two users (the judge wrapper and the targets) giving up for the same reasons."""
import threading
from dataclasses import dataclass

import pytest

from evaluator.errors import JudgeError, TargetError
from evaluator.judges.resilient import ResilientJudge
from evaluator.retrying import Failed, GaveUp, with_retries
from evaluator.targets import FunctionTarget, RetryPolicy, ask
from fakes import FakeClock, ScriptedJudge


@dataclass
class Oops(Failed):
    retryable: bool = True


def attempts(*outcomes):
    queue = list(outcomes)
    return lambda: queue.pop(0)


def test_a_result_after_failures_is_returned_and_each_retry_is_reported_before_its_sleep():
    seen, slept = [], []
    got = with_retries(attempts(Oops(), Oops(), "ok"), retries=3, delay=lambda n, f: n / 10, sleep=slept.append,
                       on_retry=lambda n, f, wait: seen.append((n, wait, len(slept))))
    assert got == "ok" and slept == [0.1, 0.2] and seen == [(1, 0.1, 0), (2, 0.2, 1)]


def test_it_gives_up_when_retries_run_out_when_the_failure_is_final_or_when_the_wait_would_not_fit():
    out = with_retries(attempts(Oops(), Oops(), Oops()), retries=2, delay=lambda n, f: 0, sleep=lambda s: None)
    assert isinstance(out, GaveUp) and out.retries == 2 and not out.out_of_time
    final = Oops(retryable=False)
    assert with_retries(attempts(final), retries=5, delay=lambda n, f: 0) == GaveUp(final, 0)
    late = with_retries(attempts(Oops(), Oops()), retries=5, delay=lambda n, f: n * 10.0, sleep=lambda s: None,
                        fits=lambda wait: wait < 15)
    assert isinstance(late, GaveUp) and late.retries == 1 and late.out_of_time


class Throttled(Exception):
    retry_after = 0.25


@pytest.mark.parametrize("fails", [1, 5])
def test_the_judge_and_a_target_wait_out_retry_after_and_give_up_alike(fails):
    clock = FakeClock()
    judge = ResilientJudge(ScriptedJudge("yes", queue=[Throttled()] * fails), sleep=clock.sleep, clock=clock,
                           max_retries=2)
    calls = []

    def pipeline(question):
        calls.append(question)
        if len(calls) <= fails:
            raise TargetError("busy", retryable=True, retry_after=0.25)
        return "yes"

    slept = []
    answer = ask(FunctionTarget(pipeline), "Q?", RetryPolicy(retries=2), sleep=slept.append)
    if fails == 1:
        assert judge.generate("p") == "yes" and answer.answer == "yes"
    else:  # three attempts, two waits, then a failure naming the cause
        with pytest.raises(JudgeError, match="after 2 retries"):
            judge.generate("p")
        assert answer.error == "busy (after 3 attempts)"
    assert slept == [0.25] * min(fails, 2) and len(clock.slept) == len(slept)
    assert all(0.25 <= s <= 0.275 for s in clock.slept)  # the judge adds up to 10% jitter


def test_a_stopping_run_retries_no_target_call():
    stop, calls = threading.Event(), []

    def pipeline(question):
        calls.append(question)
        stop.set()  # the run is stopped while this call is in flight
        raise TargetError("busy", retryable=True)

    assert ask(FunctionTarget(pipeline), "Q?", RetryPolicy(retries=3), stop=stop).error == "busy" and calls == ["Q?"]


def test_a_final_failure_is_tried_once_by_both():
    judge = ResilientJudge(ScriptedJudge(JudgeError("no such model", kind="rejected")), sleep=FakeClock().sleep)
    with pytest.raises(JudgeError, match="no such model") as err:
        judge.generate("p")
    assert err.value.kind == "rejected" and judge.usage()["requests"] == 1
    calls = []

    def pipeline(question):
        calls.append(question)
        raise TargetError("bad request", retryable=False)

    assert ask(FunctionTarget(pipeline), "Q?", RetryPolicy(retries=3)).error == "bad request" and len(calls) == 1
