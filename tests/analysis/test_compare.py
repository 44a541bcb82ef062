"""analysis.compare: run B against run A on real history databases."""
import pytest

from evaluator.analysis.compare import compare_runs
from evaluator.store.history import RunStore
from evaluator.model import EvalSample
from tests.test_history import samples, scored


@pytest.fixture
def store(tmp_path):
    return RunStore(tmp_path / "history.sqlite3")


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
