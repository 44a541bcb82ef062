"""Issue 28's first figure: does watching a run slow it? A large offline run scored by the dashboard's
own worker, once with the Evaluate page open in headless Chromium (its "Runs in progress" fragment
polling the job's progress record every second, the sidebar too), once with no browser attached.

    python bench/live_progress.py [--rows 200000] [--json out.json]

The rows are generated here (our own text) and queued straight into the dashboard's history with
`submit_new` (offline judge, not pinned), so the upload and parsing of the file are not part of
what is timed: only the scoring. The dashboard's local worker claims the job (a page of the
dashboard starts it; in the no-browser case the page is closed as soon as the run has started).
Rows/s are the run's own: rows scored / its elapsed time, from the job's final progress record.
Target: with the page open ≥ 0.9× without.

The dashboard's local worker scores in a process of its own (evaluator/runs/child.py), so the page's
reruns no longer share its interpreter (GIL). Measured with
`PYTHONPATH=$PWD python bench/live_progress.py --rows 30000` on the shared 2-core machine (load average
4–8 from other work, so single runs are noisy): before, worker threads inside the Streamlit process,
0.18× and 0.66× (0.41× earlier); after, 1.20× and 1.06× (about 1,300–1,700 rows/s either way).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import free_port, start_dashboard  # noqa: E402

from evaluator.model import EvalSample  # noqa: E402
from evaluator.runs.jobs import submit_new  # noqa: E402
from evaluator.runs.run import RunConfig  # noqa: E402
from evaluator.store.history import RunStore  # noqa: E402
from evaluator.store.jobs import JobQueue  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DESKS = ["library", "swimming pool", "town hall", "recycling centre", "bike rental", "museum", "ferry", "clinic"]


def rows(n: int, seed: int = 28) -> list:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        desk, hours = rnd.choice(DESKS), rnd.randint(6, 11)
        close = hours + rnd.randint(6, 10)
        said = close if rnd.random() < 0.75 else close + 2
        out.append(EvalSample(
            question=f"Until when is the {desk} open on weekday {i % 5 + 1} (ticket {i})?",
            answer=f"The {desk} opens at {hours}:00 and closes at {said}:00 on that day.",
            contexts=[f"Opening hours: the {desk} is open from {hours}:00 to {close}:00 on weekdays.",
                      f"On public holidays the {desk} stays closed; tickets like {i} stay valid.",
                      "Visitors can ask at the front desk for the week's exceptions."],
            ground_truth=f"Until {close}:00." if rnd.random() < 0.7 else "", sample_id=f"t{i}"))
    return out


def measure(samples: list, watched: bool, browser) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="ragmeter-live-"))
    history = folder / "history.sqlite3"
    env = dict(os.environ, RAGMETER_HISTORY=str(history), RAGMETER_JUDGE_CACHE=str(folder / "cache.sqlite3"))
    env.pop("RAGMETER_CONFIG", None)
    port = free_port()
    proc = start_dashboard(port, env, ROOT, timeout=120)
    try:
        store = RunStore(history)
        run_id = submit_new(store, RunConfig(), samples, dataset_name=f"live-{len(samples)}.jsonl")
        queue = JobQueue(store)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{port}/", wait_until="domcontentloaded", timeout=300_000)
        page.get_by_text("samples scored").first.wait_for(timeout=300_000)  # claimed by the dashboard's worker
        if not watched:
            context.close()
        job = queue.get(run_id)
        while job is not None and job.state != "ended":
            time.sleep(1.0)
            job = queue.get(run_id)
        if watched:
            context.close()
        progress = job.progress if job else None
        done = progress.done if progress else 0
        elapsed = progress.elapsed if progress else float("nan")
        return {"watched": watched, "rows": done, "elapsed_s": round(elapsed, 1),
                "rows_per_s": round(done / elapsed, 1) if elapsed else 0.0, "status": job.status if job else "?"}
    finally:
        import signal
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    samples = rows(args.rows)
    with sync_playwright() as api:
        browser = api.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        alone = measure(samples, False, browser)
        print(f"no browser:        {alone['rows']:,} rows in {alone['elapsed_s']} s = {alone['rows_per_s']:,} rows/s "
              f"({alone['status']})", flush=True)
        watched = measure(samples, True, browser)
        print(f"Evaluate page open: {watched['rows']:,} rows in {watched['elapsed_s']} s = "
              f"{watched['rows_per_s']:,} rows/s ({watched['status']})", flush=True)
        browser.close()
    ratio = watched["rows_per_s"] / alone["rows_per_s"] if alone["rows_per_s"] else float("nan")
    print(f"ratio watched / not watched: {ratio:.2f}x (target >= 0.9x)")
    if args.json:
        args.json.write_text(json.dumps({"no_browser": alone, "watched": watched, "ratio": ratio}, indent=2))


if __name__ == "__main__":
    main()
