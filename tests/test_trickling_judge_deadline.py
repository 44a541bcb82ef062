"""A judge that trickles one byte every 3 s cannot hold a run (issue 49): with default settings but a
12 s call deadline (the default, 60 s, would only make the test five times longer), a 2-sample
`ragmeter evaluate` ends within that deadline (--judge-timeout, a total deadline on the whole reply:
evaluator/bounded.py) plus 30 s, exit 3, its last line naming the timeout.

Real parts: a loopback OpenAI-compatible server (tests/openai_server.py) answering HTTP 200 headers and then
one byte every 3 s, so no single read ever times out; `python -m evaluator` in its own process, so the wall
time includes start-up and the exit with reader threads still blocked on the socket. It was past 300 s.
"""
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluator.cli.args import build_parser
from openai_server import ChatServer, trickle

ROOT = Path(__file__).resolve().parents[1]
SLACK_S = 30.0


DEADLINE_S = 12.0


def default_call_deadline() -> float:
    return float(build_parser().parse_args(["evaluate", "data.jsonl"]).judge_timeout)


@pytest.mark.slow
def test_a_trickling_judge_ends_a_default_two_sample_run_within_one_call_deadline(tmp_path):
    data = tmp_path / "two.jsonl"
    data.write_text("".join(json.dumps({"sample_id": f"t{i}", "question": f"Is item {i} waterproof?",
                                        "answer": "Yes.", "contexts": [f"Item {i} is waterproof."],
                                        "ground_truth": "Yes."}) + "\n" for i in range(2)), encoding="utf-8")
    deadline = DEADLINE_S
    assert default_call_deadline() > deadline  # the test's deadline is shorter than a default run's
    with ChatServer(default=trickle(3.0)) as srv:
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "evaluator", "evaluate", str(data), "--no-cache", "--no-history",
                               "-q", "--model", "m", "--base-url", srv.base_url, "--judge-timeout", str(deadline)],
                              cwd=ROOT, capture_output=True, text=True, timeout=deadline * 6)
        took = time.monotonic() - start
    last = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "judge timed out: 2 of the first 2 calls" in last and "--judge-timeout" in last, last
    assert took <= deadline + SLACK_S, (took, deadline)
