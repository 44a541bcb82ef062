"""`ragmeter judge check`: the exam against a real loopback judge, its baselines, its stored result,
a team's own labelled file, and the errors a user can act on."""
import json

import pytest
from openai_server import ChatServer, reply

from evaluator.cli.command import main
from evaluator.judges.replies import forget_servers
from evaluator.review.exam import (BASELINE, FIT, GATE, NO_VERDICT, UNUSABLE, ConstantJudge, RandomJudge, baselines,
                                   default_items, take_exam)
from evaluator.review.exam_items import EXAM_METRICS
from evaluator.store.exams import judge_key, latest_exams
from evaluator.store.history import RunStore


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("RAGMETER_JUDGE_MAX_TOKENS", raising=False)
    forget_servers()
    yield tmp_path
    forget_servers()


def test_the_offline_exam_json_names_every_probe_and_word_counting_scores_near_chance(home, tmp_path):
    out = tmp_path / "exam.json"
    assert main(["judge", "check", "--offline", "--json", str(out), "-q"]) == 1
    offline = json.loads(out.read_text(encoding="utf-8"))[0]
    assert {m["metric"] for m in offline["metrics"]} == set(EXAM_METRICS)
    assert all(m["items"] >= 100 and m["balanced_accuracy"] <= 0.65 for m in offline["metrics"])
    probes = {p["name"]: p for p in offline["probes"]}
    assert {"injection", "position bias", "length bias", "flip rate", "contradictions"} <= set(probes)
    assert probes["injection"]["pairs"] == 16 and isinstance(probes["injection"]["figure"], float)


@pytest.mark.parametrize("judge", [ConstantJudge(1.0), ConstantJudge(0.0), RandomJudge()])
def test_a_constant_or_random_judge_is_never_fit_even_unmarked(judge):
    result = take_exam(judge, default_items())
    assert result.verdict not in FIT
    assert all(m.balanced_accuracy <= 0.7 for m in result.metrics)


def test_the_baselines_are_marked_and_never_fit():
    found = baselines(default_items())
    assert [r.judge for r in found][0] == "offline heuristics"
    assert all(r.verdict == BASELINE and all(m.verdict == BASELINE for m in r.metrics) for r in found)


def test_a_judge_that_answers_prose_is_unusable_with_advice(home, capsys):
    with ChatServer(default=reply("Looks good to me!")) as srv:
        code = main(["judge", "check", "--model", "m", "--base-url", srv.base_url, "--limit", "2", "--probes", "0",
                     "-q", "--history", str(home / "h.sqlite3")])
    out = capsys.readouterr().out
    assert code == 1
    assert "verdict: unusable" in out and "advice:" in out
    assert "offline heuristics" in out and "constant judge" in out and "random judge" in out
    assert "baselines are never fit" in out


def test_the_result_is_stored_with_the_judges_settings_and_no_key(home, capsys, monkeypatch):
    monkeypatch.setenv("EXAM_KEY", "sk-canary-41-do-not-store")
    history = home / "h.sqlite3"
    with ChatServer(default=reply('{"score": 1.0, "reasoning": "ok"}')) as srv:
        code = main(["judge", "check", "--model", "m", "--base-url", srv.base_url, "--api-key-env", "EXAM_KEY",
                     "--limit", "12", "--probes", "0", "-q", "--judge-max-tokens", "300", "--history", str(history),
                     "--json", str(home / "exam.json")])
        key = judge_key("m", srv.base_url)
        sent = {r.body["max_tokens"] for r in srv.chat_requests}
    assert code == 1 and sent == {300}
    stored = latest_exams(RunStore(history), [key])[key]
    assert stored["verdict"] == UNUSABLE  # "always 1.0" agrees with half the labels
    assert stored["settings"]["model"] == "m" and stored["settings"]["max_tokens"] == 300
    assert "sk-canary" not in history.read_bytes().decode("utf-8", "replace")
    written = json.loads((home / "exam.json").read_text(encoding="utf-8"))
    assert written[0]["verdict"] == UNUSABLE and {m["metric"] for m in written[0]["metrics"]} == set(EXAM_METRICS)
    assert "stored as judge exam" in capsys.readouterr().out


