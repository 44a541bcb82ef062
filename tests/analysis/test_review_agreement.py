"""The judge against its reviewers: each figure checked against values computed by hand."""
import pytest

from evaluator.review.agreement import (
    agreement_line,
    corrected_line,
    krippendorff_alpha_interval,
    review_agreement,
)
from evaluator.analysis.inference import corrected_mean
from evaluator.model import EvalResult, MetricScore
from evaluator.store.reviews import Review


def results(*scores):
    return [(i, EvalResult(f"s{i}", scores={"faithfulness": MetricScore("faithfulness", v)}))
            for i, v in enumerate(scores)]


def review(index, reviewer, verdict, corrected=None, scale="0-1", queue=""):
    return Review("run", index, "faithfulness", verdict, reviewer, corrected=corrected, scale=scale, queue=queue)


RESULTS = results(0.9, 0.2, 0.6, 0.4)
REVIEWS = [review(0, "ana", "agree", queue="random"), review(0, "bo", "agree"),
           review(1, "ana", "disagree", 0.6, queue="random"),
           review(2, "ana", "disagree", 0.3), review(2, "bo", "disagree", 0.5),
           review(3, "ana", "disagree")]  # no correction: counts towards the agree rate only


@pytest.fixture(scope="module")
def table():
    return review_agreement(REVIEWS, RESULTS)


def test_agree_rate_counts_every_review(table):
    a = table["faithfulness"]
    assert (a.n_reviews, a.n_reviewers, a.n_samples) == (6, 2, 3)
    assert a.agree_rate == pytest.approx(2 / 6)
    assert a.agree_ci[0] <= 2 / 6 <= a.agree_ci[1]


def test_spearman_of_the_judge_against_the_reviewers_mean(table):
    # per sample (judge, human): (0.9, 0.9), (0.2, 0.6), (0.6, mean(0.3, 0.5) = 0.4)
    # ranks judge [3, 1, 2], human [3, 2, 1]: covariance 1, variances 2 -> 0.5
    assert table["faithfulness"].spearman == pytest.approx(0.5)
    assert table["faithfulness"].auroc is None


def test_bias_is_judge_minus_human(table):
    a = table["faithfulness"]
    assert a.bias == pytest.approx((0.0 - 0.4 + 0.2) / 3)
    assert a.bias_ci[0] <= a.bias <= a.bias_ci[1]


def test_reviewers_alpha(table):
    # pairable units [0.9, 0.9] and [0.3, 0.5]; D_o = (0 + 2 * 0.04) / 4 = 0.02,
    # D_e = 2 * (0.36 + 0.16 + 0.36 + 0.16 + 0.04) / (4 * 3) = 0.18 -> alpha = 1 - 1/9
    assert table["faithfulness"].alpha == pytest.approx(1 - 1 / 9)


def test_human_corrected_mean_from_the_random_sample(table):
    a = table["faithfulness"]
    assert a.judged_mean == pytest.approx((0.9 + 0.2 + 0.6 + 0.4) / 4)
    assert (a.n_random, a.reviewed_mean) == (2, pytest.approx(0.75))
    assert a.reviewed_ci == pytest.approx((0.6, 0.9))
    # the corrected figure: PPI++ over the two random reviews (0.9 on row 0, 0.6 on row 1)
    e = corrected_mean([0.9, 0.2, 0.6, 0.4], {0: 0.9, 1: 0.6})
    assert a.correction.estimate == e and a.correction.queue == "random"
    more = e.labels_needed(0.03) - 2  # two labels: plain PPI (a fitted slope needs three)
    assert e.method == "ppi" and more > 0
    assert corrected_line(a) == (f"judged 0.53 → corrected {e.mean:.2f} [{e.low:.2f}, {e.high:.2f}] from 2 reviews; "
                                 f"{more} more for ±0.03")


def test_no_corrected_figure_from_reviews_picked_on_purpose():
    a = review_agreement([review(i, "ana", "disagree", 0.5, queue="worst") for i in range(4)],
                         results(0.9, 0.2, 0.6, 0.4))["faithfulness"]
    assert a.correction.estimate is None
    assert corrected_line(a) == ("judged 0.53; reviews are not a random sample (use the random or informative "
                                 "queue): no corrected figure")


def test_largest_disagreements_first(table):
    assert table["faithfulness"].disagreements == [(1, 0.2, pytest.approx(0.6)), (2, 0.6, pytest.approx(0.4))]
    assert agreement_line(table["faithfulness"]).startswith("agree 0.33 [")


def test_auroc_for_pass_fail_reviews():
    reviews = [review(i, "ana", "disagree", v, scale="pass-fail") for i, v in enumerate((1, 0, 0, 1))]
    # positives judged 0.9, 0.6; negatives 0.8, 0.3: 3 of 4 pairs ordered right
    a = review_agreement(reviews, results(0.9, 0.8, 0.3, 0.6))["faithfulness"]
    assert a.auroc == pytest.approx(0.75)
    assert "AUROC 0.75" in agreement_line(a)


@pytest.mark.parametrize("units, alpha", [
    ([[1, 1], [0, 0], [1, 1]], 1.0),
    ([[1, 2], [3, 4]], 0.7),  # D_o = (2 + 2) / 4 = 1; D_e = 2 * (1+4+9+1+4+1) / 12 = 10/3
    ([[0.5], [0.2]], None),
    ([[0.5, 0.5]], None),
])
def test_alpha_edge_cases(units, alpha):
    got = krippendorff_alpha_interval(units)
    assert got == (None if alpha is None else pytest.approx(alpha))
