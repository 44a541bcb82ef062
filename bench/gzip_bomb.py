"""A small .jsonl.gz that unpacks to gigabytes, refused at the byte cap (issue 48; io/compressed.py).

    python bench/gzip_bomb.py                   # 5 MB of gzip, the dashboard's 200 MB upload limit
    python bench/gzip_bomb.py --mb 20 --limit-mb 500

Reads the bomb the way the dashboard reads an upload (`load_upload(bytes, name, max_bytes=...)`), in this
process, and prints: the packed size, what it would unpack to whole, the answer (refused, with its
message), seconds to the answer, the peak of Python's allocations during the read (tracemalloc) and the
packed bytes the reader took. Target: refused, having read only the part that unpacks to the cap, with a
peak of a few MB (chunks of 1 MB, never the whole content in memory).
"""
from __future__ import annotations

import argparse
import gzip
import io
import time
import tracemalloc
from unittest import mock

from evaluator.errors import DatasetError
from evaluator.io import sources
from evaluator.io.uploads import load_upload

LINES = b'{"question": "What is the refund window?", "answer": "30 days."}\n' * 32_768


def bomb(size: int) -> bytes:
    member = gzip.compress(LINES, compresslevel=9)  # gzip members one after another, as `cat a.gz b.gz` makes
    return member * (size // len(member) + 1)


class Counting(io.BytesIO):
    taken = 0

    def read(self, n: int = -1) -> bytes:  # type: ignore[override]
        chunk = super().read(n)
        Counting.taken += len(chunk)
        return chunk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=5.0, help="packed size in MB")
    parser.add_argument("--limit-mb", type=int, default=200, help="the upload limit in MB")
    args = parser.parse_args()
    data = bomb(int(args.mb * 1_000_000))
    whole = len(LINES) * (len(data) // len(gzip.compress(LINES, compresslevel=9)))
    print(f"packed {len(data) / 1e6:.1f} MB, unpacks whole to {whole / 1e9:.2f} GB, limit {args.limit_mb} MB")
    tracemalloc.start()
    start = time.perf_counter()
    with mock.patch.object(sources.io, "BytesIO", Counting):  # count what the reader takes from the upload
        try:
            load_upload(data, "logs.jsonl.gz", max_bytes=args.limit_mb * 1_000_000)
            answer = "READ (not refused)"
        except DatasetError as exc:
            answer = f"refused: {exc}"
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    print(answer)
    print(f"{seconds:.2f} s, peak Python allocations {peak / 1e6:.1f} MB (beyond the upload's {len(data) / 1e6:.1f} MB, "
          f"held before), packed bytes read {Counting.taken / 1e6:.2f} MB of {len(data) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
