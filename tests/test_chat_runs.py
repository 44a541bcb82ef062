"""Conversation runs through the CLI: a killed run resumes where it died, asking the target only
what it never recorded; `runs` lists them and --rescore takes their recording."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.cli.command import main
from evaluator.store.history import RunStore

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "conversations.jsonl"

BOT = '''
import os
from evaluator.demo import chat as demo_chat

def chat(messages):
    last = messages[-1]["content"]
    with open(os.environ["BOT_LOG"], "a", encoding="utf-8") as log:
        log.write(last.replace("\\n", " ") + "\\n")
    if os.environ.get("BOT_DIE_ON") and os.environ["BOT_DIE_ON"] in last:
        os._exit(9)  # the process is killed mid-run: nothing after this line is written
    return demo_chat(messages)
'''


def _cli(args, env):
    return subprocess.run([sys.executable, "-m", "evaluator", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.slow
def test_a_killed_conversation_run_resumes_without_asking_again(tmp_path):
    bot, log, history = tmp_path / "bot.py", tmp_path / "calls.log", tmp_path / "h.sqlite3"
    bot.write_text(BOT, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT), BOT_LOG=str(log), RAGMETER_HISTORY=str(history),
               BOT_DIE_ON="Someone stole the bike")  # the first user turn of the third conversation
    died = _cli(["evaluate", str(SAMPLE), "--target", f"{bot}:chat", "--target-workers", "1", "--offline", "-q"],
                env)
    assert died.returncode == 9, died.stderr
    store = RunStore(history)
    info = store.list_runs()[0]
    assert (info.status, info.n_samples) == ("running", 4)
    # Each replayed conversation is saved as soon as its replay ends, before it is scored.
    assert [s.answered for s in store.samples(info.run_id)] == [True, True, False, False]
    before = log.read_text(encoding="utf-8").splitlines()
    assert len(before) == 5  # 2 + 2 turns, then the call that killed it

    env.pop("BOT_DIE_ON")
    out = tmp_path / "report.json"
    resumed = _cli(["evaluate", "--resume", info.run_id, "--offline", "-q", "-o", str(out)], env)
    assert resumed.returncode == 0, resumed.stderr
    asked = log.read_text(encoding="utf-8").splitlines()[len(before):]
    assert len(asked) == 3 and asked[0].startswith("Someone stole the bike")  # conversations 3 and 4 only
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["num_conversations"] == 4 and [c["conversation_id"] for c in data["conversations"]][:2] == [
        "c01-prices", "c02-ebike-ar"]
    report = store.load_report(info.run_id)
    assert report.multi_turn and store.get_run(info.run_id).status == "finished"
    assert store.get_run(info.run_id).verdict.ok and len(report.turn_results()) == 7


def test_runs_lists_a_conversation_run_and_rescore_takes_its_recording(tmp_path, capsys):
    assert main(["evaluate", str(SAMPLE), "--target", "evaluator.demo:chat", "--offline", "-q"]) == 0
    capsys.readouterr()
    assert main(["runs"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0].split()[:2] == ["RUN", "CREATED"]
    run_id = listed[1].split()[0]
    assert "4/4" in listed[1] and "conversations.jsonl" in listed[1]
    out = tmp_path / "again.json"
    assert main(["evaluate", "--rescore", run_id, "--offline", "-q", "-o", str(out)]) == 0
    again = json.loads(out.read_text(encoding="utf-8"))
    assert again["conversations"][0]["turns"][3]["content"].startswith("The annual membership costs 79 euros")
    assert main(["evaluate", "--rescore", run_id, "--target", "evaluator.demo:chat", "--offline", "-q"]) == 2
    assert "--rescore takes the saved answers" in capsys.readouterr().err
