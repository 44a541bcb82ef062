"""`ragmeter generate` cost and speed: 50 kept items over 30 documents with a 200 ms judge.

    python bench/generate.py                       # workers 1, 4 and 8; ~40 s
    python bench/generate.py --n 50 --docs 30 --latency-ms 200 --workers 4

The judge is OpenAIJudge (no cache) against tests/openai_server.py's ChatServer answering as the
canned writer model of tests/writer_model.py: it writes a question per prompt, and its checks
reject one item in five as "unsupported" and one write in nine is not JSON, so the gate has
something to refuse. Tokens are the server's word counts (usage "auto"), a stand-in for a real
tokenizer. Printed per worker count: kept items, attempts, judge calls and tokens per kept item,
rejections by reason (share of attempts), wall time, and the coverage of the corpus.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for path in (REPO, REPO / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from docfiles import big_corpus  # noqa: E402
from openai_server import ChatServer  # noqa: E402
from writer_model import WriterModel  # noqa: E402

from evaluator.generate.chunking import chunk_documents  # noqa: E402
from evaluator.generate.coverage import compute_coverage  # noqa: E402
from evaluator.generate.documents import load_documents  # noqa: E402
from evaluator.generate.runner import GenerateSettings, Generation  # noqa: E402
from evaluator.judges.openai import OpenAIJudge  # noqa: E402


def measure(chunks: list, n: int, workers: int, latency: float) -> None:
    with ChatServer(responder=WriterModel(reject_every=5, garbage_every=9), latency=latency) as srv:
        judge = OpenAIJudge("writer", base_url=srv.base_url, api_key="bench", max_concurrency=workers)
        started = time.perf_counter()
        gen = Generation(judge, chunks, GenerateSettings(n=n, workers=workers)).run()
        wall = time.perf_counter() - started
        judge.close()
    kept = max(1, len(gen.items))
    rejected = sum(gen.rejected.values())
    reasons = ", ".join(f"{r} {c} ({c / gen.attempts:.0%})" for r, c in gen.rejected.most_common()) or "none"
    print(f"workers {workers}: kept {len(gen.items)}/{n} in {gen.attempts} attempts, wall {wall:.1f} s; "
          f"{gen.calls} judge calls = {gen.calls / kept:.2f} per kept item, {gen.tokens / kept:.0f} tokens per kept item")
    print(f"  rejected {rejected}/{gen.attempts} attempts ({rejected / max(1, gen.attempts):.0%}): {reasons}")
    print(f"  {compute_coverage(chunks, gen.items).summary()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--docs", type=int, default=30)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--workers", type=int, action="append")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        chunks = chunk_documents(load_documents(big_corpus(Path(tmp) / "docs", documents=args.docs)))
    print(f"{args.docs} documents, {len(chunks)} chunks; judge latency {args.latency_ms:.0f} ms")
    for workers in args.workers or [1, 4, 8]:
        measure(chunks, args.n, workers, args.latency_ms / 1000)


if __name__ == "__main__":
    main()
