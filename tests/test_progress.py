"""The one progress reporter: a scoring pass's counts and callbacks, and the console line the CLI draws."""
import io
import json

from evaluator import EvalSample, OfflineJudge, RAGEvaluator
from evaluator.cli.command import main
from evaluator.scoring.progress import Progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def samples(n):
    return [EvalSample(f"Question {i}?", f"Answer {i}.", [f"Answer {i}."], sample_id=f"s{i}") for i in range(n)]


def test_a_pass_calls_back_in_order_and_redraws_one_line_on_stdout(capsys):
    seen = []
    RAGEvaluator(OfflineJudge()).evaluate_dataset(samples(3), show_progress=True,
                                                  on_progress=lambda done, total, r: seen.append((done, total)),
                                                  on_result=lambda i, r: seen.append(r.sample_id))
    assert seen == ["s0", (1, 3), "s1", (2, 3), "s2", (3, 3)]
    out = capsys.readouterr().out
    assert out.count("\r") == 3 and "3/3 samples" in out and out.endswith("\n")


def test_the_cli_writes_plain_lines_to_a_log_and_nothing_when_quiet(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "h.sqlite3"))
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"question": s.question, "answer": s.answer, "contexts": s.contexts}) + "\n"
                            for s in samples(2)), encoding="utf-8")
    assert main(["evaluate", str(data), "--offline"]) == 0
    err = capsys.readouterr().err
    assert "2/2 samples" in err and "\r" not in err
    assert main(["evaluate", str(data), "--offline", "-q"]) == 0
    assert "2/2" not in capsys.readouterr().err


def test_a_terminal_gets_a_redrawn_bar_with_answered_rows_and_a_final_newline():
    term = Terminal()
    line = Progress(stream=term)
    line.show(1, 4, answered=2)
    line.show(1, 4, answered=2)  # nothing new: not drawn again
    line.show(4, 4, final=True, answered=4)
    text = term.getvalue()
    assert text.count("\r") == 2 and "2/4 answered, 1/4 scored" in text and "4/4 answered, 4/4 scored" in text
    assert text.endswith("\n") and "[" + "#" * 30 + "]" in text


def test_off_a_terminal_lines_are_spaced_out_but_the_last_is_always_written():
    log = io.StringIO()
    line = Progress(stream=log)
    for done in range(1, 50):
        line.show(done, 50)
    line.show(50, 50, final=True)
    assert log.getvalue().splitlines()[0].startswith("[") and len(log.getvalue().splitlines()) == 2
    assert "50/50 samples" in log.getvalue().splitlines()[-1]
