"""Whole runs with a target: the tutorial's dataset and rag_answer end to end, faults that keep
every row, pipelining, agents with expected tools, and files without answers."""
import csv
import io
import json
import threading
import time

import pytest

from evaluator import OfflineJudge, RAGEvaluator
from evaluator.errors import DatasetError
from evaluator.io.datasets import load_dataset
from evaluator.report.export import results_csv
from evaluator.io.records import result_from_record, result_to_record
from evaluator.model import EvalSample
from evaluator.targets import RetryPolicy, TargetConfig
from evaluator.targets.pipeline import evaluate_with_target
from target_server import Raw, Stall, TargetServer
from tests.fakes import ScriptedJudge

FAST = RetryPolicy(retries=1, base_delay=0.01)

# The tutorial's shape: EVAL_DATASET rows and rag_answer(question) -> (text, docs).
EVAL_DATASET = [
    {"id": "t1", "question": "How long is the refund window?", "expected_answer_keywords": ["30 days", "receipt"],
     "expected_docs": ["Refund policy"], "category": "billing"},
    {"id": "t2", "question": "Can I export my notes?", "expected_answer_keywords": ["Markdown", "PDF", "zip"],
     "expected_docs": ["Export", "Backups"], "category": "data"},
    {"id": "t3", "question": "Is there a student discount?", "expected_answer_keywords": ["50%"],
     "expected_docs": ["Pricing"], "category": "plans"},
]
RAG_MODULE = '''
DOCS = {
    "refund": [{"title": "Refund policy", "body": "Refunds within 30 days with a receipt.", "similarity": 0.91}],
    "export": [{"title": "Export", "body": "Export notes as Markdown or PDF.", "similarity": 0.88},
               {"title": "Sync", "body": "Notes sync every minute.", "similarity": 0.41}],
    "student": [],
}
ANSWERS = {"refund": "You can get a refund within 30 days if you keep the receipt.",
           "export": "Yes: notes export as Markdown or PDF.",
           "student": "I don't know."}

def rag_answer(question):
    key = "refund" if "refund" in question else "export" if "export" in question else "student"
    return ANSWERS[key], DOCS[key]
'''


def tutorial_keyword_coverage(answer, keywords):
    """As the tutorial defines it: the share of keywords found in the lower-cased answer."""
    return sum(k.lower() in answer.lower() for k in keywords) / len(keywords)


def tutorial_doc_recall(docs, expected):
    titles = {d["title"] for d in docs}
    return sum(e in titles for e in expected) / len(expected)


def write_dataset(path, fmt):
    if fmt == "json":
        path.write_text(json.dumps(EVAL_DATASET))
    elif fmt == "jsonl":
        path.write_text("\n".join(json.dumps(r) for r in EVAL_DATASET))
    else:
        lines = ["id,question,expected_answer_keywords,expected_docs,category"]
        lines += [f'{r["id"]},"{r["question"]}","{"; ".join(r["expected_answer_keywords"])}",'
                  f'"{"; ".join(r["expected_docs"])}",{r["category"]}' for r in EVAL_DATASET]
        path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json"])
def test_tutorial_dataset_and_rag_answer_end_to_end(tmp_path, fmt):
    (tmp_path / "rag.py").write_text(RAG_MODULE)
    data = tmp_path / f"eval.{fmt}"
    write_dataset(data, fmt)
    samples = load_dataset(data, needs_answer=False)
    target = TargetConfig(f"{tmp_path}/rag.py:rag_answer").build()
    report = evaluate_with_target(RAGEvaluator(OfflineJudge()), samples, target)
    namespace = {}
    exec(RAG_MODULE, namespace)
    for row, result in zip(EVAL_DATASET, report.results):
        answer, docs = namespace["rag_answer"](row["question"])
        assert result.sample_id == row["id"] and result.sample.answer == answer
        assert result.sample.contexts == [f"{d['title']}\n{d['body']}" for d in docs]
        assert result.extra["keyword_coverage"].score == pytest.approx(
            tutorial_keyword_coverage(answer, row["expected_answer_keywords"]), abs=1e-4)
        assert result.extra["expected_doc_recall"].score == pytest.approx(
            tutorial_doc_recall(docs, row["expected_docs"]), abs=1e-4)
    # hand-checked: t1 2/2 keywords, 1/1 docs; t2 2/3 keywords, 1/2 docs; t3 0/1 and 0/1
    assert [r.extra["keyword_coverage"].score for r in report.results] == [1.0, 0.6667, 0.0]
    assert [r.extra["expected_doc_recall"].score for r in report.results] == [1.0, 0.5, 0.0]
    assert report.results[2].faithfulness.skipped  # t3 retrieved nothing
    assert report.target_stats()["calls"] == 3 and report.target_stats()["failures"] == 0


