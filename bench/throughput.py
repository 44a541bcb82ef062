"""Throughput and cost benchmark: ragmeter beside ragas against the same loopback server.

    python bench/throughput.py                      # ~5 minutes; installs ragas on first use
    python bench/throughput.py --skip-ragas --n 50  # ragmeter and offline figures only
    python bench/throughput.py --json throughput.json

What it does (see bench/README.md for each printed figure):
1. Starts ../shared/tools/mock_openai.py (an OpenAI-compatible server with --latency-ms per
   chat call that logs every request) on a free port, one server and one log per run.
2. Generates N samples (three 3-sentence contexts, a 3-sentence answer, a 1-sentence reference)
   and scores them with ragmeter's OpenAIJudge at each --workers setting: calls and tokens per
   sample from the server's log and from `OpenAIJudge.usage()`, wall time, effective
   concurrency (sum of request durations / wall time), then a re-run from the judge cache.
3. Scores --ragas-n of the same samples with ragas in a throw-away virtualenv (never a project
   dependency) against the same kind of server, at the same max_workers, and prints the ratios.
4. Offline: samples/s over 10,000 samples on one core, and the peak RSS of a subprocess that
   loads and scores a 100,000-row JSONL dataset.

Tokens on both sides are the mock's estimate (characters / 4) of what was sent and received,
so the comparison is like for like.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    DEFAULT_MOCK,
    REPO,
    MockServer,
    make_samples,
    start_mock,
    summarize_log,
    table,
    write_jsonl,
)

from evaluator import OfflineJudge, OpenAIJudge, RAGEvaluator  # noqa: E402
from evaluator.metrics.combined import AUTO, COMBINED, JUDGE_MODES, SEPARATE  # noqa: E402
from evaluator.scoring.costs import estimate_run  # noqa: E402

RAGAS_VERSION = "0.4.3"
RAGAS_VENV = Path(tempfile.gettempdir()) / "ragmeter-bench-ragas-venv"
# langchain-community 0.4 dropped chat_models.vertexai, which ragas 0.4.3 imports at start-up.
RAGAS_PACKAGES = (f"ragas=={RAGAS_VERSION}", "langchain-openai", "langchain-community<0.4")
MODEL = "gpt-4o-mini"
OFFLINE_N = 10_000
RSS_N = 100_000
TARGET_OFFLINE_RATE = 5_000  # samples/s on one core
TARGET_RSS_MB = 1_024
TARGET_CALLS = 5  # judge calls per sample
TARGET_PROMPT_SHARE = 0.25  # of ragas's prompt tokens per sample (issue 5), in any layout
# Issue 47: the default mode on a server that reuses no prompt prefix sends at most this share of ragas's tokens.
TARGET_NO_CACHE_SHARE = 0.16
# Generated JSON strings padded to ~90 characters and 3 items per list, the size of real
# statements and verdicts: ragas feeds its first calls' statements into later prompts, and with
# these sizes its completion tokens per sample (~1,300) match what issue 5 saw.
MOCK_ARGS = "--array-len 3 --str-len 90"


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=100, help="samples for ragmeter (default 100)")
    p.add_argument("--ragas-n", type=int, default=20, help="samples for ragas (default 20; figures are per sample)")
    p.add_argument("--latency-ms", type=float, default=200.0, help="server latency per chat call")
    p.add_argument("--workers", default="1,4,16", help="comma-separated max_workers settings")
    p.add_argument("--skip-ragas", action="store_true", help="do not install or run ragas")
    p.add_argument("--server-caches", default="auto", choices=("auto", "no", "yes"),
                   help="treat the mock as a server that reuses a prompt prefix (yes: llama.cpp, vLLM), does not (no: "
                        "OpenAI's own) or as what it is (auto, the default: a server ragmeter cannot identify, taken "
                        "to reuse no prefix)")
    p.add_argument("--judge-mode", default=AUTO, choices=JUDGE_MODES,
                   help="ragmeter's judge mode (default auto; combined: one call per sample for all five metrics)")
    p.add_argument("--skip-layouts", action="store_true",
                   help="skip the table of every judge-mode layout's prompt tokens beside ragas's")
    p.add_argument("--skip-offline", action="store_true", help="skip the offline rate and RSS figures")
    p.add_argument("--offline-n", type=int, default=OFFLINE_N, help="samples for the offline rate (default 10,000)")
    p.add_argument("--rss-n", type=int, default=RSS_N, help="rows for the peak-RSS figure (default 100,000)")
    p.add_argument("--mock-args", default=MOCK_ARGS, help=f"extra mock_openai.py options (default {MOCK_ARGS!r})")
    p.add_argument("--mock", type=Path, default=DEFAULT_MOCK, help="path to mock_openai.py")
    p.add_argument("--ragas-venv", type=Path, default=RAGAS_VENV, help="where to install ragas")
    p.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    return p.parse_args(argv)


# --- ragmeter against the mock --------------------------------------------------------------

def mock_options(args: argparse.Namespace) -> List[str]:
    return ["--latency-ms", f"{args.latency_ms:g}", *args.mock_args.split()]


def settled_records(server: MockServer, at_least: int, timeout: float = 3.0) -> List[dict]:
    """The server's log once it holds `at_least` records (it writes each just after replying)."""
    deadline = time.monotonic() + timeout
    records = server.records()
    while len(records) < at_least and time.monotonic() < deadline:
        time.sleep(0.05)
        records = server.records()
    return records


