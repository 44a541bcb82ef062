"""analysis.compare: run B against run A on real history databases."""
import pytest

from evaluator.analysis.compare import compare_runs
from evaluator.model import EvalSample
from tests.test_history import samples, scored


def test_compare_runs_deltas_ci_and_movers(store):
    data = samples(40)
    run_a = store.create_run(dataset_name="d", samples=data, settings={})
    run_b = store.create_run(dataset_name="d", samples=list(reversed(data)), settings={})
    for i, s in enumerate(data):
        store.record_result(run_a, i, scored(s, 0.5 + (i % 5) * 0.05))
    for j, s in enumerate(reversed(data)):  # B stored in the opposite order: pairing is by sample_id
        i = 39 - j
        base = 0.5 + (i % 5) * 0.05
        big = {"answer_relevancy": 0.0} if s.sample_id == "s7" else {}
        store.record_result(run_b, j, scored(s, base + 0.1, **big))
    comparison = compare_runs(store, run_a, run_b)
    assert (comparison.n_paired, comparison.only_a, comparison.only_b) == (40, 0, 0)
    faith = next(m for m in comparison.metrics if m.metric == "faithfulness")
    assert faith.delta == pytest.approx(0.1) and faith.n_pairs == 40
    assert 0 < faith.ci_low <= 0.1 <= faith.ci_high and faith.significant
    assert faith.mean_b - faith.mean_a == pytest.approx(faith.delta)
    top = comparison.movers[0]
    assert (top.sample_id, top.metric, top.a, top.b) == ("s7", "answer_relevancy", 0.6, 0.0)
    assert top.delta == pytest.approx(-0.6) and top.question == "Question 7?"
    assert len(comparison.movers) == 10
    assert all(abs(m.delta) <= abs(top.delta) for m in comparison.movers)


def test_compare_runs_pairs_by_index_without_ids_and_counts_unpaired(store):
    plain = [EvalSample(f"q{i}", "a", ["c"], "a") for i in range(3)]
    run_a = store.create_run(dataset_name="d", samples=plain, settings={})
    run_b = store.create_run(dataset_name="d", samples=plain[:2], settings={})
    for i, s in enumerate(plain):
        store.record_result(run_a, i, scored(s, 0.4))
    for i, s in enumerate(plain[:2]):
        store.record_result(run_b, i, scored(s, 0.4))
    comparison = compare_runs(store, run_a, run_b)
    assert (comparison.n_paired, comparison.only_a, comparison.only_b) == (2, 1, 0)
    assert all(m.delta == 0 and not m.significant for m in comparison.metrics)
    assert comparison.movers == []


def test_runs_with_different_metrics_compare_only_the_shared_ones_and_say_which(store):
    from evaluator.model import EvalResult, MetricScore
    data = samples(6)
    extra = ("keyword_coverage", "groundedness", "tone", "brevity", "safety")
    run_a = store.create_run(dataset_name="d", samples=data, settings={})
    run_b = store.create_run(dataset_name="d", samples=data, settings={})
    for i, s in enumerate(data):
        wide = scored(s, 0.5)
        for name in extra:  # A: the five defaults and five more, each far from B's
            wide.scores[name] = MetricScore(name, 0.1, "why", method="llm")
        store.record_result(run_a, i, wide)
        narrow = {m: MetricScore(m, 0.5 + 0.05 * (i % 2), "why", method="llm_blend")
                  for m in ("faithfulness", "answer_relevancy")}
        store.record_result(run_b, i, EvalResult(s.sample_id, sample=s, scores=narrow))
    comparison = compare_runs(store, run_a, run_b)
    assert comparison.shared == ["faithfulness", "answer_relevancy"]
    assert [d.metric for d in comparison.metrics] == ["faithfulness", "answer_relevancy", "overall"]
    assert set(comparison.metrics_only_a) == {"context_precision", "context_recall", "answer_correctness", *extra}
    note = comparison.metrics_note()
    assert "A has 10 metrics, B has 2" in note and "faithfulness, answer_relevancy" in note
    overall = comparison.metrics[-1]
    assert overall.mean_a == pytest.approx(0.5)  # A's overall over the two shared metrics, not its ten
    assert comparison.movers and {m.metric for m in comparison.movers} <= set(comparison.shared)


def test_runs_with_the_same_metrics_have_no_metrics_note(store):
    data = samples(3)
    run_a = store.create_run(dataset_name="d", samples=data, settings={})
    run_b = store.create_run(dataset_name="d", samples=data, settings={})
    for i, s in enumerate(data):
        store.record_result(run_a, i, scored(s, 0.5))
        store.record_result(run_b, i, scored(s, 0.6))
    comparison = compare_runs(store, run_a, run_b)
    assert comparison.metrics_note() == "" and len(comparison.shared) == 5


def test_the_rows_a_comparison_names_carry_their_question_reasoning_and_why_unscored(store):
    """Scores come from the narrow table; the few rows shown are read whole: the question, B's reasoning
    of a mover, and a target's error for a row B did not score."""
    from dataclasses import replace

    from evaluator.model import EvalResult, MetricScore

    data = samples(4)
    run_a = store.create_run(dataset_name="d", samples=data, settings={})
    run_b = store.create_run(dataset_name="d", samples=data, settings={})
    for i, s in enumerate(data):
        store.record_result(run_a, i, scored(s, 0.8))
    store.record_result(run_b, 0, EvalResult(data[0].sample_id, sample=data[0], scores={
        "faithfulness": MetricScore("faithfulness", 0.1, reasoning="Claim 2 is not in the context.\nMore.")}))
    for i in (1, 2):
        store.record_result(run_b, i, scored(data[i], 0.8))
    failed = replace(data[3], target_error="HTTP 502 from the pipeline")
    store.record_result(run_b, 3, EvalResult(failed.sample_id, sample=failed, scores={}))
    comparison = compare_runs(store, run_a, run_b)
    top = comparison.movers[0]
    assert (top.sample_id, top.metric, top.question) == (data[0].sample_id, "faithfulness", data[0].question)
    assert top.reason == "Claim 2 is not in the context."
    (lost,) = comparison.lost
    assert (lost.sample_id, lost.a, lost.question) == (data[3].sample_id, "scored", data[3].question)
    assert lost.b == "target failed: HTTP 502 from the pipeline"
