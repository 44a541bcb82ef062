"""Helpers shared by the benches: the mock OpenAI server as a subprocess, its request log, and
generated samples.

The mock server is `../shared/tools/mock_openai.py` (next to the repository), a stdlib
OpenAI-compatible server with injected latency and faults that writes one JSON line per
request. It is run as a subprocess, never imported or copied, so the benches measure it the way
a client on the network would.
"""
from __future__ import annotations

import json
import random
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Sequence

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from evaluator.model import EvalSample  # noqa: E402

DEFAULT_MOCK = REPO.parent / "shared" / "tools" / "mock_openai.py"


# --- the mock server ------------------------------------------------------------------------

def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class MockServer:
    """A running mock_openai.py subprocess; stop it with `stop()` or use it as a context manager."""

    proc: subprocess.Popen
    port: int
    log_path: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def records(self) -> List[dict]:
        """Every request logged so far."""
        return read_log(self.log_path)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> "MockServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_mock(script: Path, log_path: Path, args: Sequence[str] = (), *,
               ready_timeout: float = 15.0) -> MockServer:
    """Start the mock on a free port, logging to `log_path`; return once it answers /health."""
    script = Path(script)
    if not script.is_file():
        raise SystemExit(f"mock server not found at {script}; pass --mock PATH to mock_openai.py")
    port = free_port()
    cmd = [sys.executable, str(script), "--port", str(port), "--log", str(log_path), *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    server = MockServer(proc, port, Path(log_path))
    _wait_ready(server, ready_timeout)
    return server


def _wait_ready(server: MockServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise SystemExit(f"mock server exited at start: {server.proc.stderr.read()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/health", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    server.stop()
    raise SystemExit(f"mock server did not answer on port {server.port} within {timeout:g}s")


# --- its log ----------------------------------------------------------------------------------

def read_log(path: Path) -> List[dict]:
    """The mock's JSONL request log (empty when the file does not exist yet)."""
    path = Path(path)
    if not path.exists():
        return []
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@dataclass
class LogSummary:
    """What a run cost, as the server saw it (tokens are the mock's chars/4 estimates)."""

    chat_calls: int = 0  # chat-completion requests, whatever their outcome
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedding_calls: int = 0
    embedding_tokens: int = 0
    busy_s: float = 0.0  # sum of chat request durations
    span_s: float = 0.0  # first chat request start to last end
    peak_in_flight: int = 0
    outcomes: Dict[str, int] = field(default_factory=dict)

    @property
    def mean_in_flight(self) -> float:
        """Average chat requests in flight over the span (effective concurrency)."""
        return self.busy_s / self.span_s if self.span_s > 0 else 0.0


def summarize_log(records: Iterable[dict]) -> LogSummary:
    """Totals over a request log: calls, tokens, durations and outcomes."""
    s, starts, ends, outcomes = LogSummary(), [], [], Counter()
    for rec in records:
        if rec.get("endpoint") == "embeddings":
            s.embedding_calls += 1
            s.embedding_tokens += rec.get("prompt_tokens_est") or 0
        elif rec.get("endpoint") == "chat":
            s.chat_calls += 1
            s.prompt_tokens += rec.get("prompt_tokens_est") or 0
            s.completion_tokens += rec.get("completion_tokens_est") or 0
            s.busy_s += rec.get("dur_s") or 0.0
            s.peak_in_flight = max(s.peak_in_flight, rec.get("inflight_at_start") or 0)
            starts.append(rec["t_start"])
            ends.append(rec["t_end"])
            outcomes[str(rec.get("outcome"))] += 1
    if starts:
        s.span_s = max(ends) - min(starts)
    s.outcomes = dict(outcomes)
    return s


# --- generated samples ------------------------------------------------------------------------

_SUBJECTS = ("the river authority", "the city council", "the research team", "the harbour office",
             "the regional library", "the water board", "the rail operator", "the museum trust",
             "the school district", "the energy cooperative", "the hospital network", "the port agency")
_VERBS = ("approved", "published", "extended", "reviewed", "funded", "replaced", "measured",
          "renovated", "postponed", "expanded", "audited", "introduced")
_OBJECTS = ("a new flood barrier", "the annual budget report", "the northern tram line",
            "a survey of coastal erosion", "the public reading programme", "the solar panel scheme",
            "the night bus timetable", "a study of air quality", "the bridge inspection plan",
            "the vaccination campaign", "the recycling contract", "the digital archive")
_DETAILS = ("after a public consultation that lasted three months",
            "with support from two neighbouring municipalities",
            "despite objections raised by several local businesses",
            "following an independent review of the previous results",
            "at a total cost of roughly four million euros",
            "because demand had grown steadily over the last decade",
            "as part of a long term plan agreed in the spring",
            "so that residents could follow progress on a public website")
_YEARS = tuple(str(y) for y in range(1998, 2025))


def _sentence(rng: random.Random) -> str:
    return (f"In {rng.choice(_YEARS)}, {rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} "
            f"{rng.choice(_OBJECTS)} {rng.choice(_DETAILS)}.").capitalize()


def _sentences(rng: random.Random, n: int) -> str:
    return " ".join(_sentence(rng) for _ in range(n))


def make_sample(rng: random.Random, index: int) -> EvalSample:
    """One generated sample: three 3-sentence contexts, a 3-sentence answer, a 1-sentence reference."""
    subject, obj = rng.choice(_SUBJECTS), rng.choice(_OBJECTS)
    return EvalSample(
        question=f"What did {subject} do about {obj}, and when?",
        answer=_sentences(rng, 3),
        contexts=[_sentences(rng, 3) for _ in range(3)],
        ground_truth=_sentence(rng),
        sample_id=f"s{index:06d}",
    )


def make_samples(n: int, seed: int = 0) -> List[EvalSample]:
    """`n` generated samples, the same for the same seed."""
    rng = random.Random(seed)
    return [make_sample(rng, i) for i in range(n)]


def sample_row(sample: EvalSample) -> dict:
    """A sample as a JSONL dataset row (ragmeter's column names)."""
    return {"sample_id": sample.sample_id, "question": sample.question, "answer": sample.answer,
            "contexts": sample.contexts, "ground_truth": sample.ground_truth}


def write_jsonl(samples: Iterable[EvalSample], path: Path) -> Path:
    with Path(path).open("w", encoding="utf-8") as fh:
        for s in samples:
            fh.write(json.dumps(sample_row(s)) + "\n")
    return Path(path)


# --- printing ---------------------------------------------------------------------------------

def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A plain fixed-width text table (first column left-aligned, the others right-aligned)."""
    cells = [[str(h) for h in header]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = []
    for k, row in enumerate(cells):
        parts = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        lines.append("  ".join(parts).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.2f}"
    return str(value)


def start_dashboard(port: int, env: Dict[str, str], source: Path = REPO, timeout: float = 90) -> subprocess.Popen:
    """`streamlit run app.py` from `source` on a loopback port, once its health check answers."""
    import os
    import signal
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1",
         "--server.port", str(port), "--browser.gatherUsageStats", "false", "--server.headless", "true"],
        cwd=source, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.read() == b"ok":
                    return proc
        except OSError:
            time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGKILL)
    raise SystemExit(f"the dashboard did not start within {timeout:.0f} s")
