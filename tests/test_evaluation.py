import logging
import threading
import time

import pytest

from evaluator import EvalSample, OfflineJudge, RAGEvaluator
from tests.fakes import ScriptedJudge


def sample(i, gt=True, lang="en"):
    if lang == "ar":
        return EvalSample("ما هي مدة الاسترجاع؟", "يمكن الاسترجاع خلال ثلاثين يومًا.",
                          ["سياسة الاسترجاع: خلال ثلاثين يومًا من الشراء."], "ثلاثون يومًا", f"ar-{i}")
    return EvalSample(f"Question {i}?", f"Answer {i} about refunds.", [f"Context {i} about refunds."],
                      f"Reference {i}" if gt else None, f"s{i}")


def test_llm_none_is_rejected_with_the_seed_message():
    with pytest.raises(ValueError, match="RAGEvaluator requires an LLM instance."):
        RAGEvaluator(None)


def test_call_count_five_with_reference_three_without():
    judge = ScriptedJudge()
    RAGEvaluator(judge).evaluate(sample(1, gt=True))
    assert judge.calls == 5
    judge2 = ScriptedJudge()
    RAGEvaluator(judge2).evaluate(sample(1, gt=False))
    assert judge2.calls == 3


def test_language_auto_picks_arabic_prompts():
    judge = ScriptedJudge()
    RAGEvaluator(judge).evaluate(sample(1, lang="ar"))
    assert all("[السؤال]" in p for p in judge.prompts)
    judge_en = ScriptedJudge()
    RAGEvaluator(judge_en, language="en").evaluate(sample(1, lang="ar"))
    assert all("[QUESTION]" in p for p in judge_en.prompts)


def test_invalid_language_is_rejected():
    with pytest.raises(ValueError, match="language"):
        RAGEvaluator(OfflineJudge(), language="fr")


def test_quick_eval():
    res = RAGEvaluator.quick_eval(OfflineJudge(), "q?", "an answer", ["a context"])
    assert res.context_recall.skipped and not res.faithfulness.skipped


def test_empty_dataset_warns_and_returns_empty_report(caplog):
    with caplog.at_level(logging.WARNING, logger="ragmeter"):
        report = RAGEvaluator(OfflineJudge()).evaluate_dataset([])
    assert report.results == [] and "no samples" in caplog.text


def slow_reply(prompt):
    # Later samples answer faster, so completion order differs from input order.
    n = int(prompt.split("Question ")[1].split("?")[0])
    time.sleep(0.02 * (10 - n))
    return '{"score": 0.5}'


def test_concurrent_run_keeps_input_order_and_reports_progress():
    samples = [sample(i) for i in range(10)]
    seen = []
    indices = []
    report = RAGEvaluator(ScriptedJudge(slow_reply)).evaluate_dataset(
        samples, max_workers=4, on_progress=lambda d, t, r: seen.append((d, t, r.sample_id)),
        on_result=lambda i, r: indices.append((i, r.sample_id)))
    assert [r.sample_id for r in report.results] == [s.sample_id for s in samples]
    assert [d for d, _, _ in seen] == list(range(1, 11)) and all(t == 10 for _, t, _ in seen)
    assert sorted(indices) == [(i, f"s{i}") for i in range(10)]
    assert [sid for _, _, sid in seen] != [s.sample_id for s in samples]  # really concurrent


def test_concurrent_equals_sequential():
    samples = [sample(i, gt=i % 2 == 0) for i in range(12)]
    seq = RAGEvaluator(OfflineJudge()).evaluate_dataset(samples)
    par = RAGEvaluator(OfflineJudge()).evaluate_dataset(samples, max_workers=3)
    assert [r.score_values() for r in seq.results] == [r.score_values() for r in par.results]


def test_batch_delay_sleeps_between_samples():
    start = time.perf_counter()
    RAGEvaluator(OfflineJudge(), batch_delay=0.05).evaluate_dataset([sample(i) for i in range(4)])
    assert time.perf_counter() - start >= 0.15


def test_show_progress_writes_overwriting_line(capsys):
    RAGEvaluator(OfflineJudge()).evaluate_dataset([sample(i) for i in range(3)], show_progress=True)
    err = capsys.readouterr().out  # the seed prints its progress line to stdout
    assert err.count("\r") == 3 and "3/3" in err


def test_stop_keeps_finished_rows():
    stop = threading.Event()

    def on_progress(done, total, result):
        if done == 3:
            stop.set()

    for workers in (1, 2):
        stop.clear()
        report = RAGEvaluator(ScriptedJudge()).evaluate_dataset(
            [sample(i) for i in range(20)], max_workers=workers, on_progress=on_progress, stop=stop)
        assert 3 <= len(report.results) < 20
        ids = [r.sample_id for r in report.results]
        assert ids == sorted(ids, key=lambda s: int(s[1:]))


def test_rule_metrics_reported_when_sample_has_keywords():
    s = EvalSample("q?", "Refunds within 30 days", ["Refund policy: 30 days"],
                   expected_answer_keywords=["30 days", "receipt"], expected_docs=["Refund policy"])
    res = RAGEvaluator(OfflineJudge()).evaluate(s)
    assert res.score_values()["keyword_coverage"] == 0.5 and res.score_values()["expected_doc_recall"] == 1.0


class CountingJudge(ScriptedJudge):
    def usage(self):
        return {"calls": self.calls, "prompt_tokens": 10 * self.calls, "model": "m"}


def test_report_usage_is_this_runs_share_of_the_judges_totals():
    judge = CountingJudge()
    ev = RAGEvaluator(judge)
    first = ev.evaluate_dataset([sample(1), sample(2, gt=False)])
    second = ev.evaluate_dataset([sample(3)])
    assert first.usage == {"calls": 8, "prompt_tokens": 80, "model": "m"}
    assert second.usage["calls"] == 5