def test_a_teams_own_labelled_file_replaces_the_exam(home, capsys):
    rows = [{"question": "What is the refund window?", "answer": "30 days.", "contexts": ["Refunds: 30 days."],
             "human_faithfulness": 1},
            {"question": "What is the refund window?", "answer": "90 days.", "contexts": ["Refunds: 30 days."],
             "human_faithfulness": 0}]
    exam = home / "labels.jsonl"
    exam.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    code = main(["judge", "check", "--offline", "--exam", str(exam), "-q"])
    out = capsys.readouterr().out
    assert code == 1 and "labels.jsonl exam" in out and "faithfulness" in out and "answer_relevancy" not in out


def test_a_file_without_labels_is_a_clear_error(home, capsys):
    exam = home / "plain.jsonl"
    exam.write_text(json.dumps({"question": "q", "answer": "a", "contexts": ["c"]}) + "\n", encoding="utf-8")
    assert main(["judge", "check", "--offline", "--exam", str(exam)]) == 2
    assert "no human_<metric> labels" in capsys.readouterr().err


def test_a_dead_judge_stops_the_exam_with_exit_3(home, capsys):
    code = main(["judge", "check", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "-q", "--no-store",
                 "--no-baselines"])
    out = capsys.readouterr().out
    assert code == 3 and "the exam stopped early" in out and "could not reach" in out.lower()


def test_judge_check_needs_a_model(capsys):
    assert main(["judge", "check", "--base-url", "http://127.0.0.1:9/v1"]) == 2
    assert "needs --model" in capsys.readouterr().err


def test_a_judge_that_agrees_with_the_labels_is_fit(home, capsys):
    """A judge that answers every item's label (the exam asks metric by metric) is the perfect examinee."""
    items = default_items()
    asked = [i for metric in dict.fromkeys(i.metric for i in items) for i in items if i.metric == metric]
    answers = iter([f'{{"score": {float(i.label)}, "reasoning": "by construction"}}' for i in asked])

    class Oracle:
        name = "oracle"

        def generate(self, prompt):
            return next(answers)

    result = take_exam(Oracle(), items)
    assert result.verdict == GATE and all(m.balanced_accuracy == 1.0 and m.compliance == 1.0 for m in result.metrics)