def timed_run(judge: OpenAIJudge, samples: list, workers: int, judge_mode: str = AUTO) -> tuple:
    start = time.perf_counter()
    report = RAGEvaluator(judge, language="en", judge_mode=judge_mode).evaluate_dataset(samples, max_workers=workers)
    return report, time.perf_counter() - start


def as_if(judge: OpenAIJudge, caches: str) -> None:
    """--server-caches: the mock is a server ragmeter cannot identify ("auto": taken to reuse no prefix); "no"
    makes it one known not to reuse a prefix (OpenAI's own), "yes" one that does (llama.cpp, vLLM), so each
    default-mode path is measured on the same server."""
    if caches != "auto":
        judge.chat.caches_prefix = lambda prompt_tokens: caches == "yes"  # type: ignore[method-assign]


def run_ragmeter(args: argparse.Namespace, samples: list, workers: int, tmp: Path) -> Dict[str, Any]:
    """One cold run and one cached re-run at `workers`, against a fresh server."""
    log = tmp / f"ragmeter-w{workers}.jsonl"
    cache = tmp / f"cache-w{workers}.sqlite"
    n = len(samples)
    with start_mock(args.mock, log, mock_options(args)) as server:
        with OpenAIJudge(MODEL, base_url=server.base_url, cache=cache, max_concurrency=max(16, workers)) as judge:
            as_if(judge, args.server_caches)
            report, wall = timed_run(judge, samples, workers, args.judge_mode)
            usage = judge.usage()
            peak = judge.limiter.peak_in_flight
        cold = settled_records(server, usage["requests"])
        with OpenAIJudge(MODEL, base_url=server.base_url, cache=cache) as judge:
            _, cached_wall = timed_run(judge, samples, workers, args.judge_mode)
            cached_usage = judge.usage()
        cached_records = settled_records(server, len(cold))[len(cold):]
    s = summarize_log(cold)
    fallbacks = sum(report.method_counts(m).get("heuristic_fallback", 0) for m in report.metric_names())
    return {
        "tool": "ragmeter", "workers": workers, "n": n,
        "calls_per_sample_log": s.chat_calls / n, "calls_per_sample_judge": usage["calls"] / n,
        "prompt_tokens_per_sample_log": s.prompt_tokens / n,
        "prompt_tokens_per_sample_judge": usage["prompt_tokens"] / n,
        "completion_tokens_per_sample_log": s.completion_tokens / n,
        "completion_tokens_per_sample_judge": usage["completion_tokens"] / n,
        "wall_s": wall, "samples_per_s": n / wall, "wall_s_per_sample": wall / n,
        "effective_concurrency": s.busy_s / wall, "peak_in_flight": max(s.peak_in_flight, peak),
        "retries": usage["retries"], "fallbacks": fallbacks,
        "cached_calls_log": len(cached_records), "cached_calls_judge": cached_usage["calls"],
        "cached_hits": cached_usage["cache_hits"], "cached_wall_s": cached_wall,
    }


