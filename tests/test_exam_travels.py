"""The judge exam's verdict travels with the numbers it certifies: a chart of a run scored by an examined judge
says the verdict in its caption ("judge not examined" before), and a CI gate on an unexamined or unusable judge
says so on its last lines. Real runs against a loopback OpenAI-protocol judge, a real SQLite history."""
import html
import json
import re

import pytest
from openai_server import ChatServer, reply

from evaluator.cli.command import main
from evaluator.judges.replies import forget_servers
from evaluator.store.history import RunStore

ROWS = [{"question": f"How long is warranty {i}?", "answer": f"Warranty {i} lasts two years.",
         "contexts": [f"Warranty {i}: two years on every device."], "sample_id": f"w{i}"} for i in range(3)]
CONSTANT = '{"score": 1.0, "reasoning": "fine"}'


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "history.sqlite3"))
    forget_servers()
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n", encoding="utf-8")
    yield data
    forget_servers()


def svg_text(path):
    return " ".join(html.unescape(t) for t in re.findall(r"<text[^>]*>(.*?)</text>", path.read_text(), re.S))


def evaluate(data, url, *extra):
    return main(["evaluate", str(data), "--model", "m", "--base-url", url, "-q", "--metrics", "faithfulness",
                 *extra])


def last_run_id():
    (run,) = RunStore().list_runs()
    return run.run_id


def test_a_chart_says_whether_its_judge_was_examined_and_what_the_exam_said(home, tmp_path, capsys):
    with ChatServer(default=reply(CONSTANT)) as srv:
        assert evaluate(home, srv.base_url) == 0
        run_id = last_run_id()
        before, after = tmp_path / "before.svg", tmp_path / "after.svg"
        assert main(["runs", "--run", run_id, "--chart", "means", "-o", str(before)]) == 0
        assert main(["judge", "check", "--model", "m", "--base-url", srv.base_url, "--limit", "12", "--probes", "0",
                     "-q", "--no-baselines"]) == 1
        assert main(["runs", "--run", run_id, "--chart", "means", "-o", str(after)]) == 0
    assert "judge not examined" in svg_text(before)
    assert re.search(r"judge: m at 127\.0\.0\.1:\d+ · exam: unusable \(0\.00\)", svg_text(after)), svg_text(after)


def test_a_compare_page_and_an_html_export_carry_the_exam(home, tmp_path, capsys):
    with ChatServer(default=reply(CONSTANT)) as srv:
        assert evaluate(home, srv.base_url) == 0
        assert evaluate(home, srv.base_url) == 0
        assert main(["judge", "check", "--model", "m", "--base-url", srv.base_url, "--limit", "12", "--probes", "0",
                     "-q", "--no-baselines"]) == 1
    base, new = sorted(RunStore().list_runs(), key=lambda r: r.created_at)
    page, report = tmp_path / "compare.html", tmp_path / "run.html"
    assert main(["compare", base.run_id, new.run_id, "--format", "html", "-o", str(page)]) == 0
    assert main(["export", new.run_id, "-o", str(report)]) == 0
    assert "exam: unusable (0.00)" in html.unescape(page.read_text(encoding="utf-8"))
    assert "exam: unusable (0.00)" in html.unescape(report.read_text(encoding="utf-8"))


def test_a_gate_on_an_unexamined_then_unusable_judge_says_so_on_its_last_lines(home, capsys):
    with ChatServer(default=reply(CONSTANT)) as srv:
        evaluate(home, srv.base_url, "--fail-under", "faithfulness=0.1")
        unexamined = capsys.readouterr().err.splitlines()
        main(["judge", "check", "--model", "m", "--base-url", srv.base_url, "--limit", "12", "--probes", "0", "-q",
              "--no-baselines"])
        capsys.readouterr()
        evaluate(home, srv.base_url, "--fail-under", "faithfulness=0.1")
        unusable = capsys.readouterr().err.splitlines()
    assert "never examined" in unexamined[-2] and "ragmeter judge check --model m" in unexamined[-2]
    assert "exam said unusable" in unusable[-2] and "do not read its scores" in unusable[-2]


def test_an_offline_gate_says_nothing_of_an_exam(home, capsys):
    assert main(["evaluate", str(home), "--offline", "-q", "--fail-under", "faithfulness=0.0"]) == 0
    assert "exam" not in capsys.readouterr().err
