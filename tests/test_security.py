"""Secrets never reach any file or output; the dashboard binds to loopback with XSRF on."""
import json
import logging
import tomllib
from pathlib import Path

from evaluator.cli.command import main
from openai_server import ChatServer

CANARY = "sk-canary-3f9a1b7e-never-write-me"
ROOT = Path(__file__).resolve().parent.parent


def write_dataset(path: Path) -> Path:
    rows = [{"sample_id": f"r{i}", "question": f"Which plan includes feature {i}?",
             "answer": f"The Pro plan includes feature {i}.",
             "contexts": [f"Pricing page: feature {i} is part of the Pro plan."],
             "ground_truth": "The Pro plan." if i % 2 else ""} for i in range(6)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_canary_key_reaches_no_file_log_export_or_output(tmp_path, monkeypatch, capsys, caplog):
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "history.sqlite3"))
    monkeypatch.setenv("RAGMETER_TEST_KEY", CANARY)
    data = write_dataset(tmp_path / "data.jsonl")
    with ChatServer() as srv, caplog.at_level(logging.DEBUG):
        for out in ("report.json", "report.csv", "report.html"):
            code = main(["evaluate", str(data), "--model", "judge", "--base-url", srv.base_url,
                         "--api-key-env", "RAGMETER_TEST_KEY", "--cache", str(tmp_path / "cache.sqlite3"),
                         "-o", str(tmp_path / out)])
            assert code == 0
        # The key really went over the wire (so the test would notice if it were dropped instead).
        assert srv.chat_requests[0].headers["authorization"] == f"Bearer {CANARY}"
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"history.sqlite3", "cache.sqlite3", "report.json", "report.csv", "report.html"}
    for path in written:
        assert CANARY.encode() not in path.read_bytes(), f"key leaked into {path}"
    captured = capsys.readouterr()
    assert CANARY not in captured.out + captured.err
    assert CANARY not in caplog.text


def test_dashboard_binds_loopback_and_keeps_xsrf_protection():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"
    assert config["server"].get("enableXsrfProtection", True) is True
    assert config["browser"]["gatherUsageStats"] is False
    readme_first_lines = (ROOT / "README.md").read_text().splitlines()[:6]
    # The README's first command starts the dashboard with `ragmeter dashboard`, which passes Streamlit the
    # loopback address itself (evaluator/cli/serve.py), so nobody has to remember the flag.
    assert any(line.rstrip().endswith("ragmeter dashboard") for line in readme_first_lines)
    from evaluator.cli.args import build_parser
    from evaluator.cli.serve import Plan
    from evaluator.config import LAPTOP

    argv = Plan(build_parser().parse_args(["dashboard"]), LAPTOP, None, ROOT).dashboard_argv()
    assert argv[argv.index("--server.address") + 1] == "127.0.0.1"
    assert argv[argv.index("--browser.gatherUsageStats") + 1] == "false"
    assert argv[argv.index("--server.enableXsrfProtection") + 1] == "true"