# (label, judge mode, --server-caches): each layout the judge modes send, measured on the same samples.
LAYOUTS = (
    ("auto on a server that reuses no prefix (the default: grouped)", AUTO, "auto"),
    ("auto on a server that reuses a prefix (separate, shared prefix)", AUTO, "yes"),
    ("separate, each prompt only its own fields", SEPARATE, "no"),
    ("combined (one call per sample)", COMBINED, "auto"),
)


def layout_runs(args: argparse.Namespace, samples: list, workers: int, tmp: Path) -> List[Dict[str, Any]]:
    """Calls and prompt tokens per sample of every LAYOUTS entry, each on a fresh mock server."""
    runs = []
    for i, (label, mode, caches) in enumerate(LAYOUTS):
        print(f"  layout: {label} ...", flush=True)
        each = argparse.Namespace(**{**vars(args), "judge_mode": mode, "server_caches": caches})
        folder = tmp / f"layout{i}"
        folder.mkdir()
        run = run_ragmeter(each, samples, workers, folder)
        runs.append({"layout": label, "judge_mode": mode, "server_caches": caches, **run})
    return runs


def print_layouts(runs: List[Dict[str, Any]], ragas_tokens: Optional[float], ragas_what: str) -> None:
    print(f"\nprompt tokens per sample in each judge-mode layout, beside {ragas_what}")
    rows = []
    for r in runs:
        share = r["prompt_tokens_per_sample_log"] / ragas_tokens if ragas_tokens else None
        target = ""
        if r["judge_mode"] == AUTO and r["server_caches"] != "yes":
            target = f"<= {TARGET_NO_CACHE_SHARE:g}x " + _verdict(share is not None and share <= TARGET_NO_CACHE_SHARE)
        rows.append([r["layout"], r["calls_per_sample_log"], r["prompt_tokens_per_sample_log"], share, target,
                     r["fallbacks"]])
    print(table(["layout", "calls/sample", "prompt tokens/sample", "x ragas", "issue 47 target", "fallbacks"], rows))
    print("(on a server that reuses a prefix the separate layout sends more tokens than it computes: the server "
          "evaluates the shared data section once; see bench/prefix_cache.py)")


# --- ragas in its own virtualenv ------------------------------------------------------------

