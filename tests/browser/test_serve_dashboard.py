"""A run started in the dashboard of `ragmeter serve` is scored by the worker serve started (the team file
says `[runs] workers = "external"`, so the dashboard has no worker of its own), and SIGTERM stops it all."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from typing import List

import pytest

from .pw import expect

from ports import free_port
from teamfiles import config_toml, write_config

pytestmark = pytest.mark.browser
RUN_TIMEOUT = 90_000  # ms


def test_a_run_started_in_the_dashboard_is_scored_by_serves_worker(tmp_path, page):
    history = tmp_path / "history.sqlite3"
    team = write_config(tmp_path, config_toml(server={"history": str(history)}, runs={"workers": "external"}))
    env = {k: v for k, v in os.environ.items() if k not in ("RAGMETER_HISTORY", "RAGMETER_CONFIG", "OPENAI_API_KEY")}
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "evaluator", "serve", "--config", str(team), "--workers", "1",
                             "--port", str(port)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines: List[str] = []
    reader = threading.Thread(target=lambda: lines.extend(line.rstrip("\n") for line in proc.stdout), daemon=True)
    reader.start()

    def wait_line(pattern: str, timeout: float = 90.0) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = next((m for m in (re.search(pattern, line) for line in list(lines)) if m), None)
            if found:
                return found
            time.sleep(0.2)
        raise AssertionError(f"no line matching {pattern!r}:\n" + "\n".join(lines[-30:]))

    try:
        wait_line(r"the dashboard is ready at")
        wait_line(r"^worker-1 +\| ragmeter worker .*waiting for runs")
        page.goto(f"http://127.0.0.1:{port}")
        expect(page.get_by_role("button", name="Run evaluation")).to_be_visible(timeout=RUN_TIMEOUT)
        page.get_by_role("button", name="Run evaluation").click()
        expect(page.get_by_role("button", name="Open report")).to_be_visible(timeout=RUN_TIMEOUT)
        claimed = wait_line(r"^worker-1 +\| ragmeter worker: claimed run (\w+)").group(1)
        wait_line(rf"^worker-1 +\| ragmeter worker: run {claimed} ended: finished")
        page.get_by_role("button", name="Open report").click()
        expect(page).to_have_url(re.compile(rf"/report\?run={claimed}"), timeout=RUN_TIMEOUT)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        reader.join(5)
        assert lines[-1] == "ragmeter serve: stopped"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