def test_without_target_a_file_without_answers_says_to_map_a_column_or_give_a_target(tmp_path):
    data = tmp_path / "eval.jsonl"
    write_dataset(data, "jsonl")
    with pytest.raises(DatasetError, match="no answer column.*or give a target that answers each question"):
        load_dataset(data)
    from evaluator.io.datasets import CLI

    with pytest.raises(DatasetError, match="--mapping answer=COLUMN, or give a target .*--target URL"):
        load_dataset(data, surface=CLI)


def faulty(req):
    """A pipeline whose every question fails differently (the question names the fault)."""
    q = req["question"]
    if q == "slow":
        return Stall(1.0)
    if q == "crash":
        return 500, {"detail": "index offline"}
    if q == "busy":
        return 429, {"error": "rate limited"}, {"Retry-After": "0"}
    if q == "html":
        return 200, Raw(b"<h1>maintenance</h1>")
    if q == "noanswer":
        return 200, {"hits": ["x"]}
    return 200, {"answer": f"fine answer to {q}", "contexts": [f"context for {q}"]}


def test_every_fault_keeps_its_row_and_names_the_failure():
    questions = ["ok one", "slow", "crash", "busy", "html", "noanswer", "ok two"]
    samples = [EvalSample(q, "", [], sample_id=f"s{i}", expected_answer_keywords=["fine"]) for i, q in enumerate(questions)]
    with TargetServer(faulty) as srv:
        target = TargetConfig(srv.url, timeout=0.3).build()
        report = evaluate_with_target(RAGEvaluator(OfflineJudge()), samples, target, policy=FAST, target_workers=3)
    errors = {r.sample.question: r.sample.target_error for r in report.results}
    assert [r.sample_id for r in report.results] == [f"s{i}" for i in range(7)]
    assert errors["ok one"] is None and errors["ok two"] is None
    assert errors["slow"] == "timed out after 0.3 s (after 2 attempts)"
    assert errors["crash"].startswith("HTTP 500 Internal Server Error") and errors["crash"].endswith("(after 2 attempts)")
    assert errors["busy"].startswith("HTTP 429") and "(after 2 attempts)" in errors["busy"]
    assert errors["html"].startswith("the reply is not valid JSON")
    assert errors["noanswer"].startswith("the reply has no answer field")
    failed = [r for r in report.results if r.sample.target_error]
    for r in failed:
        for name, ms in r.metric_scores().items():
            assert ms.skipped and ms.reasoning.startswith("The target call failed"), name
    assert report.target_stats()["failures"] == 5 and report.target_stats()["calls"] == 7
    assert report.results[0].extra["keyword_coverage"].score == 1.0


class SlowJudge(ScriptedJudge):
    """A judge that takes `delay` seconds a call and notes when each call started."""

    def __init__(self, delay):
        super().__init__()
        self.delay, self.started = delay, []

    def generate(self, prompt):
        self.started.append(time.perf_counter())
        time.sleep(self.delay)
        return super().generate(prompt)


def test_answers_are_judged_as_they_arrive_not_after_all_answers():
    arrived = []

    def slow_target(q):
        time.sleep(0.05 * int(q))
        arrived.append(time.perf_counter())
        return f"answer {q}", ["ctx"]

    samples = [EvalSample(str(i), "", []) for i in range(1, 7)]
    judge = SlowJudge(0.005)
    from evaluator.targets import FunctionTarget

    report = evaluate_with_target(RAGEvaluator(judge), samples, FunctionTarget(slow_target), target_workers=1,
                                  judge_workers=2)
    assert len(report.results) == 6
    assert min(judge.started) < max(arrived)  # the first answer was judged while others were still coming


def test_answered_samples_are_not_sent_again_and_answers_are_handed_over_as_they_arrive():
    calls, handed = [], []

    def target(q):
        calls.append(q)
        return "fresh", ["c"]

    from evaluator.targets import FunctionTarget

    done = EvalSample("old", "stored answer", ["stored"], sample_id="a", target_latency_ms=12.0)
    new = EvalSample("new", "", [], sample_id="b")
    report = evaluate_with_target(RAGEvaluator(OfflineJudge()), [done, new], FunctionTarget(target),
                                  on_answer=lambda i, s: handed.append((i, s.answer)))
    assert calls == ["new"] and handed == [(1, "fresh")]
    assert [r.sample.answer for r in report.results] == ["stored answer", "fresh"]


def test_stop_keeps_every_finished_row():
    stop = threading.Event()

    def target(q):
        if q == "3":
            stop.set()
        time.sleep(0.01)
        return "a", ["c"]

    from evaluator.targets import FunctionTarget

    samples = [EvalSample(str(i), "", []) for i in range(20)]
    report = evaluate_with_target(RAGEvaluator(OfflineJudge()), samples, FunctionTarget(target), target_workers=2,
                                  stop=stop)
    assert 3 <= len(report.results) < 20
    assert all(r.sample.answer == "a" for r in report.results)