RAGAS_DRIVER = textwrap.dedent('''
    """Scores a JSONL file with ragas against an OpenAI-compatible base URL; written by bench/throughput.py."""
    import json, sys, time, warnings
    warnings.filterwarnings("ignore")
    from langchain_openai import ChatOpenAI, OpenAIEmbeddings
    from ragas import EvaluationDataset, RunConfig, evaluate
    from ragas.embeddings import LangchainEmbeddingsWrapper
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import (Faithfulness, ResponseRelevancy, LLMContextPrecisionWithReference,
                               LLMContextRecall, AnswerCorrectness)

    base_url, data_path, workers, out_path, with_correctness = sys.argv[1:6]
    rows = [json.loads(line) for line in open(data_path, encoding="utf-8")]
    dataset = EvaluationDataset.from_list([
        {"user_input": r["question"], "response": r["answer"], "retrieved_contexts": r["contexts"],
         "reference": r["ground_truth"]} for r in rows])
    llm = LangchainLLMWrapper(ChatOpenAI(model="gpt-4o-mini", base_url=base_url, api_key="not-needed",
                                         max_retries=0, timeout=60))
    emb = LangchainEmbeddingsWrapper(OpenAIEmbeddings(model="text-embedding-3-small", base_url=base_url,
                                                      api_key="not-needed", check_embedding_ctx_length=False))
    metrics = [Faithfulness(), ResponseRelevancy(), LLMContextPrecisionWithReference(), LLMContextRecall()]
    if with_correctness == "1":
        metrics.append(AnswerCorrectness())
    start = time.perf_counter()
    result = evaluate(dataset, metrics=metrics, llm=llm, embeddings=emb, show_progress=False,
                      raise_exceptions=False, run_config=RunConfig(max_workers=int(workers), timeout=120))
    wall = time.perf_counter() - start
    frame = result.to_pandas()
    names = [c for c in frame.columns if c not in ("user_input", "response", "retrieved_contexts", "reference")]
    nan = {c: int(frame[c].isna().sum()) for c in names}
    json.dump({"wall_s": wall, "metrics": names, "nan_per_metric": nan,
               "means": {c: float(frame[c].mean()) for c in names}}, open(out_path, "w"))
''')


def ensure_ragas(venv: Path) -> tuple:
    """(python path, None) with ragas importable in `venv`, or (None, why not)."""
    python = venv / "bin" / "python"
    if python.exists() and _ragas_version(python):
        return python, None
    steps = [[sys.executable, "-m", "venv", str(venv)],
             [str(python), "-m", "pip", "install", "-q", *RAGAS_PACKAGES]]
    for cmd in steps:
        print(f"  $ {' '.join(cmd)}", flush=True)
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            return None, f"`{' '.join(cmd)}` failed: {(done.stderr or done.stdout).strip()[-800:]}"
    if not _ragas_version(python):
        return None, "ragas installed but does not import"
    return python, None


