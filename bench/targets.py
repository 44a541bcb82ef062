"""Pipelined target + judge against answering everything first, with a 200 ms target and a 200 ms judge.

    python bench/targets.py                    # 40 samples, 4 target and 4 judge workers, ~40 s
    python bench/targets.py --n 80 --workers 8 --latency-ms 200

The target is a loopback HTTP pipeline (in this process) that sleeps --latency-ms per question
and returns the sample's answer and contexts; the judge is OpenAIJudge against
../shared/tools/mock_openai.py with --latency-ms per chat call (no judge cache). Both modes use
the same workers for each stage:

- pipelined: `evaluate_with_target`, each answer judged as soon as it arrives;
- answer-all-first: every question sent to the target (same workers), then
  `evaluate_dataset` over the answers.

Printed: wall time of each, their ratio, and the lower bound (the slower stage alone).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DEFAULT_MOCK, make_samples, start_mock, table  # noqa: E402

from evaluator import OpenAIJudge, RAGEvaluator  # noqa: E402
from evaluator.model import EvalSample  # noqa: E402
from evaluator.targets import HttpTarget, RetryPolicy, ask  # noqa: E402
from evaluator.targets.pipeline import evaluate_with_target, with_response  # noqa: E402


def serve_pipeline(samples: List[EvalSample], latency: float) -> ThreadingHTTPServer:
    """A slow RAG endpoint answering each known question with its sample's answer and contexts."""
    known: Dict[str, EvalSample] = {s.question: s for s in samples}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            question = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["question"]
            time.sleep(latency)
            sample = known[question]
            data = json.dumps({"answer": sample.answer, "contexts": sample.contexts}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    Thread(target=server.serve_forever, daemon=True).start()
    return server


def questions_only(samples: List[EvalSample]) -> List[EvalSample]:
    return [replace(s, answer="", contexts=[]) for s in samples]


def pipelined(judge: OpenAIJudge, target: HttpTarget, samples: List[EvalSample], workers: int) -> float:
    start = time.perf_counter()
    report = evaluate_with_target(RAGEvaluator(judge), samples, target, policy=RetryPolicy(retries=0),
                                  target_workers=workers, judge_workers=workers)
    assert len(report.results) == len(samples) and not report.target_stats()["failures"]
    return time.perf_counter() - start


def answer_all_first(judge: OpenAIJudge, target: HttpTarget, samples: List[EvalSample], workers: int) -> float:
    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        responses = list(pool.map(lambda s: ask(target, s.question, RetryPolicy(retries=0)), samples))
    answered = [with_response(s, r) for s, r in zip(samples, responses)]
    report = RAGEvaluator(judge).evaluate_dataset(answered, max_workers=workers)
    assert len(report.results) == len(samples)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--latency-ms", type=int, default=200, help="per target call and per judge call")
    parser.add_argument("--mock", default=str(DEFAULT_MOCK))
    args = parser.parse_args()
    # Generated questions may repeat; the endpoint looks answers up by question, so make them unique.
    full = [replace(s, question=f"{s.question} [{s.sample_id}]") for s in make_samples(args.n)]
    samples = questions_only(full)
    latency = args.latency_ms / 1000
    server = serve_pipeline(full, latency)
    target = HttpTarget(f"http://127.0.0.1:{server.server_address[1]}/ask", timeout=30)
    with tempfile.TemporaryDirectory() as tmp, \
            start_mock(Path(args.mock), Path(tmp) / "log.jsonl", ["--latency-ms", str(args.latency_ms)]) as mock:
        judge = OpenAIJudge("mock", base_url=mock.base_url, api_key="x", cache=None, max_concurrency=args.workers)
        first = answer_all_first(judge, target, samples, args.workers)
        piped = pipelined(judge, target, samples, args.workers)
        judge.close()
    server.shutdown()
    calls = 5 if full[0].ground_truth else 3
    judge_only = args.n / args.workers * calls * latency
    print(f"{args.n} samples, {args.workers} target + {args.workers} judge workers, "
          f"{args.latency_ms} ms per target call and per judge call ({calls} judge calls a sample)")
    print(table(["mode", "wall s", "samples/s"], [
        ["answer all first", f"{first:.2f}", f"{args.n / first:.1f}"],
        ["pipelined", f"{piped:.2f}", f"{args.n / piped:.1f}"],
        ["judge stage alone (bound)", f"{judge_only:.2f}", f"{args.n / judge_only:.1f}"],
    ]))
    print(f"pipelined / answer-all-first wall time: {piped / first:.2f}  (answer-all-first takes {first / piped:.2f}x)")


if __name__ == "__main__":
    main()
