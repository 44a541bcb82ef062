"""No silent zero (issue 29): a metric whose input is missing is N/A with its reason, never a 0 in a mean.

Real parts: a JSONL file on disk as deepeval writes goldens (a row without `actual_output`), the CLI end
to end with its history database, and the JSON, CSV and HTML exports it writes.
"""
import csv
import json

from evaluator.cli.command import main
from evaluator.io.datasets import load_dataset
from evaluator.judges.offline import OfflineJudge
from evaluator.model import EvalSample
from evaluator.scoring.evaluation import RAGEvaluator
from evaluator.store.history import RunStore

ROWS = [
    {"input": "How long is the refund window?", "actual_output": "Refunds are accepted within 30 days.",
     "retrieval_context": ["Refunds are accepted within 30 days of purchase."],
     "expected_output": "Refunds are accepted within 30 days.", "keywords": ["30 days"]},
    # A golden: no actual_output (null, as deepeval writes it). Nothing that reads the answer may score it.
    {"input": "Who founded the shop?", "actual_output": None, "retrieval_context": ["Ana Ruiz founded the shop in 2001."],
     "expected_output": "Ana Ruiz founded it in 2001.", "keywords": ["Ana Ruiz"]},
    # The pipeline answered "" and retrieved nothing: the empty answer is scored (0), no contexts is N/A.
    {"input": "Do you ship abroad?", "actual_output": "", "retrieval_context": [],
     "expected_output": "Yes, to every EU country.", "keywords": ["EU"]},
]


def _write(tmp_path):
    path = tmp_path / "goldens.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def test_a_missing_answer_is_told_apart_from_an_empty_one_at_read_time(tmp_path):
    answered, golden, empty = load_dataset(_write(tmp_path))
    assert answered.no_answer_reason is None and empty.no_answer_reason is None
    assert empty.answer == ""
    assert golden.answer == "" and "no answer" in (golden.no_answer_reason or "").lower()


def test_missing_inputs_are_na_with_their_reason_and_left_out_of_every_mean(tmp_path):
    samples = load_dataset(_write(tmp_path))
    report = RAGEvaluator(OfflineJudge(), metrics=["faithfulness", "answer_relevancy", "context_precision",
                                                   "context_recall", "answer_correctness",
                                                   "keyword_coverage"]).evaluate_dataset(samples)
    answered, golden, empty = report.results
    for name in ("faithfulness", "answer_relevancy", "answer_correctness", "keyword_coverage"):
        ms = golden.scores[name]
        assert ms.skipped and "no answer" in ms.reasoning.lower(), (name, ms)
    # The empty answer is an answer: scored 0 where emptiness means 0.
    assert not empty.scores["answer_correctness"].skipped and empty.scores["answer_correctness"].score == 0.0
    for name in ("context_precision", "context_recall"):
        assert empty.scores[name].skipped and "No contexts" in empty.scores[name].reasoning, name
    assert len(report.values("answer_correctness")) == 2  # the golden's N/A is not a 0 in the mean
    assert len(report.values("context_precision")) == 2  # the no-retrieval row's N/A neither
    assert {r.sample_id for r in report.results if not r.scores["context_precision"].skipped} == {"row-1", "row-2"}
    assert "n=2/3" in report.format_report().split("answer_correctness")[1].splitlines()[0]


def test_a_conversation_without_retrieval_reports_no_context_precision_zero():
    from evaluator.conversation import ASSISTANT, USER, Conversation, Turn
    conv = Conversation("c1", [Turn(USER, "Hi, what is your name?"), Turn(ASSISTANT, "I am the shop's assistant."),
                               Turn(USER, "Can you help me?"), Turn(ASSISTANT, "Yes, gladly.")])
    report = RAGEvaluator(OfflineJudge()).evaluate_dataset([EvalSample.from_conversation(conv)])
    result = report.results[0]
    assert result.scores["context_precision"].skipped
    assert report.mean_scores()["context_precision"] is None
    assert "context_precision    N/A" in report.format_report()
    assert "0.000" not in report.format_report().split("context_precision")[1].splitlines()[0]


def test_the_cli_history_and_exports_show_na_for_the_missing_answer(tmp_path, capsys):
    data = _write(tmp_path)
    out_json, out_csv, out_html = tmp_path / "r.json", tmp_path / "r.csv", tmp_path / "r.html"
    for out in (out_json, out_csv, out_html):
        assert main(["evaluate", str(data), "--offline", "-q", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    line = next(ln for ln in printed.splitlines() if ln.strip().startswith("answer_correctness"))
    assert "n=2/3" in line, line
    exported = json.loads(out_json.read_text(encoding="utf-8"))
    golden = next(s for s in exported["samples"] if s["sample_id"] == "row-2")
    assert golden["answer_correctness"] is None and golden["answer_relevancy"] is None
    rows = {r["sample_id"]: r for r in csv.DictReader(out_csv.open(encoding="utf-8-sig"))}  # with Excel's BOM
    assert rows["row-2"]["answer_correctness"] in ("", "N/A"), rows["row-2"]["answer_correctness"]
    assert "no answer" in out_html.read_text(encoding="utf-8").lower()
    store = RunStore()
    run = store.list_runs()[0]
    stored = store.load_report(run.run_id)
    again = stored.results[1]
    assert again.scores["answer_correctness"].skipped
    assert again.sample is not None and again.sample.no_answer_reason