# --- agents -------------------------------------------------------------------------------------

def agent(question):
    """Calls search twice and an unexpected calculator; never calls the expected 'book' tool."""
    return {"answer": "Flight AF12 to Oslo costs 120 EUR.",
            "tool_calls": [{"name": "search_flights", "arguments": {"to": "Oslo"}, "output": "AF12 120 EUR"},
                           {"name": "search_flights", "arguments": {"to": "OSL"}, "output": "AF12 120 EUR"},
                           {"name": "calculator", "arguments": {"expr": "100*1.2"}, "output": "120"}]}


def test_agent_target_recall_and_precision_checked_by_hand():
    from evaluator.targets import FunctionTarget

    sample = EvalSample("Book the cheapest flight to Oslo", "", [], sample_id="ag1",
                        expected_tools=["search_flights", "book_flight"])
    report = evaluate_with_target(RAGEvaluator(OfflineJudge()), [sample], FunctionTarget(agent))
    extra = report.results[0].extra
    # expected {search_flights, book_flight}: search_flights called -> recall 1/2
    assert extra["tool_call_recall"].score == 0.5
    assert extra["tool_call_recall"].reasoning == "1/2 expected tools were called; missing: book_flight."
    # 3 calls, 2 to an expected tool -> precision 2/3
    assert extra["tool_call_precision"].score == 0.6667
    assert extra["tool_call_precision"].reasoning == "2/3 tool calls were to expected tools; unexpected: calculator."
    assert extra["task_completion"].method == "offline"
    # no contexts returned: the tool outputs are the contexts, so faithfulness is scored, not skipped
    assert report.results[0].sample.contexts[0] == "search_flights\nAF12 120 EUR"
    assert not report.results[0].faithfulness.skipped
    assert "tool_call_recall" in report.metric_names()


def test_task_completion_is_one_judge_call_showing_the_steps():
    sample = EvalSample("Book the cheapest flight to Oslo", "Booked AF12.", [], sample_id="t",
                        tool_calls=agent("x")["tool_calls"])
    judge = ScriptedJudge('{"score": 0.5, "reasoning": "Found the flight but never booked it."}')
    result = RAGEvaluator(judge, metrics=["task_completion"]).evaluate(sample)
    score = result.scores["task_completion"]
    assert judge.calls == 1 and "(3) calculator" in judge.prompts[0] and "Booked AF12." in judge.prompts[0]
    assert (score.method, score.llm_score, score.reasoning) == ("llm_blend", 0.5, "Found the flight but never booked it.")
    failing = RAGEvaluator(ScriptedJudge(RuntimeError("judge down")), metrics=["task_completion"],
                           judge_health=None).evaluate(sample).scores["task_completion"]
    assert failing.method == "heuristic_fallback" and "judge down" in failing.error


def test_agent_metrics_stay_out_of_plain_rag_rows_and_a_failed_agent_call_names_the_failure():
    from evaluator.targets import FunctionTarget

    plain = RAGEvaluator(OfflineJudge()).evaluate(EvalSample("Q?", "A.", ["c"]))
    assert not {"tool_call_recall", "tool_call_precision", "task_completion"} & set(plain.scores)

    def down(q):
        raise ConnectionError("agent offline")

    rows = [EvalSample("Book it", "", [], sample_id="a", expected_tools=["book"]), EvalSample("Hi", "", [], sample_id="b")]
    report = evaluate_with_target(RAGEvaluator(OfflineJudge()), rows, FunctionTarget(down))
    agent_row, plain_row = report.results
    for name in ("tool_call_recall", "tool_call_precision", "task_completion"):
        assert agent_row.scores[name].skipped and "agent offline" in agent_row.scores[name].reasoning
        assert name not in plain_row.scores


def test_deepeval_tools_called_and_expected_tools_columns_are_read(tmp_path):
    row = {"input": "Weather in Oslo?", "actual_output": "It is 4 degrees.",
           "tools_called": [{"name": "get_weather", "input_parameters": {"city": "Oslo"}, "output": "4C"}],
           "expected_tools": [{"name": "get_weather"}, {"name": "get_forecast"}]}
    (tmp_path / "dq.jsonl").write_text(json.dumps(row) + "\n")
    csv_path = tmp_path / "dq.csv"
    csv_path.write_text('input,actual_output,tools_called,expected_tools\n"Weather?","4 degrees.",'
                        '"[{""name"": ""get_weather""}]","get_weather; get_forecast"\n')
    for path in (tmp_path / "dq.jsonl", csv_path):
        sample = load_dataset(path)[0]
        assert [c["name"] for c in sample.tool_calls] == ["get_weather"]
        assert sample.expected_tools == ["get_weather", "get_forecast"]
        result = RAGEvaluator(OfflineJudge()).evaluate(sample)
        assert result.extra["tool_call_recall"].score == 0.5
        assert result.extra["tool_call_precision"].score == 1.0


