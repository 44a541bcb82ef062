"""Review queue orders: worst first, seeded random sample, LLM/heuristic gap, judge noise, unreviewed."""
import pytest

from evaluator.review.queue import review_queue
from evaluator.model import EvalResult, MetricScore


def result(score, llm=None, heuristic=None, std=None, skipped=False):
    ms = MetricScore("faithfulness", score, llm_score=llm, heuristic_score=heuristic, llm_std=std, skipped=skipped)
    return EvalResult("x", scores={"faithfulness": ms})


RESULTS = [(0, result(0.8, 0.9, 0.5, 0.05)), (1, result(0.2, 0.1, 0.4, 0.3)), (2, result(0.5, 0.5, 0.5)),
           (3, result(0.0, skipped=True)), (4, result(0.2, 0.0, 0.9, 0.1))]


@pytest.mark.parametrize("order, expected", [
    ("worst", [1, 4, 2, 0]),
    ("gap", [4, 0, 1, 2]),
    ("noise", [1, 4, 0]),
    ("unreviewed", [0, 2]),
])
def test_orders(order, expected):
    assert review_queue(RESULTS, "faithfulness", order, reviewed={1: 1, 4: 2}) == expected


def test_random_is_seeded_sized_and_covers_only_scored_samples():
    first = review_queue(RESULTS, "faithfulness", "random", n=3, seed=7)
    assert first == review_queue(RESULTS, "faithfulness", "random", n=3, seed=7)
    assert len(first) == 3 and set(first) <= {0, 1, 2, 4}
    assert sorted(review_queue(RESULTS, "faithfulness", "random", seed=1)) == [0, 1, 2, 4]


def test_n_caps_every_order_and_unknown_orders_are_named():
    assert review_queue(RESULTS, "faithfulness", "worst", n=2) == [1, 4]
    with pytest.raises(ValueError, match="choose one of worst, random"):
        review_queue(RESULTS, "faithfulness", "best")
