"""Pages that only draw (issue 28): the dashboard's pages at 100 vs 10,000 vs 200,000 rows, side by side.

    python bench/pages_speed.py [--sizes 100,10000,200000] [--runs 5,500] [--json out.json]

Writes runs straight into a history file with RunStore (offline scores, no judge: a 200,000-row run
is written in seconds, as a finished run leaves it, its summary included), starts the real app with
`streamlit run` on 127.0.0.1 and drives Debian's Chromium with Playwright (nothing downloaded). Prints:
- the Report of each run from its share link (/report?run=ID), until its chart and drill-down are drawn,
  and each size's ratio to the smallest (targets: 10,000 rows <= 1.5x, 200,000 rows <= 2x);
- History with few vs many runs, the project's trend chart drawn (target <= 1.5x; issue 40: 10 vs 1,000 runs);
- the drill-down moving to another sample (target <= 1 s);
- the first Evaluate page of a fresh server vs a bare one-line Streamlit app started the same way
  (target <= 2x);
- the Streamlit server's RSS after opening the largest Report (target <= 400 MB).
Each time is the median of --repeats loads, each in a new browser session (a new Streamlit session).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
from _common import free_port, start_dashboard, table  # noqa: E402

from evaluator.model import METHOD_LLM, EvalReport, EvalResult, EvalSample, MetricScore  # noqa: E402
from evaluator.scoring import summaries  # noqa: E402
from evaluator.store.history import RunStore  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall", "answer_correctness")
TOPICS = ("billing", "shipping", "returns", "warranty", "accounts", "security", "pricing", "support")
BATCH = 5_000


def row(rnd: random.Random, i: int) -> EvalResult:
    topic = rnd.choice(TOPICS)
    sample = EvalSample(f"How long do {topic} requests take (case {i})?",
                        f"Requests about {topic} are handled within {rnd.randint(2, 60)} days.",
                        [f"{topic.title()} guide: requests are handled within a few days by the {topic} team."],
                        "Within a few days.", sample_id=f"r{i}", category=topic)
    scores = {m: MetricScore(m, round(rnd.random(), 4), f"{m} reasoning for row {i}", method=METHOD_LLM)
              for m in METRICS}
    return EvalResult(sample.sample_id, scores=scores, sample=sample, elapsed_sec=0.01)


def write_run(store: RunStore, rows: int, seed: int = 7, project: str = "bench") -> str:
    """A finished run of `rows` offline-scored rows, written in batches as the Run writes them, summary included
    (all of one project: History charts the project over time, every run a point per metric)."""
    rnd = random.Random(seed)
    run_id = store.create_run(dataset_name=f"generated_{rows}.csv", samples=[], n_samples=rows, project=project,
                              settings={"judge": "openai", "model": "bench-judge"})
    results: List[EvalResult] = []
    for start in range(0, rows, BATCH):
        batch = [row(rnd, i) for i in range(start, min(rows, start + BATCH))]
        store.record_results(run_id, list(enumerate(batch, start=start)))
        results += batch
    report = EvalReport(results=results, total_time=rows / 700, usage={"calls": rows * len(METRICS)})
    store.finish_run(run_id, status="finished", total_time=report.total_time, usage=report.usage)
    store.save_summary(run_id, summaries.of_report(report, {"judge": "openai", "model": "bench-judge"}))
    return run_id


def idle(page, timeout: float = 600_000) -> None:
    """Wait until Streamlit has finished its rerun (the running indicator is gone)."""
    page.wait_for_timeout(150)
    page.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=timeout)


def timed(browser, url: str, ready: Callable, repeats: int) -> float:
    """Median seconds from navigation to `ready(page)` then idle, each load in a new browser session."""
    times = []
    for _ in range(repeats):
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        t0 = time.perf_counter()
        page.goto(url)
        ready(page)
        idle(page)
        times.append(time.perf_counter() - t0)
        context.close()
    return statistics.median(times)


def report_ready(page) -> None:
    page.locator('[data-testid="stVegaLiteChart"], [data-testid="stArrowVegaLiteChart"]').first.wait_for(
        timeout=600_000)
    page.get_by_text("Drill-down").first.wait_for(timeout=600_000)


def history_ready(page) -> None:
    page.get_by_role("heading", name="History").first.wait_for(timeout=600_000)
    page.get_by_text("A project over time").first.wait_for(timeout=600_000)
    page.locator('[data-testid="stVegaLiteChart"] svg.marks, [data-testid="stArrowVegaLiteChart"] svg.marks').first.wait_for(
        timeout=600_000)  # the project's trend, drawn
    page.get_by_text("Compare").first.wait_for(timeout=600_000)


def drill_down_time(browser, url: str, repeats: int) -> float:
    """Seconds from picking another sample in the drill-down to its question shown (median)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(url)
    report_ready(page)
    idle(page)
    times = []
    for k in range(repeats):
        # the k-th other sample the picker offers (it lists the samples of the page of rows shown)
        options = page.get_by_role("option")
        for _ in range(4):  # opened from the keyboard: a click on the arrow is lost while a rerun redraws
            page.get_by_role("combobox", name="Sample").focus()
            page.keyboard.press("ArrowDown")
            try:
                options.nth(k + 1).wait_for(state="visible", timeout=3_000)
                break
            except Exception:
                page.keyboard.press("Escape")
        option = options.nth(k + 1)
        case = re.search(r"\(case \d+\)\?", option.inner_text())
        assert case, option.inner_text()
        t0 = time.perf_counter()
        option.click()
        # its question drawn in the drill-down (a Markdown block; the picker's own label is not one)
        page.get_by_test_id("stMainBlockContainer").locator('[data-testid="stMarkdownContainer"]').filter(
            has_text=case.group(0)).first.wait_for(timeout=60_000)
        idle(page)
        times.append(time.perf_counter() - t0)
    context.close()
    return statistics.median(times)


