"""Issue 42's attacks on the OTLP receiver, before and after, in one run: RSS before/peak/after, seconds, answers.

    python bench/collect_attack.py                       # this tree against /tmp/base42 (the code at 4eff061)
    git worktree add /tmp/base42 4eff061                 # once, to have the "before" code
    python bench/collect_attack.py --base /tmp/base42 --only orphans,amplification

Each attack gets a fresh receiver process (a `Receiver` on 127.0.0.1 with a token and a sink that
stores nothing, so what is measured is the receiver itself), started with PYTHONPATH set to the tree
measured. `--max-open-age S` also sets the open traces' age limit (the "after" tree only; its default
is 120 s) to show memory coming back within the bench's `--after`. RSS is the receiver's own
(/proc/PID/status: VmRSS before the attack and `--after` seconds after it, VmHWM for the peak).
Printed per attack: the issue's "today" figure, then the before and after trees side by side.

The attacks:
  orphans        40 gzip requests of child spans whose root never comes (10,000 traces in all)
  amplification  one gzip request of 2,000,000 empty spans (a few kB on the wire)
  slowloris      70 sockets sending a request-head byte every 5 s; meanwhile an authenticated sender
                 exports once a second; then the sockets close (tracebacks in the log counted)
  deep_json      an OTLP/JSON body 100,000 arrays deep
  oversized      a 2 MB body against a 1 MB cap, 5 tries: a 413 read, or a connection reset
"""
from __future__ import annotations

import argparse
import gzip
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests" / "collect"), str(REPO / "tests")]
from test_collect_attacks import empty_spans  # noqa: E402  the same hand-written body the attack test posts
TOKEN = "bench-token"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/x-protobuf"}

TODAY = {  # the figures (a team deployment, the receiver beside the dashboard)
    "orphans": "198 -> 802 MB, still held 15 s later",
    "amplification": "+1.8 GB peak, 23.6 s CPU, answered 200",
    "slowloris": "70/70 slots taken; every authenticated sender 503; 64 tracebacks on close",
    "deep_json": "RecursionError: no reply, a 30-line traceback per request",
    "oversized": "connection reset 5 of 5 (1 in 3 in other runs)",
}

SERVER = r"""
import json, sys, time, dataclasses
from evaluator.collect.server import Limits, Receiver, serve
from evaluator.collect.sampling import Sampler, SamplingRules
class Sink:
    def append(self, samples): return "run", []
    def update(self, *a): pass
    def counts(self): return {}
wanted = json.loads(sys.argv[1])
known = {f.name for f in dataclasses.fields(Limits)}
limits = Limits(**{k: v for k, v in wanted.items() if k in known})
server = serve(Receiver(Sink(), Sampler(SamplingRules()), token=sys.argv[2], limits=limits), "127.0.0.1", 0)
print(server.server_address[1], flush=True)
while True:
    time.sleep(3600)
"""


class Server:
    """A receiver process of one tree; its RSS and log."""

    def __init__(self, tree: Path, limits: Dict[str, Any]) -> None:
        self.log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)
        env = dict(os.environ, PYTHONPATH=str(tree))
        self.proc = subprocess.Popen([sys.executable, "-c", SERVER, json.dumps(limits), TOKEN],
                                     cwd=tempfile.gettempdir(), env=env, stdout=subprocess.PIPE, stderr=self.log,
                                     text=True)
        self.port = int(self.proc.stdout.readline())  # type: ignore[union-attr]

    def mb(self, field: str) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
        return 0.0

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def tracebacks(self) -> int:
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace").count("Traceback")

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()
        os.unlink(self.log.name)


def post(port: int, body: bytes, headers: Dict[str, str], timeout: float = 120.0) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", "/v1/traces", body=body, headers=headers)
        response = conn.getresponse()
        response.read()
        return str(response.status)
    except (ConnectionError, OSError) as exc:
        return type(exc).__name__
    finally:
        conn.close()


# --- the attacks: each returns its answers, as a short text -------------------------------------------

def _orphan_body() -> bytes:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

    text = AnyValue(string_value="the same long tool output, again and again. " * 20)  # 8.8 MB a request decoded
    spans = [Span(trace_id=trace_id, span_id=os.urandom(8), parent_span_id=b"\x01" * 8, name="child",
                  attributes=[KeyValue(key="output.value", value=text)])
             for trace_id in [os.urandom(16) for _ in range(250)] for _ in range(40)]
    request = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])])
    return gzip.compress(request.SerializeToString())


def orphans(server: Server) -> str:
    answers = [post(server.port, _orphan_body(), dict(AUTH, **{"Content-Encoding": "gzip"})) for _ in range(40)]
    return f"{_tally(answers)}; {_buffer(server.port)}"


def _buffer(port: int) -> str:
    found = _status(port)
    buffer = found.get("buffer") if isinstance(found, dict) else None
    if not buffer:
        if not isinstance(found, dict):
            return str(found)
        return f"open traces {found.get('open_traces', '?')} (no byte budget)"
    dropped = {k: v for k, v in found.get("dropped", {}).items() if k.startswith("open_traces")}
    return (f"open traces {buffer['traces']:,}, {buffer['bytes'] / 1e6:.0f} of {buffer['max_bytes'] / 1e6:.0f} MB "
            f"estimated, expire at {buffer['max_age_s']:g} s; dropped {dropped}")