def test_bare_model_target_skips_context_metrics_with_that_reason():
    from evaluator.targets import FunctionTarget

    target = FunctionTarget(lambda q: "An answer.")
    target.no_contexts_reason = "The target is a bare model (openai:m) with no retrieval, so there are no contexts to judge."
    sample = EvalSample("Q?", "", [], ground_truth="An answer.")
    result = evaluate_with_target(RAGEvaluator(OfflineJudge()), [sample], target).results[0]
    for name in ("faithfulness", "context_precision", "context_recall"):
        assert getattr(result, name).skipped and "bare model" in getattr(result, name).reasoning
    assert not result.answer_relevancy.skipped and not result.answer_correctness.skipped


# --- the output contract ------------------------------------------------------------------------

def test_records_and_csv_carry_the_target_outputs():
    from evaluator.targets import FunctionTarget

    samples = [EvalSample("ok", "", [], sample_id="a"), EvalSample("boom", "", [], sample_id="b")]

    def target(q):
        if q == "boom":
            raise ValueError("bad input")
        return agent(q)

    report = evaluate_with_target(RAGEvaluator(OfflineJudge()), samples, FunctionTarget(target))
    ok, bad = (result_to_record(r, i) for i, r in enumerate(report.results))
    assert ok["answer"].startswith("Flight AF12") and ok["target_error"] is None
    assert ok["tool_calls"][2] == {"name": "calculator", "arguments": {"expr": "100*1.2"}, "output": "120"}
    assert isinstance(ok["target_latency_ms"], float)
    assert bad["target_error"] == "the target raised ValueError: bad input" and bad["tool_calls"] == []
    assert result_from_record(json.loads(json.dumps(ok))).sample == report.results[0].sample
    csv_text = results_csv(report)
    header = next(csv.reader(io.StringIO(csv_text)))
    for column in ("answer", "contexts", "tool_calls", "target_latency_ms", "target_error"):
        assert column in header
    assert "the target raised ValueError: bad input" in csv_text
    from evaluator.report.export import html_report

    page = html_report(report, use_vl_convert=False)
    assert "Trajectory (3 steps)" in page and "<code>calculator</code>" in page
    assert "Target call failed: the target raised ValueError: bad input" in page
    assert "<h2>Target calls</h2>" in page


# --- saved with the run ---------------------------------------------------------------------------

def test_answers_saved_as_they_arrive_are_not_asked_again_on_resume_and_a_run_can_be_rescored(tmp_path):
    from evaluator.store.history import RunStore
    from evaluator.targets import FunctionTarget

    asked = []

    def target(q):
        asked.append(q)
        return f"answer to {q}", [f"ctx {q}"]

    store = RunStore(tmp_path / "h.sqlite3")
    samples = [EvalSample(f"q{i}", "", [], sample_id=f"s{i}") for i in range(4)]
    run_id = store.create_run(dataset_name="d", samples=samples, settings={"target": {"kind": "python"}})
    # first session: every answer is saved, but only rows 0 and 1 get scored before the process dies
    evaluate_with_target(RAGEvaluator(OfflineJudge()), samples[:2], FunctionTarget(target),
                         on_answer=lambda i, s: store.record_answer(run_id, i, s),
                         on_result=lambda i, r: store.record_result(run_id, i, r))
    store.record_answer(run_id, 2, evaluate_with_target(RAGEvaluator(OfflineJudge()), [samples[2]],
                                                        FunctionTarget(target)).results[0].sample)
    assert sorted(asked) == ["q0", "q1", "q2"]  # four target workers: in any order
    pending = store.pending_samples(run_id)
    assert [i for i, _ in pending] == [2, 3] and pending[0][1].answer == "answer to q2"
    # resume: q2 was answered already, only q3 is asked
    evaluate_with_target(RAGEvaluator(OfflineJudge()), [s for _, s in pending], FunctionTarget(target),
                         on_result=lambda j, r: store.record_result(run_id, pending[j][0], r))
    assert sorted(asked) == ["q0", "q1", "q2", "q3"]
    # re-score with another judge: the stored answers, no target call at all
    again = store.answered_samples(run_id)
    assert [s.answer for s in again] == [f"answer to q{i}" for i in range(4)]
    report = RAGEvaluator(ScriptedJudge()).evaluate_dataset(again)
    assert sorted(asked) == ["q0", "q1", "q2", "q3"] and report.results[0].faithfulness.method == "llm_blend"