def rss_mb(pid: int) -> float:
    """Resident memory of the Streamlit server process, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def first_page_time(browser, port: int, env: Dict[str, str], source: Path, ready: Callable) -> float:
    """A fresh server: seconds from its health check answering to its first page drawn."""
    app = start_dashboard(port, env, source, timeout=120)
    try:
        context = browser.new_context()
        page = context.new_page()
        t0 = time.perf_counter()
        page.goto(f"http://127.0.0.1:{port}/")
        ready(page)
        idle(page)
        took = time.perf_counter() - t0
        context.close()
        return took
    finally:
        os.killpg(app.pid, signal.SIGKILL)


def bare_app(tmp: Path) -> Path:
    """A directory holding a one-line Streamlit app named app.py (start_dashboard runs app.py)."""
    folder = tmp / "bare"
    folder.mkdir()
    (folder / "app.py").write_text('import streamlit as st\nst.write("Hello from a bare app")\n')
    return folder


def ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base else "-"


def measure(args: argparse.Namespace, tmp: Path, browser) -> Dict[str, object]:
    sizes = [int(s) for s in args.sizes.split(",")]
    few, many = (int(n) for n in args.runs.split(","))
    env = dict(os.environ, RAGMETER_HISTORY=str(tmp / "history.sqlite3"))
    figures: Dict[str, object] = {}

    bare = first_page_time(browser, free_port(), env, bare_app(tmp),
                           lambda p: p.get_by_text("Hello from a bare app").wait_for(timeout=120_000))
    first = first_page_time(browser, free_port(), env, ROOT,
                            lambda p: p.get_by_role("heading", name="Evaluate").first.wait_for(timeout=120_000))
    figures.update(bare_app_s=round(bare, 2), first_evaluate_s=round(first, 2))

    store = RunStore(tmp / "history.sqlite3")
    t0 = time.perf_counter()
    ids = {n: write_run(store, n) for n in sizes}
    print(f"  .. wrote runs of {', '.join(f'{n:,}' for n in sizes)} rows in {time.perf_counter() - t0:.1f} s",
          file=sys.stderr, flush=True)
    small_history = tmp / "few.sqlite3"
    for i in range(few):
        write_run(RunStore(small_history), 20, seed=i)
    many_history = tmp / "many.sqlite3"
    for i in range(many):
        write_run(RunStore(many_history), 20, seed=i)

    port = free_port()
    app = start_dashboard(port, env, ROOT, timeout=120)
    try:
        url = f"http://127.0.0.1:{port}"
        timed(browser, f"{url}/report?run={ids[sizes[0]]}", report_ready, 1)  # warm: first imports, caches
        reports = {n: timed(browser, f"{url}/report?run={ids[n]}", report_ready, args.repeats) for n in sizes}
        figures["report_s"] = {str(n): round(t, 2) for n, t in reports.items()}
        try:
            figures["drill_down_s"] = round(drill_down_time(browser, f"{url}/report?run={ids[sizes[-1]]}",
                                                            args.repeats), 2)
        except Exception as exc:  # the picker's markup is Streamlit's: say so rather than lose the other figures
            print(f"  .. drill-down not measured: {str(exc).splitlines()[0]}", file=sys.stderr)
            figures["drill_down_s"] = None
        figures["server_rss_mb_after_largest_report"] = round(rss_mb(app.pid), 1)
    finally:
        os.killpg(app.pid, signal.SIGKILL)

    history_times = {}
    for label, path in (("few", small_history), ("many", many_history)):
        port = free_port()
        app = start_dashboard(port, dict(os.environ, RAGMETER_HISTORY=str(path)), ROOT, timeout=120)
        try:
            timed(browser, f"http://127.0.0.1:{port}/history", history_ready, 1)  # warm
            history_times[label] = timed(browser, f"http://127.0.0.1:{port}/history", history_ready, args.repeats)
        finally:
            os.killpg(app.pid, signal.SIGKILL)
    figures["history_s"] = {str(few): round(history_times["few"], 2), str(many): round(history_times["many"], 2)}
    return figures


def print_figures(figures: Dict[str, object], sizes: Sequence[int], few: int, many: int) -> None:
    reports = figures["report_s"]
    assert isinstance(reports, dict)
    base = reports[str(sizes[0])]
    targets = {10_000: 1.5, 200_000: 2.0}
    rows = [(f"Report, {n:,}-row run (share link)", reports[str(n)], ratio(reports[str(n)], base),
             f"<= {targets[n]}x" if n in targets else "base") for n in sizes]
    history = figures["history_s"]
    assert isinstance(history, dict)
    rows += [(f"History, {few} runs", history[str(few)], "1.00x", "base"),
             (f"History, {many} runs", history[str(many)], ratio(history[str(many)], history[str(few)]), "<= 1.5x"),
             ("Drill-down to another sample", figures["drill_down_s"], "", "<= 1 s"),
             ("Bare one-line Streamlit app, first page", figures["bare_app_s"], "1.00x", "base"),
             ("Evaluate page, first load", figures["first_evaluate_s"],
              ratio(float(figures["first_evaluate_s"]), float(figures["bare_app_s"])), "<= 2x"),  # type: ignore
             (f"Server RSS after the {sizes[-1]:,}-row Report (MB)", figures["server_rss_mb_after_largest_report"],
              "", "<= 400 MB")]
    print(table(("measure", "seconds / MB", "ratio", "target"), rows))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,10000,200000", help="run sizes, smallest first")
    parser.add_argument("--runs", default="5,500", help="History: few and many runs")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        figures = measure(args, Path(tmp), browser)
        browser.close()
    few, many = (int(n) for n in args.runs.split(","))
    print_figures(figures, [int(s) for s in args.sizes.split(",")], few, many)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