def _status(port: int) -> object:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/status", headers={"Authorization": f"Bearer {TOKEN}"})
        response = conn.getresponse()
        body = response.read()
        return json.loads(body) if response.status == 200 else f"/status: {response.status}"
    except (OSError, ValueError) as exc:
        return f"/status: {type(exc).__name__}"
    finally:
        conn.close()


def amplification(server: Server) -> str:
    body = gzip.compress(empty_spans(2_000_000))
    return f"{len(body) / 1024:.1f} kB sent: " + post(server.port, body, dict(AUTH, **{"Content-Encoding": "gzip"}))


def slowloris(server: Server) -> str:
    stop, socks = threading.Event(), []

    def trickle() -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
            socks.append(sock)
            for byte in b"POST /v1/traces HTTP/1.1\r\nHost: x\r\n":
                sock.sendall(bytes([byte]))
                if stop.wait(5.0):
                    return
        except OSError:
            return
    threads = [threading.Thread(target=trickle, daemon=True) for _ in range(70)]
    for t in threads:
        t.start()
    end = time.monotonic() + 10
    while len(socks) < 70 and time.monotonic() < end:
        time.sleep(0.1)
    time.sleep(2.0)
    answers = []
    for _ in range(12):
        answers.append(post(server.port, b"", AUTH, timeout=10))
        time.sleep(1.0)
    held = _connections(server.port)
    stop.set()
    for sock in socks:  # as a killed client does: a reset, not a polite close
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        except OSError:
            pass
        sock.close()
    time.sleep(1.5)
    return (f"{len(socks)} trickling sockets; sender: {_tally(answers)}; {held}; "
            f"tracebacks in the log after closing: {server.tracebacks()}")


def _connections(port: int) -> str:
    found = _status(port)
    if not isinstance(found, dict):
        return str(found)
    conns = found.get("connections")
    return f"slots held {conns['authenticated']}/{conns['max']}, pending {conns['pending']}" if conns else \
        "slots: not reported"


def deep_json(server: Server) -> str:
    body = b'{"resourceSpans": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    answer = post(server.port, body, dict(AUTH, **{"Content-Type": "application/json"}), timeout=20)
    time.sleep(0.5)
    return f"{answer}; tracebacks in the log: {server.tracebacks()}"


def oversized(server: Server) -> str:
    body = os.urandom(2 << 20)
    return _tally([post(server.port, body, AUTH) for _ in range(5)])


def _tally(answers: List[str]) -> str:
    counts: Dict[str, int] = {}
    for a in answers:
        counts[a] = counts.get(a, 0) + 1
    return ", ".join(f"{k} x{v}" for k, v in sorted(counts.items()))


ATTACKS: Dict[str, Callable[[Server], str]] = {
    "orphans": orphans, "amplification": amplification, "slowloris": slowloris,
    "deep_json": deep_json, "oversized": oversized}
LIMITS: Dict[str, Dict[str, Any]] = {"oversized": {"max_request_bytes": 1 << 20}}


def measure(tree: Path, name: str, after_s: float) -> Dict[str, Any]:
    server = Server(tree, LIMITS.get(name, {}))
    try:
        time.sleep(0.5)
        before, cpu0, t0 = server.mb("VmRSS"), server.cpu_s(), time.monotonic()
        answers = ATTACKS[name](server)
        seconds, cpu = time.monotonic() - t0, server.cpu_s() - cpu0
        time.sleep(after_s)
        return {"before": before, "peak": server.mb("VmHWM"), "after": server.mb("VmRSS"), "s": seconds,
                "cpu": cpu, "answers": answers}
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", default="/tmp/base42", help="the tree before (default /tmp/base42: 4eff061)")
    parser.add_argument("--only", default=",".join(ATTACKS), help="attacks, comma-separated")
    parser.add_argument("--after", type=float, default=15.0, help="seconds after an attack RSS is read again")
    parser.add_argument("--max-open-age", type=float, default=None, help="the receiver's open-trace age limit")
    args = parser.parse_args()
    trees = {"before": Path(args.base), "after": REPO}
    for name in args.only.split(","):
        print(f"\n== {name}   (issue 42, today: {TODAY[name]})")
        print(f"   {'tree':7} {'RSS before':>10} {'peak':>8} {'after':>8} {'seconds':>8} {'CPU s':>6}  answers")
        for label, tree in trees.items():
            if args.max_open_age is not None:
                LIMITS.setdefault(name, {})["max_open_age"] = args.max_open_age
            r = measure(tree, name, args.after)
            print(f"   {label:7} {r['before']:8.0f}MB {r['peak']:6.0f}MB {r['after']:6.0f}MB "
                  f"{r['s']:8.1f} {r['cpu']:6.1f}  {r['answers']}", flush=True)


if __name__ == "__main__":
    main()
