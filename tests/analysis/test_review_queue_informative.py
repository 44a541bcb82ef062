"""The informative review order: seeded, weighted by the judge's uncertainty, its weights rebuilt from the scores."""
import pytest

from evaluator.model import EvalResult, MetricScore
from evaluator.review.queue import (
    informative_sample, informative_seed, informative_weights, queue_label, review_queue, row_uncertainty,
)


def result(score, std=None, method="llm_blend", skipped=False, llm=None, heuristic=None):
    ms = MetricScore("faithfulness", score, method=method, llm_std=std, skipped=skipped, llm_score=llm,
                     heuristic_score=heuristic)
    return EvalResult("x", scores={"faithfulness": ms})


def test_uncertainty_prefers_repeat_spread_then_the_gap_then_closeness_to_half():
    assert row_uncertainty(result(0.9, std=0.3).scores["faithfulness"]) == 0.3
    assert row_uncertainty(result(0.9, llm=1.0, heuristic=0.2).scores["faithfulness"]) == pytest.approx(0.8)
    assert row_uncertainty(result(0.5).scores["faithfulness"]) == pytest.approx(0.5)
    # a heuristic's score is no probability: every heuristic-only row weighs the same
    assert row_uncertainty(result(0.99, method="offline").scores["faithfulness"]) == 0.5


def test_the_order_is_seeded_covers_scored_rows_and_favours_unsure_ones():
    rows = [(i, result(0.5 if i < 10 else 0.99)) for i in range(40)] + [(40, result(0.0, skipped=True))]
    first = review_queue(rows, "faithfulness", "informative", seed=4)
    assert first == review_queue(rows, "faithfulness", "informative", seed=4)
    assert sorted(first) == list(range(40))
    # the ten unsure rows have ~3x the weight: over seeds they lead the queue far more often than 10/40
    leaders = [review_queue(rows, "faithfulness", "informative", seed=s)[0] for s in range(200)]
    assert sum(i < 10 for i in leaders) / 200 > 0.4


def test_flat_weights_for_heuristic_only_runs():
    rows = [(i, result(s, method="offline")) for i, s in enumerate((0.1, 0.5, 0.99))]
    assert informative_weights([(i, r.scores["faithfulness"]) for i, r in rows]) == [1.0, 1.0, 1.0]


def test_the_reviewed_prefix_gives_the_sample_and_its_probabilities():
    rows = [(i, result(0.2 + 0.02 * i)) for i in range(30)]
    order = review_queue(rows, "faithfulness", "informative", seed=2)
    scored, sample = informative_sample(rows, "faithfulness", order[:5] + order[6:9], seed=2)
    assert scored == list(range(30))
    assert sorted(sample.probabilities) == sorted(order[:5])  # the 6th was skipped: the prefix ends there
    assert all(0 < p <= 1 for p in sample.probabilities.values())


@pytest.mark.parametrize("order, seed, label, back", [
    ("informative", 7, "informative:7", 7), ("random", 7, "random", None), ("worst", 0, "worst", None)])
def test_queue_labels(order, seed, label, back):
    assert queue_label(order, seed) == label and informative_seed(label) == back
