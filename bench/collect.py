"""`ragmeter collect` under a flood: is it shed with counters, and does GET /status stay fast?

    python bench/collect.py                        # 4 flooding processes for 10 s, limit 200 traces/s
    python bench/collect.py --flooders 8 --seconds 20 --limit 100

The receiver runs as its own process (`ragmeter collect`, offline judge, a temporary SQLite history).
First GET /status is timed on a quiet receiver; then FLOODERS processes post OTLP/JSON requests of
--traces traces each (new trace ids every request) as fast as the receiver answers, over kept-alive
connections, while this process times GET /status again. Printed side by side: /status p50/p99
quiet and under the flood (and their ratio), what the flood offered and what was stored per second,
the drops by reason from the receiver's own counters, the replies by status code, and the
receiver's resident memory before and after (shedding must not grow it).
"""
from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Dict, List

REPO = Path(__file__).resolve().parent.parent
TOKEN = "bench-token"


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def body(n: int) -> bytes:
    spans = [{"traceId": uuid.uuid4().hex, "spanId": uuid.uuid4().hex[:16], "name": "ask", "attributes": [
        {"key": "input.value", "value": {"stringValue": f"Can I return a bell bought {i} days ago?"}},
        {"key": "output.value", "value": {"stringValue": "Yes, within thirty days, with the receipt."}},
        {"key": "metadata", "value": {"stringValue": '{"env": "prod"}'}}]} for i in range(n)]
    return json.dumps({"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.version", "value": {"stringValue": "3.2.1"}}]}, "scopeSpans": [{"spans": spans}]}]}).encode()


def flood(port: int, seconds: float, traces: int, out: "multiprocessing.Queue[Dict[str, int]]") -> None:
    """One flooding process: post as fast as answers come, count the replies by status."""
    codes: Counter = Counter()
    end = time.monotonic() + seconds
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    while time.monotonic() < end:
        try:
            conn.request("POST", "/v1/traces", body=body(traces), headers=headers)
            reply = conn.getresponse()
            reply.read()
            codes[str(reply.status)] += 1
            if reply.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        except (OSError, http.client.HTTPException) as exc:
            codes[type(exc).__name__] += 1
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    out.put(dict(codes))


def status(port: int) -> Dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/status", headers={"Authorization": f"Bearer {TOKEN}"})
    reply = conn.getresponse()
    data = reply.read()
    conn.close()
    return json.loads(data) if reply.status == 200 else {"http_status": reply.status}


def timed_status(port: int, seconds: float, pause: float = 0.02) -> List[float]:
    """GET /status latencies (ms), one request at a time, each on a new connection, for `seconds`."""
    times, end = [], time.monotonic() + seconds
    while time.monotonic() < end:
        start = time.perf_counter()
        status(port)
        times.append((time.perf_counter() - start) * 1000)
        time.sleep(pause)
    return times


def pct(values: List[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def start_receiver(port: int, history: str, limit: float) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO), RAGMETER_BENCH_TOKEN=TOKEN)
    proc = subprocess.Popen([sys.executable, "-m", "evaluator", "collect", "--listen", f"127.0.0.1:{port}",
                             "--project", "bench", "--history", history, "--token-env", "RAGMETER_BENCH_TOKEN",
                             "--max-traces-per-second", str(limit), "--status-every", "0", "--settle", "0.5"],
                            env=env, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    if "listening on" not in line:
        raise SystemExit(f"the receiver did not start: {line}{proc.stderr.read()}")
    return proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flooders", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--traces", type=int, default=50, help="traces per flood request")
    parser.add_argument("--limit", type=float, default=200.0, help="the receiver's --max-traces-per-second")
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        proc = start_receiver(port, os.path.join(folder, "history.sqlite3"), args.limit)
        try:
            run(proc, port, args)
        finally:
            proc.terminate()
            proc.wait(20)


def run(proc: subprocess.Popen, port: int, args: argparse.Namespace) -> None:
    quiet = timed_status(port, 3.0)
    rss_before = rss_kib(proc.pid)
    out: "multiprocessing.Queue[Dict[str, int]]" = multiprocessing.Queue()
    workers = [multiprocessing.Process(target=flood, args=(port, args.seconds, args.traces, out))
               for _ in range(args.flooders)]
    started = time.monotonic()
    for w in workers:
        w.start()
    time.sleep(0.5)
    flooded = timed_status(port, args.seconds - 1.0)
    codes: Counter = Counter()
    for _ in workers:
        codes.update(out.get(timeout=args.seconds + 30))
    for w in workers:
        w.join()
    elapsed = time.monotonic() - started
    time.sleep(1.0)
    counters, rss_after = status(port), rss_kib(proc.pid)
    offered = counters["received"]["traces"] + counters["dropped"].get("busy", 0) * args.traces
    print(f"flood: {args.flooders} processes x {elapsed:.1f} s, {args.traces} traces a request, limit {args.limit:g}/s")
    print(f"{'':28}{'quiet':>10}{'flood':>10}{'ratio':>8}")
    for name, p in (("GET /status p50 (ms)", 50), ("GET /status p99 (ms)", 99)):
        a, b = pct(quiet, p), pct(flooded, p)
        print(f"{name:28}{a:>10.2f}{b:>10.2f}{b / a:>8.1f}")
    print(f"{'GET /status requests':28}{len(quiet):>10}{len(flooded):>10}")
    print(f"replies to the flood: {dict(codes)}")
    print(f"traces decoded {counters['received']['traces']:,} ({counters['received']['traces'] / elapsed:,.0f}/s), "
          f"stored {counters['stored']:,} ({counters['stored'] / elapsed:,.0f}/s), offered at least {offered:,}")
    print(f"dropped by reason: {counters['dropped']}")
    print(f"receiver RSS: {rss_before / 1024:.1f} MiB before, {rss_after / 1024:.1f} MiB after; "
          f"live run {counters['live_run']}; median /status {statistics.median(flooded):.2f} ms under flood")


if __name__ == "__main__":
    main()
