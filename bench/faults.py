"""Fault matrix: does a run survive a misbehaving judge server without losing or hiding anything?

    python bench/faults.py                  # 1,000 samples, 10% of each fault, a few minutes
    python bench/faults.py --n 200 --rate 0.15 --timeout 1 --stall 1.5
    python bench/faults.py --json faults.json

A loopback OpenAI-compatible server (tests/openai_server.py, in this process) answers every
chat request with one behaviour drawn from `--rate` per fault kind (the rest answer normally):

    429        HTTP 429 with `Retry-After: --retry-after`
    500 / 503  HTTP 500 or 503 (half each; together one kind)
    stall      holds the request past the client's --timeout (--stall seconds), then hangs up
    drop       closes the connection without answering
    malformed  HTTP 200 whose body is not JSON at all
    truncated  a valid completion whose content (the judge's JSON) is cut off mid-way
    empty      a valid completion with empty content

../shared/tools/mock_openai.py has no 503, no non-JSON body and no empty content for schema
requests, so this bench uses its own in-process server for every kind.

The draw is a hash of (prompt, how many times the server has seen that prompt, --seed), so the
same sample meets the same faults in the same order whatever the thread timing: a run is
reproducible, and tests/judges/test_fault_matrix.py can predict every outcome.

It prints the faults injected, the judge's retries, per metric how each score was made and why
fallbacks happened, and the rows lost (every input sample_id must appear exactly once in the
report). Exit status 1 when a row is lost or a score is unexplained.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, make_samples, table  # noqa: E402

sys.path.insert(0, str(REPO / "tests"))
from openai_server import ChatServer, Recorded, drop, error, malformed, reply, stall  # noqa: E402

from evaluator import OpenAIJudge, RAGEvaluator  # noqa: E402
from evaluator.model import METHOD_BLEND, METHOD_FALLBACK, METHOD_SKIPPED, METRICS, EvalReport  # noqa: E402

KINDS = ("429", "5xx", "stall", "drop", "malformed", "truncated", "empty")
RETRIED_KINDS = ("429", "5xx", "stall", "drop", "malformed")  # the judge retries these; not the rest
OK_REPLY = '{"reasoning": "The claims are supported by the retrieved context.", "score": 0.75}'
# A reply cut off before its score, as a max_tokens limit leaves it: no JSON and no number in it.
TRUNCATED_REPLY = OK_REPLY[: OK_REPLY.index('"score"') - 2]
NOT_JSON = b"<html><body>502 Bad Gateway</body></html>"
RETRIED_MARK = "judge call succeeded after"  # what metrics.py appends to a retried score's reasoning


# --- the injector -----------------------------------------------------------------------------

@dataclass
class FaultPlan:
    """Which fault the n-th request carrying a given prompt meets (a pure function)."""

    rate: float = 0.10
    seed: int = 0
    retry_after: float = 0.5
    stall_s: float = 3.0

    def kind(self, prompt: str, attempt: int) -> str:
        """'ok' or one of KINDS for the `attempt`-th (0-based) request with this prompt."""
        digest = hashlib.sha256(f"{self.seed}|{attempt}|{prompt}".encode("utf-8")).digest()
        u = int.from_bytes(digest[:8], "big") / 2**64
        slot = int(u / self.rate) if self.rate > 0 else len(KINDS)
        return KINDS[slot] if slot < len(KINDS) else "ok"

    def status_5xx(self, prompt: str, attempt: int) -> int:
        return 503 if hashlib.sha256(f"5xx|{attempt}|{prompt}".encode()).digest()[0] & 1 else 500

    def behaviour(self, kind: str, prompt: str, attempt: int) -> Any:
        """The openai_server behaviour that injects `kind`."""
        if kind == "429":
            return error(429, "Rate limit reached (injected)", retry_after=self.retry_after)
        if kind == "5xx":
            status = self.status_5xx(prompt, attempt)
            return error(status, f"HTTP {status} injected by the fault bench")
        if kind == "stall":
            return stall(self.stall_s)
        if kind == "drop":
            return drop()
        if kind == "malformed":
            return malformed(NOT_JSON)
        if kind == "truncated":
            return reply(TRUNCATED_REPLY, finish_reason="length")
        if kind == "empty":
            return reply("")
        return reply(OK_REPLY)


def prompt_key(prompt: str) -> str:
    """How the injector files a prompt (a digest: 1,000 samples' prompts would be ~50 MB)."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:20]


@dataclass
class FaultInjector:
    """A ChatServer responder that follows a FaultPlan and records what it injected.

    `history[prompt_key(prompt)]` lists the behaviours that prompt met, in order ("ok",
    "429", "HTTP 500", "HTTP 503", "stall", ...); `injected` counts them over all prompts.
    """

    plan: FaultPlan
    injected: Counter = field(default_factory=Counter)
    history: Dict[str, List[str]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: Recorded) -> Any:
        prompt = request.prompt
        with self._lock:
            seen = self.history.setdefault(prompt_key(prompt), [])
            attempt = len(seen)
            kind = self.plan.kind(prompt, attempt)
            label = f"HTTP {self.plan.status_5xx(prompt, attempt)}" if kind == "5xx" else kind
            seen.append(label)
            self.injected[label] += 1
        return self.plan.behaviour(kind, prompt, attempt)


# --- reading the report -----------------------------------------------------------------------

@dataclass
class MetricRow:
    metric: str
    judge: int = 0  # llm_blend
    retried: int = 0  # llm_blend whose judge call needed retries
    fallback: int = 0
    skipped: int = 0
    unexplained: int = 0  # any other method, or a fallback without an error

    @property
    def total(self) -> int:
        return self.judge + self.fallback + self.skipped + self.unexplained


def metric_rows(report: EvalReport) -> List[MetricRow]:
    """How each metric's scores were made, over every result."""
    rows = {m: MetricRow(m) for m in METRICS}
    for result in report.results:
        for name in METRICS:
            _count(rows[name], getattr(result, name))
    return list(rows.values())


def _count(row: MetricRow, ms: Any) -> None:
    if ms.method == METHOD_BLEND:
        row.judge += 1
        row.retried += RETRIED_MARK in ms.reasoning
    elif ms.method == METHOD_FALLBACK and ms.error:
        row.fallback += 1
    elif ms.method == METHOD_SKIPPED and ms.reasoning:
        row.skipped += 1
    else:
        row.unexplained += 1


def fallback_reason(error: str) -> str:
    """A short category for a fallback's recorded error."""
    text = error.lower()
    for needle, label in (("timeout", "timeout"), ("http 429", "HTTP 429"), ("http 500", "HTTP 500"),
                          ("http 503", "HTTP 503"), ("connection", "connection dropped"),
                          ("malformed", "malformed body"), ("empty reply", "empty reply"),
                          ("no json score", "unparseable (truncated) reply")):
        if needle in text:
            return label
    return "other: " + error[:60]


def fallback_reasons(report: EvalReport) -> Counter:
    reasons: Counter = Counter()
    for result in report.results:
        for name in METRICS:
            ms = getattr(result, name)
            if ms.method == METHOD_FALLBACK:
                reasons[fallback_reason(ms.error or "")] += 1
    return reasons


def rows_lost(sample_ids: Sequence[str], report: EvalReport) -> Dict[str, int]:
    """Input ids missing from the report, ids in it more than once, ids it should not have."""
    got = Counter(r.sample_id for r in report.results)
    wanted = Counter(sample_ids)
    return {"missing": sum(1 for i in wanted if i not in got),
            "duplicated": sum(c - 1 for c in got.values() if c > 1),
            "unknown": sum(1 for i in got if i not in wanted)}


# --- the run ----------------------------------------------------------------------------------

def fault_samples(n: int, seed: int = 0) -> list:
    """Generated samples; every 10th has no reference, so its two reference metrics are skipped."""
    samples = make_samples(n, seed)
    for s in samples[::10]:
        s.ground_truth = None
    return samples


def run(args: argparse.Namespace) -> Dict[str, Any]:
    plan = FaultPlan(args.rate, args.seed, args.retry_after, args.stall)
    injector = FaultInjector(plan)
    samples = fault_samples(args.n, args.seed)
    with ChatServer(responder=injector, latency=args.latency_ms / 1000) as server:
        with OpenAIJudge("fault-bench", base_url=server.base_url, timeout=args.timeout,
                         max_retries=args.max_retries, max_concurrency=args.workers) as judge:
            start = time.perf_counter()
            report = RAGEvaluator(judge, language="en").evaluate_dataset(samples, max_workers=args.workers)
            wall = time.perf_counter() - start
            usage = judge.usage()
            limiter = judge.limiter.snapshot()
            limits = list(judge.limiter.history)
        requests = len(server.chat_requests)
    return {"args": vars(args), "report": report, "wall_s": wall, "usage": usage, "limiter": limiter,
            "limit_history_len": len(limits), "limit_min": min(limits), "requests": requests,
            "injected": dict(injector.injected),
            "rows": rows_lost([s.sample_id for s in samples], report),
            "metrics": metric_rows(report), "reasons": dict(fallback_reasons(report))}


def print_matrix(out: Dict[str, Any]) -> None:
    a, usage, report = out["args"], out["usage"], out["report"]
    print(f"fault matrix: {a['n']} samples, max_workers {a['workers']}, {a['rate']:.0%} of chat requests per "
          f"fault kind, client timeout {a['timeout']:g} s, stall {a['stall']:g} s, Retry-After "
          f"{a['retry_after']:g} s, max_retries {a['max_retries']}")
    total = out["requests"]
    injected = out["injected"]
    order = ["ok", "429", "HTTP 500", "HTTP 503", "stall", "drop", "malformed", "truncated", "empty"]
    print("\ninjected (server side, per chat request)")
    print(table(["behaviour", "requests", "share"],
                [[k, injected.get(k, 0), f"{injected.get(k, 0) / total:.1%}" if total else "-"] for k in order]
                + [["total", total, ""]]))
    print(f"\njudge: {usage['calls']} completions received, {usage['requests']} HTTP attempts, "
          f"{usage['retries']} retries, {usage['rate_limited']} rate-limited, {usage['failures']} calls gave up "
          f"after retries; concurrency limit fell to {out['limit_min']} (peak in flight "
          f"{out['limiter']['peak_in_flight']}, {out['limiter']['throttles']} throttle signals)")
    print("\nper metric (of all samples)")
    rows = [[r.metric, r.judge, r.retried, r.fallback, r.skipped, r.unexplained, f"{r.judge + r.fallback}/{r.total}"]
            for r in out["metrics"]]
    print(table(["metric", "scored by judge", "of which retried", "heuristic fallback", "skipped",
                 "unexplained", "scored/total"], rows))
    print("\nwhy the fallbacks happened (error recorded on each score)")
    print(table(["reason", "scores"], sorted(out["reasons"].items(), key=lambda kv: -kv[1])))
    lost = out["rows"]
    n_lost = lost["missing"] + lost["duplicated"] + lost["unknown"]
    print(f"\nrows: {a['n']} in, {len(report.results)} in the report; missing {lost['missing']}, "
          f"duplicated {lost['duplicated']}, unknown {lost['unknown']} -> rows lost: {n_lost}")
    print(f"wall time: {out['wall_s']:.1f} s")


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=1000, help="samples (default 1000)")
    p.add_argument("--workers", type=int, default=16, help="max_workers (default 16)")
    p.add_argument("--rate", type=float, default=0.10, help="share of chat requests per fault kind (default 0.10)")
    # Short waits keep 1,000 samples to a few minutes: with a quarter of requests signalling
    # overload (429, 503, timeouts) the judge's AIMD limiter holds ~1-2 calls in flight, so
    # every stall costs about one client timeout of wall time.
    p.add_argument("--timeout", type=float, default=0.3, help="client timeout, seconds (default 0.3)")
    p.add_argument("--stall", type=float, default=0.6, help="how long a stalled request is held (default 0.6)")
    p.add_argument("--retry-after", type=float, default=0.1, help="Retry-After on 429s, seconds (default 0.1)")
    p.add_argument("--max-retries", type=int, default=3, help="judge retries per call (default 3)")
    p.add_argument("--latency-ms", type=float, default=10.0, help="server latency per chat call (default 10)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    return p.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    if not 0 <= args.rate * len(KINDS) <= 1:
        raise SystemExit(f"--rate {args.rate} x {len(KINDS)} kinds must be between 0 and 1")
    out = run(args)
    print_matrix(out)
    if args.json:
        data = {k: v for k, v in out.items() if k != "report"}
        data["metrics"] = [vars(r) for r in out["metrics"]]
        data["args"] = {k: str(v) if isinstance(v, Path) else v for k, v in data["args"].items()}
        args.json.write_text(json.dumps(data, indent=2), encoding="utf-8")
    lost = sum(out["rows"].values())
    unexplained = sum(r.unexplained for r in out["metrics"])
    return 1 if lost or unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
