"""Peak memory of the dashboard server when a small Parquet file decodes to gigabytes (issue 27 §4).

    python bench/parquet_bomb.py                      # this checkout: ~0.1 MB file, 1 GB decoded
    python bench/parquet_bomb.py --source /work/main  # another checkout (e.g. main's), same file
    python bench/parquet_bomb.py --rows 500 --cell-mb 1

Starts the real app (`streamlit run app.py` on 127.0.0.1, offline, its own history), drives Debian's
Chromium with Playwright to upload the file on the Evaluate page, waits for the page to settle, and
reads the server's peak RSS (VmHWM in /proc/PID/status, Linux only) before and after. Printed: file
size, decoded size, whether the page refused it (and its message), RSS before and at the peak,
seconds to the answer. Target: refused, peak under 300 MB. The file is generated here: one
`--cell-mb` answer and context, dictionary-encoded, on every one of `--rows` rows.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tests"))
from _common import free_port, start_dashboard  # noqa: E402
from datafiles import parquet_bomb  # noqa: E402
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TARGET_MB = 300


def start_app(source: Path, port: int, history: Path) -> subprocess.Popen:
    env = dict(os.environ, RAGMETER_HISTORY=str(history), PYTHONPATH=str(source))
    env.pop("RAGMETER_CONFIG", None)
    return start_dashboard(port, env, source)


def rss_mb(pid: int, field: str) -> float:
    """VmRSS (now) or VmHWM (peak) of a process, in MB."""
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(rf"{field}:\s+(\d+) kB", text).group(1)) / 1024  # type: ignore[union-attr]


def upload_and_wait(url: str, path: Path, timeout_s: float) -> str:
    """Upload `path` on the Evaluate page; the first error shown, or '' when the preview appeared."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(url)
        page.get_by_role("button", name="Run evaluation").wait_for(timeout=90_000)
        page.locator('[data-testid="stRadioOption"]').filter(has_text="Upload a file").click()
        uploader = page.locator('[data-testid="stFileUploader"]').filter(has_not_text="Import rubrics")
        uploader.locator('input[type="file"]').set_input_files(str(path))
        answer = page.locator('[data-testid="stAlertContentError"]').or_(
            page.get_by_text(re.compile(rf"{re.escape(path.name)} · PARQUET · ", re.IGNORECASE)))
        answer.first.wait_for(timeout=timeout_s * 1000)
        text = answer.first.inner_text()
        browser.close()
    text = text.removeprefix("block").strip()  # the error icon's name comes first in its text
    return text if "decodes to" in text or "failed" in text.lower() or "error" in text.lower() else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--cell-mb", type=float, default=1.0)
    parser.add_argument("--source", type=Path, default=ROOT, help="the checkout whose app.py is measured")
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    data = parquet_bomb(args.rows, int(args.cell_mb * 1_000_000))
    decoded_mb = args.rows * args.cell_mb * 2
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bomb.parquet"
        path.write_bytes(data)
        proc = start_app(args.source.resolve(), port := free_port(), Path(folder) / "history.sqlite3")
        try:
            before = rss_mb(proc.pid, "VmRSS")
            started = time.perf_counter()
            message = upload_and_wait(f"http://127.0.0.1:{port}", path, args.timeout)
            seconds = time.perf_counter() - started
            peak = rss_mb(proc.pid, "VmHWM")
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
    print(f"source            {args.source.resolve()}")
    print(f"file              {len(data) / 1e6:.3f} MB, decodes to {decoded_mb:,.0f} MB "
          f"({args.rows} rows x {args.cell_mb:g} MB answer + context)")
    print(f"refused           {'yes: ' + ' '.join(message.split())[:160] if message else 'no: the preview was shown'}")
    print(f"server RSS        {before:,.0f} MB before · {peak:,.0f} MB peak (target: under {TARGET_MB} MB)")
    print(f"time to answer    {seconds:.1f} s")


if __name__ == "__main__":
    main()
