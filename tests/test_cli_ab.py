"""`ragmeter ab`: two real pipelines on 127.0.0.1, scored offline, tested sequentially."""
import json
import textwrap

import pytest

from evaluator.cli.command import main
from evaluator.runs.ab import ABSettings, ab_from_scores
from tests.target_server import TargetServer

FACTS = [f"Store {i} opens at {i % 12 + 1} o'clock and sells {w} bicycles."
         for i, w in enumerate(["red", "blue", "green", "steel", "folding", "cargo", "racing", "electric"] * 25)]


def question(i):
    return f"When does store {i} open?"


def facts_for(body):
    i = int(body["question"].split()[3])
    return FACTS[i]


def faithful(body):  # answers from its own retrieved context
    fact = facts_for(body)
    return 200, {"answer": fact, "contexts": [fact]}


def inventing(body):  # same context, an answer the context does not support
    return 200, {"answer": "Astronauts juggle purple volcanoes underwater every Tuesday.",
                 "contexts": [facts_for(body)]}


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps({"question": question(i), "sample_id": f"q{i}"}) + "\n"
                            for i in range(len(FACTS))), encoding="utf-8")
    return path


def test_a_clear_winner_is_called_early_and_the_json_says_so(data, tmp_path, capsys):
    out = tmp_path / "ab.json"
    with TargetServer(faithful) as a, TargetServer(inventing) as b:
        code = main(["ab", str(data), "--target", a.url, "--target-b", b.url, "--offline", "-q",
                     "--json", str(out)])
        asked = len(a.requests)
    result = json.loads(out.read_text())
    assert code == 0
    assert result["decision"] == "A"
    assert result["samples_total"] == 200 and result["samples_used"] < 40
    # the unused questions were never sent: at most --workers - 1 (default 4) past the stopping one
    assert result["samples_used"] <= asked <= result["samples_used"] + 3
    low, high = result["interval"]
    assert 0 < low <= result["difference"] <= high
    assert result["judge_calls"] == 0  # offline: scored by heuristics
    printed = capsys.readouterr().out
    assert "faithfulness: A is better" in printed
    assert f"samples used {result['samples_used']} of 200: {200 - result['samples_used']} saved" in printed


def test_swapped_pipelines_name_b(data, tmp_path):
    out = tmp_path / "ab.json"
    with TargetServer(inventing) as a, TargetServer(faithful) as b:
        assert main(["ab", str(data), "--target", a.url, "--target-b", b.url, "--offline", "-q",
                     "--json", str(out)]) == 0
    assert json.loads(out.read_text())["decision"] == "B"


def test_identical_pipelines_end_in_a_tie_within_the_margin(data, tmp_path):
    out = tmp_path / "ab.json"
    with TargetServer(faithful) as a, TargetServer(faithful) as b:
        assert main(["ab", str(data), "--target", a.url, "--target-b", b.url, "--offline", "-q",
                     "--tie", "0.25", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["decision"] == "tie" and result["difference"] == 0.0
    assert -0.25 <= result["interval"][0] and result["interval"][1] <= 0.25
    assert result["samples_used"] < 200


def test_max_samples_stops_undecided_with_exit_one(data, tmp_path, capsys):
    out = tmp_path / "ab.json"
    with TargetServer(faithful) as a, TargetServer(faithful) as b:
        code = main(["ab", str(data), "--target", a.url, "--target-b", b.url, "--offline", "-q",
                     "--max-samples", "5", "--json", str(out)])
    result = json.loads(out.read_text())
    assert code == 1 and result["decision"] == "undecided" and result["samples_used"] == 5
    assert "undecided: more samples are needed" in capsys.readouterr().out


def test_a_failing_pipeline_leaves_pairs_out_and_says_so(data, tmp_path, capsys):
    out = tmp_path / "ab.json"

    def flaky(body):
        return (400, {"error": "bad question"}) if int(body["question"].split()[3]) % 2 else faithful(body)

    with TargetServer(flaky) as a, TargetServer(inventing) as b:
        main(["ab", str(data), "--target", a.url, "--target-b", b.url, "--offline", "-q", "--json", str(out)])
    result = json.loads(out.read_text())
    assert result["left_out"] > 0 and result["decision"] == "A"
    assert "pair(s) left out of the test" in capsys.readouterr().out


def test_stored_scores_in_order():
    r = ab_from_scores([1.0] * 100, [0.0] * 50 + [None] + [0.0] * 49, ABSettings(tie=0.0))
    assert r.decision == "A" and r.samples_used < 20 and r.samples_total == 100


def test_a_real_judge_counts_its_calls_and_the_calls_saved(data, tmp_path, capsys):
    from openai_server import ChatServer

    out = tmp_path / "ab.json"
    with ChatServer() as judge, TargetServer(faithful) as a, TargetServer(faithful) as b:
        code = main(["ab", str(data), "--target", a.url, "--target-b", b.url, "--model", "judge",
                     "--base-url", judge.base_url, "--max-samples", "6", "-q", "--json", str(out)])
        calls = len(judge.chat_requests)
    result = json.loads(out.read_text())
    assert code == 1 and result["samples_used"] == 6
    assert result["judge_calls"] == calls > 0  # every call the judge server saw, A's and B's (3 in flight too)
    assert result["judge_calls_saved"] == round(calls / 6 * 194)
    assert f"judge calls {calls}, about {result['judge_calls_saved']} saved" in capsys.readouterr().out


def test_one_worker_asks_nothing_past_the_decision(data, tmp_path):
    out = tmp_path / "ab.json"
    with TargetServer(faithful) as a, TargetServer(inventing) as b:
        main(["ab", str(data), "--target", a.url, "--target-b", b.url, "--offline", "-q", "--workers", "1",
              "--json", str(out)])
        asked = (len(a.requests), len(b.requests))
    used = json.loads(out.read_text())["samples_used"]
    assert asked == (used, used)


def test_a_file_target_is_loaded_once_however_many_windows_are_asked(data, tmp_path):
    pipeline = tmp_path / "pipe.py"
    pipeline.write_text(textwrap.dedent("""
        import pathlib
        LOADS = pathlib.Path(__file__).with_suffix(".loads")
        LOADS.write_text((LOADS.read_text() if LOADS.exists() else "") + "x")

        def answer(question):
            return {"answer": "Store 1 opens at 2 o'clock.", "contexts": ["Store 1 opens at 2 o'clock."]}
    """), encoding="utf-8")
    code = main(["ab", str(data), "--target", f"{pipeline}:answer", "--target-b", f"{pipeline}:answer",
                 "--offline", "-q", "--workers", "2", "--max-samples", "10", "--json", str(tmp_path / "ab.json")])
    assert code in (0, 1) and json.loads((tmp_path / "ab.json").read_text())["samples_used"] == 10
    assert (tmp_path / "pipe.loads").read_text() == "xx"  # once for A, once for B: not once per window of 2


def test_a_failing_judge_stops_the_test_with_the_cause(data, capsys):
    from openai_server import ChatServer, error

    with ChatServer(default=error(401, "Incorrect API key provided")) as judge, \
            TargetServer(faithful) as a, TargetServer(inventing) as b:
        code = main(["ab", str(data), "--target", a.url, "--target-b", b.url, "--model", "judge",
                     "--base-url", judge.base_url, "-q"])
        asked = len(a.requests)
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 3 and asked <= 4  # the first window, not every question
    assert err.startswith("ragmeter: judge failed: Judge rejected the request: HTTP 401")