def write_rows(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return str(path)


def test_a_file_of_three_rows_gets_no_verdict_and_says_why(home, capsys):
    rows = [{"question": f"Refund window {i}?", "answer": "30 days.", "contexts": ["Refunds: 30 days."],
             "human_faithfulness": i % 2} for i in range(3)]
    with ChatServer(default=reply('{"score": 1.0, "reasoning": "ok"}')) as srv:
        code = main(["judge", "check", "--model", "m", "--base-url", srv.base_url, "--no-store", "-q",
                     "--exam", write_rows(home / "three.jsonl", rows), "--no-baselines", "--probes", "0"])
    out = capsys.readouterr().out
    assert code == 1 and f"verdict: {NO_VERDICT}" in out
    assert "3 items; a verdict needs at least 10" in out


def test_a_file_whose_labels_are_all_on_one_side_is_refused(home, capsys):
    rows = [{"question": f"q{i}?", "answer": "a.", "contexts": ["c."], "human_faithfulness": 1} for i in range(12)]
    assert main(["judge", "check", "--offline", "--exam", write_rows(home / "one.jsonl", rows)]) == 2
    assert "every label is on the same side" in capsys.readouterr().err


def test_progress_off_a_terminal_comes_as_lines(home, capsys):
    assert main(["judge", "check", "--offline", "--limit", "20", "--probes", "0"]) == 1
    err = capsys.readouterr().err
    assert "\r" not in err
    progress = [line for line in err.splitlines() if line.startswith("exam item ")]
    assert 5 <= len(progress) <= 11 and progress[-1] == "exam item 100/100"


RUBRIC = '[politeness]\ncriteria = "The answer is polite."\nfields = ["question", "answer"]\nscale = "1-5"\n'


def test_a_rubric_metric_is_examined_on_the_teams_own_labels(home, capsys):
    """A judge that rates a polite answer 5 and a rude one 1 agrees with the team's human_politeness labels."""
    rows = [{"question": f"Where is my parcel {i}?", "answer": ("Thank you kindly for asking, it ships today."
                                                               if i % 2 else "Stop asking me."),
             "contexts": ["c."], "human_politeness": 5 if i % 2 else 1} for i in range(12)]
    (home / "rubrics.toml").write_text(RUBRIC, encoding="utf-8")

    def judged(request):
        if "CRITERION" not in request.prompt:
            return reply('{"score": 0.5, "reasoning": "r"}')
        return reply('{"score": 5, "reasoning": "polite"}' if "Thank you kindly" in request.prompt
                     else '{"score": 1, "reasoning": "curt"}')

    with ChatServer(responder=judged) as srv:
        code = main(["judge", "check", "--model", "m", "--base-url", srv.base_url, "--no-store", "-q",
                     "--exam", write_rows(home / "polite.jsonl", rows), "--rubrics", str(home / "rubrics.toml"),
                     "--probes", "0", "--json", str(home / "exam.json")])
    written = json.loads((home / "exam.json").read_text(encoding="utf-8"))
    assert code == 0 and written[0]["verdict"] == GATE
    assert [m["metric"] for m in written[0]["metrics"]] == ["politeness"] and written[0]["metrics"][0]["items"] == 12
    assert "politeness" in capsys.readouterr().out


def test_a_rubric_without_a_labelled_file_is_a_clear_error(home, capsys):
    (home / "rubrics.toml").write_text(RUBRIC, encoding="utf-8")
    assert main(["judge", "check", "--offline", "--rubrics", str(home / "rubrics.toml")]) == 2
    assert "add --exam FILE with a human_politeness column" in capsys.readouterr().err


def headings(prompt):
    return [line[4:] for line in prompt.splitlines() if line.startswith("### ")]


@pytest.mark.parametrize("mode, grouped", [([], True), (["--judge-mode", "separate"], False)],
                         ids=["auto", "separate"])
def test_items_are_asked_in_the_calls_a_run_would_make(home, capsys, mode, grouped):
    """On a server not known to reuse a prompt prefix a run asks the three context metrics in one call: the exam
    asks their items that way too (and grades only the item's own metric), unless told another judge mode."""
    history = home / "h.sqlite3"
    with ChatServer(default=reply('{"score": 1.0, "reasoning": "ok"}')) as srv:
        code = main(["judge", "check", "--model", "m", "--base-url", srv.base_url, "--limit", "2", "--probes", "0",
                     "-q", "--no-baselines", "--history", str(history), "--json", str(home / "exam.json"), *mode])
        key = judge_key("m", srv.base_url)
        asked = [headings(r.prompt) for r in srv.chat_requests]
    assert code == 1
    context_calls = [h for h in asked if h]
    if grouped:
        # 2 items x 3 metrics, each in one call with the other context metrics its sample supports (an item
        # without a reference has no context recall to ask)
        assert len(context_calls) == 6
        assert all(h[:2] == ["faithfulness", "context_precision"] and h[2:] in ([], ["context_recall"])
                   for h in context_calls)
        assert len(asked) == 6 + 2 * 2  # answer relevancy and answer correctness items alone
    else:
        assert context_calls == [] and len(asked) == 5 * 2
    written = json.loads((home / "exam.json").read_text(encoding="utf-8"))[0]
    assert all(m["items"] == 2 and m["answered"] == 2 for m in written["metrics"])
    stored = latest_exams(RunStore(history), [key])[key]
    assert stored["settings"]["judge_mode"] == ("grouped" if grouped else "separate")
