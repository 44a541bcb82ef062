"""The Batch API path's own cost, against the loopback files + batches server (tests/batch_server.py).

    python bench/batch.py [--n 2000]

A real batch takes minutes to hours at the provider; what ragmeter adds around it is the
collecting pass, writing and uploading the requests file, downloading and parsing the results,
and the replaying pass. This prints each of those for n unique samples of the bundled data,
the requests file's size per judge call, and peak memory (RSS) of the whole run.
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from batch_server import BatchServer  # noqa: E402
from offline_speed import unique_copies  # noqa: E402

from evaluator import OpenAIJudge, RAGEvaluator, load_dataset  # noqa: E402
from evaluator.scoring.batching import evaluate_batch  # noqa: E402
from evaluator.judges.batch import BatchClient  # noqa: E402

REPLY = '{"claims": [{"claim": "c", "verdict": "supported"}], "score": 0.8, "reasoning": "ok"}'


class Timed(BatchClient):
    """BatchClient that times its uploads and downloads."""

    spent = {"submit": 0.0, "results": 0.0}

    def submit(self, data: bytes) -> str:
        start = time.perf_counter()
        try:
            return super().submit(data)
        finally:
            self.spent["submit"] += time.perf_counter() - start

    def results(self, statuses):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return super().results(statuses)
        finally:
            self.spent["results"] += time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    samples = list(enumerate(unique_copies(load_dataset(ROOT / "sample_data" / "sample.jsonl"), args.n)))
    with BatchServer(responder=lambda body: REPLY, polls=1) as srv:
        judge = OpenAIJudge("bench-model", base_url=srv.base_url, api_key="bench")
        client = Timed(judge, poll_interval=0.01)
        start = time.perf_counter()
        report = evaluate_batch(RAGEvaluator(judge), samples, client)
        total = time.perf_counter() - start
        sent = report.usage["requests"]
        size = sum(len(data) for data in srv.uploads)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    own = total - client.spent["submit"] - client.spent["results"]
    print(f"{args.n:,} samples, {sent:,} judge calls in {len(report.usage['batch_ids'])} batch(es): "
          f"{total:.2f} s in all ({args.n / total:,.0f} samples/s)")
    print(f"  collecting + replaying passes: {own:.2f} s; upload {client.spent['submit']:.2f} s; "
          f"download + parse {client.spent['results']:.2f} s")
    print(f"  requests file: {size / 1e6:.1f} MB ({size / max(sent, 1):,.0f} bytes per call); "
          f"peak RSS {rss:,.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