def _ragas_version(python: Path) -> Optional[str]:
    done = subprocess.run([str(python), "-c", "import ragas; print(ragas.__version__)"],
                          capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def run_ragas(args: argparse.Namespace, python: Path, data: Path, n: int, workers: int, tmp: Path,
              with_correctness: bool) -> Dict[str, Any]:
    """ragas over `data` at `workers`, against a fresh server with its own log."""
    log, out, driver = tmp / f"ragas-w{workers}.jsonl", tmp / f"ragas-w{workers}.json", tmp / "ragas_driver.py"
    driver.write_text(RAGAS_DRIVER, encoding="utf-8")
    env = {**os.environ, "RAGAS_DO_NOT_TRACK": "true", "OPENAI_API_KEY": "not-needed"}
    with start_mock(args.mock, log, mock_options(args)) as server:
        cmd = [str(python), str(driver), server.base_url, str(data), str(workers), str(out),
               "1" if with_correctness else "0"]
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
        records = settled_records(server, 1)
    if done.returncode != 0:
        raise RuntimeError(f"ragas driver failed: {done.stderr.strip()[-1500:]}")
    result = json.loads(out.read_text())
    s = summarize_log(records)
    wall = result["wall_s"]
    return {
        "tool": "ragas", "workers": workers, "n": n, "metrics": result["metrics"],
        "nan_per_metric": result["nan_per_metric"],
        "calls_per_sample_log": s.chat_calls / n, "prompt_tokens_per_sample_log": s.prompt_tokens / n,
        "completion_tokens_per_sample_log": s.completion_tokens / n,
        "embedding_calls_per_sample": s.embedding_calls / n,
        "wall_s": wall, "samples_per_s": n / wall, "wall_s_per_sample": wall / n,
        "effective_concurrency": s.busy_s / wall, "peak_in_flight": s.peak_in_flight,
        "outcomes": s.outcomes,
    }


def ragas_runs(args: argparse.Namespace, samples: list, workers: List[int], tmp: Path) -> Dict[str, Any]:
    """Every ragas figure, or {"error": why} when ragas cannot be installed or run."""
    print(f"\nInstalling/locating ragas {RAGAS_VERSION} in {args.ragas_venv} ...", flush=True)
    python, why = ensure_ragas(args.ragas_venv)
    if python is None:
        return {"error": why}
    data = write_jsonl(samples, tmp / "ragas-samples.jsonl")
    runs = []
    with_correctness = True
    for w in workers:
        print(f"  ragas, max_workers={w}, {len(samples)} samples ...", flush=True)
        try:
            runs.append(run_ragas(args, python, data, len(samples), w, tmp, with_correctness))
        except RuntimeError as exc:
            if not with_correctness:
                return {"error": str(exc), "runs": runs}
            print(f"  answer_correctness failed ({str(exc)[-200:]}); retrying without it", flush=True)
            with_correctness = False
            runs.append(run_ragas(args, python, data, len(samples), w, tmp, with_correctness))
    return {"version": _ragas_version(python), "runs": runs}


# --- offline --------------------------------------------------------------------------------

def offline_rate(n: int) -> Dict[str, Any]:
    """Samples/s of the offline judge in this process, one worker (one core)."""
    samples = make_samples(n, seed=1)
    start = time.perf_counter()
    report = RAGEvaluator(OfflineJudge(), language="en").evaluate_dataset(samples, max_workers=1)
    wall = time.perf_counter() - start
    assert len(report.results) == n
    return {"n": n, "wall_s": wall, "samples_per_s": n / wall, "target": TARGET_OFFLINE_RATE}


RSS_CHILD = textwrap.dedent('''
    import resource, sys, time
    sys.path.insert(0, sys.argv[2])
    from evaluator import OfflineJudge, RAGEvaluator, load_dataset
    start = time.perf_counter()
    samples = load_dataset(sys.argv[1])
    loaded = time.perf_counter()
    report = RAGEvaluator(OfflineJudge(), language="en").evaluate_dataset(samples, max_workers=1)
    done = time.perf_counter()
    assert len(report.results) == len(samples)
    print(len(samples), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, loaded - start, done - loaded)
''')


def peak_rss(n: int, tmp: Path) -> Dict[str, Any]:
    """Peak RSS (ru_maxrss) of a fresh process that loads and scores an n-row JSONL dataset offline."""
    data = write_jsonl(make_samples(n, seed=2), tmp / f"rss-{n}.jsonl")
    done = subprocess.run([sys.executable, "-c", RSS_CHILD, str(data), str(REPO)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return {"n": n, "error": done.stderr.strip()[-1500:]}
    rows, kb, load_s, score_s = done.stdout.split()
    return {"n": int(rows), "file_mb": data.stat().st_size / 2**20, "peak_rss_mb": int(kb) / 1024,
            "load_s": float(load_s), "score_s": float(score_s), "target_mb": TARGET_RSS_MB}


# --- printing ---------------------------------------------------------------------------------

RAGMETER_ROWS = (
    ("calls/sample (server log)", "calls_per_sample_log"),
    ("calls/sample (judge.usage)", "calls_per_sample_judge"),
    ("prompt tokens/sample (server log)", "prompt_tokens_per_sample_log"),
    ("prompt tokens/sample (judge.usage)", "prompt_tokens_per_sample_judge"),
    ("completion tokens/sample (server log)", "completion_tokens_per_sample_log"),
    ("completion tokens/sample (judge.usage)", "completion_tokens_per_sample_judge"),
    ("wall time s", "wall_s"),
    ("wall s/sample", "wall_s_per_sample"),
    ("samples/s", "samples_per_s"),
    ("effective concurrency (busy/wall)", "effective_concurrency"),
    ("peak requests in flight", "peak_in_flight"),
    ("retries / fallbacks", None),
    ("cached re-run: calls (log / judge)", None),
    ("cached re-run: cache hits", "cached_hits"),
    ("cached re-run: wall time s", "cached_wall_s"),
)
RAGAS_ROWS = (
    ("calls/sample (server log)", "calls_per_sample_log"),
    ("prompt tokens/sample (server log)", "prompt_tokens_per_sample_log"),
    ("completion tokens/sample (server log)", "completion_tokens_per_sample_log"),
    ("embedding calls/sample", "embedding_calls_per_sample"),
    ("wall time s", "wall_s"),
    ("wall s/sample", "wall_s_per_sample"),
    ("samples/s", "samples_per_s"),
    ("effective concurrency (busy/wall)", "effective_concurrency"),
    ("peak requests in flight", "peak_in_flight"),
    ("rows with NaN (any metric)", None),
)
RATIO_ROWS = (
    ("calls/sample", "calls_per_sample_log"),
    ("prompt tokens/sample", "prompt_tokens_per_sample_log"),
    ("completion tokens/sample", "completion_tokens_per_sample_log"),
    ("wall s/sample", "wall_s_per_sample"),
)


RAGAS_PROMPT_TOKENS = 11_481  # ragas 0.3's prompt tokens per sample on these samples, when ragas is not run now


def _ragmeter_cell(run: Dict[str, Any], label: str, key: Optional[str]) -> Any:
    if key is not None:
        return run[key]
    if label.startswith("retries"):
        return f"{run['retries']} / {run['fallbacks']}"
    return f"{run['cached_calls_log']} / {run['cached_calls_judge']}"


def print_ragmeter(runs: List[Dict[str, Any]], args: argparse.Namespace, estimate: Any) -> None:
    print(f"\nragmeter ({args.judge_mode} judge calls): {args.n} samples; server: mock_openai.py --latency-ms {args.latency_ms:g} {args.mock_args}")
    header = ["figure"] + [f"workers={r['workers']}" for r in runs]
    rows = [[label] + [_ragmeter_cell(r, label, key) for r in runs] for label, key in RAGMETER_ROWS]
    print(table(header, rows))
    print(f"pre-run estimate (evaluator.scoring.costs.estimate_run, no network): "
          f"{estimate.calls / args.n:.2f} calls/sample, {estimate.prompt_tokens / args.n:,.0f} prompt tokens/sample, "
          f"{estimate.completion_tokens / args.n:,.0f} completion tokens/sample")


def print_ragas(result: Dict[str, Any], args: argparse.Namespace) -> None:
    runs = result.get("runs") or []
    if not runs:
        return
    print(f"\nragas {result.get('version', '?')}: {args.ragas_n} samples, same server settings; "
          f"metrics {', '.join(runs[0]['metrics'])}")
    header = ["figure"] + [f"workers={r['workers']}" for r in runs]
    rows = []
    for label, key in RAGAS_ROWS:
        cells = [r[key] if key else max(r["nan_per_metric"].values(), default=0) for r in runs]
        rows.append([label] + cells)
    print(table(header, rows))


def print_ratios(ours: List[Dict[str, Any]], theirs: List[Dict[str, Any]]) -> None:
    by_w = {r["workers"]: r for r in theirs}
    pairs = [(o, by_w[o["workers"]]) for o in ours if o["workers"] in by_w]
    if not pairs:
        return
    print("\nratio ragmeter / ragas (per sample, same server and max_workers; < 1 means ragmeter spends less)")
    header = ["figure"] + [f"workers={o['workers']}" for o, _ in pairs] + ["issue 5 target", ""]
    rows = []
    for label, key in RATIO_ROWS:
        ratios = [o[key] / t[key] if t[key] else None for o, t in pairs]
        rows.append([label, *ratios, *_target(key, ratios, [o[key] for o, _ in pairs])])
    print(table(header, rows))


def _target(key: str, ratios: List[Optional[float]], ours: List[float]) -> List[str]:
    """The issue's target for a ratio row and whether every workers setting meets it."""
    if key == "calls_per_sample_log":
        return [f"ragmeter <= {TARGET_CALLS} calls/sample", _verdict(max(ours) <= TARGET_CALLS)]
    limit = {"prompt_tokens_per_sample_log": TARGET_PROMPT_SHARE, "wall_s_per_sample": 1.0}.get(key)
    if limit is None:
        return ["", ""]
    return [f"ratio <= {limit:g}", _verdict(all(r is not None and r <= limit for r in ratios))]


def print_offline(rate: Dict[str, Any], rss: Dict[str, Any]) -> None:
    print("\noffline judge (no network)")
    rows = [["scoring rate, one core", f"{rate['samples_per_s']:,.0f} samples/s "
             f"({rate['n']:,} samples in {rate['wall_s']:.2f} s)", f">= {TARGET_OFFLINE_RATE:,} samples/s",
             _verdict(rate["samples_per_s"] >= TARGET_OFFLINE_RATE)]]
    if "error" in rss:
        rows.append(["peak RSS", f"failed: {rss['error'][-300:]}", f"< {TARGET_RSS_MB} MB", "FAIL"])
    else:
        rows.append([f"peak RSS, load + score {rss['n']:,} rows",
                     f"{rss['peak_rss_mb']:,.0f} MB (file {rss['file_mb']:.0f} MB; load {rss['load_s']:.1f} s, "
                     f"score {rss['score_s']:.1f} s)", f"< {TARGET_RSS_MB:,} MB",
                     _verdict(rss["peak_rss_mb"] < TARGET_RSS_MB)])
    print(table(["figure", "measured", "target", ""], rows))


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    workers = [int(w) for w in args.workers.split(",") if w.strip()]
    samples = make_samples(args.n)
    out: Dict[str, Any] = {"n": args.n, "ragas_n": args.ragas_n, "latency_ms": args.latency_ms}
    with tempfile.TemporaryDirectory(prefix="ragmeter-bench-") as tmpdir:
        tmp = Path(tmpdir)
        ours = []
        for w in workers:
            print(f"ragmeter, max_workers={w}, {args.n} samples ...", flush=True)
            ours.append(run_ragmeter(args, samples, w, tmp))
        out["ragmeter"] = ours
        estimate = estimate_run(samples, "en", judge_mode=args.judge_mode)
        out["estimate"] = estimate.to_dict()
        if not args.skip_layouts:
            print(f"ragmeter's judge-mode layouts, max_workers={workers[0]}, {args.n} samples ...", flush=True)
            out["layouts"] = layout_runs(args, samples, workers[0], tmp)
        if not args.skip_ragas:
            out["ragas"] = ragas_runs(args, samples[: args.ragas_n], workers, tmp)
        if not args.skip_offline:
            print(f"\noffline: scoring {args.offline_n:,} samples, then {args.rss_n:,} rows in a subprocess ...",
                  flush=True)
            out["offline_rate"] = offline_rate(args.offline_n)
            out["peak_rss"] = peak_rss(args.rss_n, tmp)
    print_ragmeter(ours, args, estimate)
    if "ragas" in out:
        if out["ragas"].get("error"):
            print(f"\nragas: not measured: {out['ragas']['error']}")
        print_ragas(out["ragas"], args)
        print_ratios(ours, out["ragas"].get("runs") or [])
    if "layouts" in out:
        measured = (out.get("ragas") or {}).get("runs") or []
        if measured:
            print_layouts(out["layouts"], measured[0]["prompt_tokens_per_sample_log"],
                          f"ragas {out['ragas'].get('version', '?')} measured now on {args.ragas_n} of the same samples")
        else:
            print_layouts(out["layouts"], RAGAS_PROMPT_TOKENS, f"ragas 0.3's {RAGAS_PROMPT_TOKENS:,} (not run now)")
    if not args.skip_offline:
        print_offline(out["offline_rate"], out["peak_rss"])
    if args.json:
        args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
