"""A judge that trickles: how long does a small run take to stop, in call deadlines?

    python bench/trickle.py                     # 2 samples, --judge-timeout 1 (a few seconds)
    python bench/trickle.py --timeout 60 --every 3   # the default timeout, a byte every 3 s (issue 49)

A loopback OpenAI-compatible server (tests/openai_server.py, in this process) answers every chat
request with HTTP 200 headers, then one byte every timeout/3 seconds (--every): no read ever times out,
only the call's total deadline ends it. The bench measures one call of a fresh judge (one try: a judge
that never answered is not retried after a timeout, judges/resilient.py), then runs `ragmeter evaluate`
on N samples against the same server and prints the run's time beside it, as a ratio, with the requests
the server saw. The run ends with its first wave of calls: about one call deadline (judges/health.py).

Measured (2-core machine shared with other work, 2026-12): --timeout 3: run 3.15 s, 1.01 call
deadlines, 2 requests, exit 3 (before issue 49: 13.6 s, 1.98 deadlines, 6 requests); --timeout 60
--every 3 (the default timeout): run 60.26 s, 0.99 call deadlines, 2 requests, exit 3.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from openai_server import ChatServer, trickle  # noqa: E402

from evaluator.cli.command import main  # noqa: E402
from evaluator.judges.openai import OpenAIJudge  # noqa: E402


def _dataset(folder: str, n: int) -> str:
    path = os.path.join(folder, "trickle.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"sample_id": f"t{i}", "question": f"Is item {i} waterproof?", "answer": "Yes.",
                                "contexts": [f"Item {i} is waterproof."], "ground_truth": "Yes."}) + "\n")
    return path


def measure(timeout: float, n: int, every: float = 0.0) -> dict:
    with tempfile.TemporaryDirectory() as folder, ChatServer(default=trickle(every or timeout / 3)) as srv:
        start = time.monotonic()
        try:
            OpenAIJudge("m", srv.base_url, timeout=timeout).generate("one call")
        except Exception:  # the deadline is what is measured
            pass
        deadline = time.monotonic() - start
        before = len(srv.chat_requests)
        start = time.monotonic()
        code = main(["evaluate", _dataset(folder, n), "--no-cache", "--no-history", "-q", "--model", "m",
                     "--base-url", srv.base_url, "--judge-timeout", str(timeout)])
        took = time.monotonic() - start
        return {"timeout_s": timeout, "samples": n, "call_deadline_s": round(deadline, 2), "run_s": round(took, 2),
                "run_in_call_deadlines": round(took / deadline, 2), "requests": len(srv.chat_requests) - before,
                "exit": code}


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=1.0, help="--judge-timeout of the run (default 1 s)")
    parser.add_argument("--n", type=int, default=2, help="samples (default 2)")
    parser.add_argument("--every", type=float, default=0.0, help="seconds between bytes (default timeout/3)")
    args = parser.parse_args()
    figures = measure(args.timeout, args.n, args.every)
    print("  ".join(f"{k} {v}" for k, v in figures.items()))


if __name__ == "__main__":
    run()
