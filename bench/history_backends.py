"""The run history on PostgreSQL against SQLite, side by side in one run (issue 17).

    python bench/history_backends.py [--rows 10000] [--repeats 3] [--json out.json]

For each backend (a SQLite file in a temp dir; a throw-away PostgreSQL cluster started with
tests/pgserver.py's `running_postgres`, on 127.0.0.1, fsync off as in the tests):
1. RunStore write throughput: `record_result` one row per transaction (what a dashboard or CLI
   run does as each sample is scored) and `record_results` in batches of 500 (what the Ray engine
   does with each frame), rows/s;
2. `load_report` of the 10,000-row run, seconds (what every Report render starts with);
3. the real dashboard (`streamlit run app.py` with RAGMETER_HISTORY set to that backend) in
   Debian's Chromium: the History page loaded (its runs table drawn) and the Report rendered from
   the share link /report?run=<id> (metric cards, the ± std chart and the drill-down drawn).

Each browser figure is the median of --repeats fresh page loads (a new browser context each, so
a new Streamlit session that reads the history again); the first load after the server starts is
a warm-up and is not counted. The rows are the generated 10,000-row set of bench/dashboard_10k.py
scored offline, so the stored records look like a real run's.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "tests", ROOT / "bench"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from dashboard_10k import CHROMIUM, CHROMIUM_ARGS, free_port, generate, idle  # noqa: E402
from pgserver import fresh_database, running_postgres  # noqa: E402

from evaluator import OfflineJudge, RAGEvaluator, load_dataset  # noqa: E402
from evaluator.store.history import RunStore  # noqa: E402
from evaluator.model import EvalResult, EvalSample  # noqa: E402

BATCH = 500
PAGE_TIMEOUT = 300_000  # ms


def scored_rows(rows: int, folder: Path) -> Tuple[List[EvalSample], List[EvalResult]]:
    data = folder / f"generated_{rows}.csv"
    generate(data, rows)
    samples = load_dataset(str(data))
    return samples, RAGEvaluator(OfflineJudge()).evaluate_dataset(samples).results


def write_figures(location: str, samples: List[EvalSample], results: List[EvalResult],
                  single_rows: int) -> Tuple[str, Dict[str, float]]:
    """Write the run twice (row by row, then in batches); returns the batched run's id and the rates."""
    store = RunStore(location)
    one = store.create_run(dataset_name="row-by-row", samples=samples[:single_rows], settings={"judge": "offline"})
    start = time.perf_counter()
    for i, result in enumerate(results[:single_rows]):
        store.record_result(one, i, result)
    single = single_rows / (time.perf_counter() - start)
    store.finish_run(one)
    run_id = store.create_run(dataset_name=f"bench-{len(samples)}.csv", samples=samples, settings={"judge": "offline"})
    pairs = list(enumerate(results))
    start = time.perf_counter()
    for at in range(0, len(pairs), BATCH):
        store.record_results(run_id, pairs[at:at + BATCH])
    batched = len(pairs) / (time.perf_counter() - start)
    store.finish_run(run_id, total_time=1.0)
    store.close()
    return run_id, {"write_row_by_row_rows_per_s": round(single), "write_batched_rows_per_s": round(batched)}


def load_seconds(location: str, run_id: str, rows: int, repeats: int) -> float:
    """Median seconds of `load_report` on a fresh RunStore (a new connection, as a new session has)."""
    times = []
    for _ in range(repeats):
        store = RunStore(location)
        start = time.perf_counter()
        report = store.load_report(run_id)
        times.append(time.perf_counter() - start)
        store.close()
        assert len(report.results) == rows, (len(report.results), rows)
    return round(statistics.median(times), 3)


@contextmanager
def dashboard(history: str, log: Path) -> Iterator[str]:
    import subprocess
    import urllib.request

    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("RAGMETER_CONFIG", "OPENAI_API_KEY")}
    env["RAGMETER_HISTORY"] = history
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1", "--server.port",
             str(port), "--browser.gatherUsageStats", "false", "--server.headless", "true"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                    if r.read() == b"ok":
                        break
            except OSError:
                if time.time() > deadline or proc.poll() is not None:
                    raise SystemExit(f"the dashboard did not start:\n{log.read_text()[-2000:]}")
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def timed_load(browser: Any, url: str, ready: Any) -> float:
    """Seconds from navigation to `ready(page)` done and the script run over, in a fresh session."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        start = time.perf_counter()
        page.goto(url)
        ready(page)
        idle(page, PAGE_TIMEOUT)
        return time.perf_counter() - start
    finally:
        context.close()


def history_ready(run_id: str):
    def ready(page: Any) -> None:
        page.get_by_test_id("stDataFrame").first.wait_for(timeout=PAGE_TIMEOUT)
        page.get_by_role("button", name="Open in report").wait_for(timeout=PAGE_TIMEOUT)
    return ready


def report_ready(page: Any) -> None:
    page.locator('[data-testid="stMetric"]').first.wait_for(timeout=PAGE_TIMEOUT)
    page.locator('[data-testid="stVegaLiteChart"], [data-testid="stArrowVegaLiteChart"]').first.wait_for(
        timeout=PAGE_TIMEOUT)
    page.get_by_text("Drill-down").first.wait_for(timeout=PAGE_TIMEOUT)


def browser_figures(browser: Any, history: str, run_id: str, repeats: int, log: Path) -> Dict[str, float]:
    with dashboard(history, log) as url:
        timed_load(browser, f"{url}/report?run={run_id}", report_ready)  # warm-up: imports, first connection
        pages = {"history_page_load_s": (f"{url}/history", history_ready(run_id)),
                 "report_render_s": (f"{url}/report?run={run_id}", report_ready)}
        return {name: round(statistics.median(timed_load(browser, address, ready) for _ in range(repeats)), 2)
                for name, (address, ready) in pages.items()}


def bench_backend(name: str, location: str, samples: List[EvalSample], results: List[EvalResult],
                  args: argparse.Namespace, browser: Any, folder: Path) -> Dict[str, Any]:
    print(f"  .. {name}: writing", file=sys.stderr, flush=True)
    run_id, figures = write_figures(location, samples, results, args.single_rows)
    figures["load_report_s"] = load_seconds(location, run_id, len(results), args.repeats)
    print(f"  .. {name}: dashboard", file=sys.stderr, flush=True)
    figures.update(browser_figures(browser, location, run_id, args.repeats, folder / f"{name}.log"))
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--single-rows", type=int, default=2_000, help="rows written one transaction each")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, running_postgres() as server:
        folder = Path(tmp)
        samples, results = scored_rows(args.rows, folder)
        backends = {"sqlite": str(folder / "history.sqlite3"), "postgresql": fresh_database(server, "bench")}
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            figures = {name: bench_backend(name, location, samples, results, args, browser, folder)
                       for name, location in backends.items()}
            browser.close()
    print(f"{args.rows:,} rows, median of {args.repeats}")
    print(f"{'':<30} {'sqlite':>12} {'postgresql':>12}")
    for key in figures["sqlite"]:
        print(f"{key:<30} {figures['sqlite'][key]:>12} {figures['postgresql'][key]:>12}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": args.rows, **figures}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
