"""The estimators of evaluator/analysis/inference.py against cases worked by hand."""
import math
import random

import pytest

import evaluator
from evaluator.analysis.inference import (
    A, B, TIE, UNDECIDED, ConfidenceSequence, corrected_mean, decide, fixed_sample_size, labels_only_mean,
    priorities, priority_sample, sampling_weights, t_quantile, uncertainty, weighted_corrected_mean,
)

SCORES = [0.8, 0.4, 0.6, 0.2, 0.5]
LABELS = {0: 1.0, 1: 0.0, 2: 1.0}


def test_plain_ppi_matches_the_hand_computed_case():
    # judge mean over all 5 rows 0.5; residuals y - f = 0.2, -0.4, 0.4 -> mean 0.0667, variance 0.17333
    c = corrected_mean(SCORES, LABELS, tuned=False)
    assert c.mean == pytest.approx(0.5 + 0.2 / 3)
    assert c.lam == 1.0 and c.n_labels == 3 and c.n_rows == 5 and c.judged_mean == pytest.approx(0.5)
    # var = (1/n - 1/N) * 0.17333 (finite-population correction: the target is these 5 rows' mean)
    assert c.half_width == pytest.approx(t_quantile(0.95, 2) * math.sqrt((1 / 3 - 1 / 5) * 0.52 / 3))


def test_power_tuned_ppi_matches_the_hand_computed_case():
    labels = {0: 0.6, 1: 0.4, 2: 0.2}
    # labelled f = 0.8, 0.4, 0.6: cov(y, f) = 0.02, var(f) = 0.04 -> lam = 0.5
    c = corrected_mean(SCORES, labels)
    assert c.lam == pytest.approx(0.5)
    # 0.5 * 0.5 + mean(0.6 - 0.4, 0.4 - 0.2, 0.2 - 0.3) = 0.25 + 0.1
    assert c.mean == pytest.approx(0.35)
    # residual variance 0.06 / (n - 2): the fitted slope costs a degree of freedom
    assert c.label_var == pytest.approx(0.06)
    assert c.half_width == pytest.approx(t_quantile(0.95, 1) * math.sqrt((1 / 3 - 1 / 5) * 0.06))


def test_a_judge_that_disagrees_is_not_trusted():
    c = corrected_mean(SCORES, {0: 0.0, 1: 1.0, 2: 0.5})  # labels fall as the judge's scores rise
    assert c.lam == 0.0 and c.mean == pytest.approx(0.5)


def test_a_useless_judge_gives_the_labels_only_interval():
    rng = random.Random(3)
    scores = [rng.random() for _ in range(400)]
    labels = {i: float(rng.random() < 0.5) for i in range(0, 400, 4)}
    # judge scores independent of the labels: lam is near 0 and nothing is worse than labels alone
    c = corrected_mean(scores, labels)
    low, high = labels_only_mean(list(labels.values()), n_rows=400)
    assert c.lam < 0.3
    assert c.half_width <= (high - low) / 2 * 1.05


def test_a_good_judge_narrows_the_interval_and_corrects_its_bias():
    rng = random.Random(5)
    truth = [float(rng.random() < 0.6) for _ in range(2000)]
    scores = [min(1.0, 0.8 * t + 0.25 + rng.gauss(0, 0.05)) for t in truth]  # lenient by ~0.15
    labels = {i: truth[i] for i in rng.sample(range(2000), 100)}
    c = corrected_mean(scores, labels)
    low, high = labels_only_mean(list(labels.values()))
    assert c.half_width < 0.5 * (high - low) / 2
    assert c.low <= sum(truth) / len(truth) <= c.high
    assert c.judged_mean - c.mean > 0.05


def test_labels_needed_inverts_the_half_width():
    c = corrected_mean(SCORES * 40, {i: float(i % 3 == 0) for i in range(0, 200, 5)})
    # 40 of 200 rows; a quarter of the variance: (1/n - 1/200) = (1/40 - 1/200) / 4 -> n = 100
    assert c.labels_needed(c.half_width / 2) == 100
    assert c.labels_needed(c.half_width * 2) == c.n_labels
    assert c.labels_needed(1e-6) == 200  # every row: a census has no sampling error
    with pytest.raises(ValueError):
        c.labels_needed(0)


@pytest.mark.parametrize("scores, labels, message", [
    ([0.5, 0.6], {0: 1.0}, "at least 2 labels"),
    ([0.5, 0.6], {0: 1.0, 5: 0.0}, "row 5"),
    ([0.5, float("nan")], {0: 1.0, 1: 0.0}, "finite"),
    ([0.5, 0.6, 0.7], {0: 1.0, 1: float("inf")}, "row 1"),
])
def test_bad_input_is_named(scores, labels, message):
    with pytest.raises(ValueError, match=message):
        corrected_mean(scores, labels)


def test_corrected_mean_is_public():
    assert evaluator.corrected_mean is corrected_mean
    assert "corrected_mean" in evaluator.__all__


def test_t_quantiles_match_the_table():
    for df, table in ((1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (5, 2.571), (10, 2.228), (30, 2.042), (5000, 1.960)):
        assert t_quantile(0.95, df) == pytest.approx(table, rel=0.008)


# --- active sampling -----------------------------------------------------------------------------

def test_uncertainty_peaks_at_the_pass_threshold_and_prefers_measured_spread():
    assert uncertainty(0.5) == pytest.approx(0.5)
    assert uncertainty(1.0) == 0.0 and uncertainty(0.0) == 0.0
    assert uncertainty(0.9, spread=0.2) == 0.2


def test_weights_mix_with_uniform_and_keep_the_mean_at_one():
    w = sampling_weights([0.0, 0.5, 0.5, 1.0], mix=0.5)
    assert w == pytest.approx([0.5, 1.0, 1.0, 1.5])
    assert sampling_weights([0.0, 0.0]) == [1.0, 1.0]


def test_priority_sample_takes_the_reviewed_prefix_and_its_probabilities():
    weights = [1.0, 2.0, 1.0, 4.0]
    prios = [0.5, 8.0, 3.0, 5.0]  # order: 1, 3, 2, 0
    s = priority_sample(weights, prios, reviewed=[1, 3, 0])  # 2 not reviewed: the prefix stops at 1, 3
    assert s.threshold == 3.0
    assert s.probabilities == {1: pytest.approx(2 / 3), 3: 1.0}
    everything = priority_sample(weights, prios, reviewed=[0, 1, 2, 3])
    assert everything.threshold == 0.0 and set(everything.probabilities.values()) == {1.0}


def test_weighted_mean_of_a_census_is_the_label_mean():
    labels = {0: 1.0, 1: 0.0, 2: 1.0, 3: 1.0}
    c = weighted_corrected_mean([0.9, 0.2, 0.5, 0.4], labels, {i: 1.0 for i in labels})
    assert c.mean == pytest.approx(0.75) and c.half_width == pytest.approx(0.0)


def test_weighted_mean_is_the_inverse_probability_weighted_mean_when_the_judge_is_flat():
    # flat judge: slope 0, intercept = the 1/pi-weighted label mean (1/0.5 + 0 + 1/0.25) / (2 + 2 + 4) = 0.75
    labels = {0: 1.0, 1: 0.0, 2: 1.0}
    c = weighted_corrected_mean([0.5] * 6, labels, {0: 0.5, 1: 0.5, 2: 0.25})
    assert c.lam == 0.0 and c.mean == pytest.approx(0.75)
    with pytest.raises(ValueError, match="at least 3"):
        weighted_corrected_mean([0.5] * 6, {0: 1.0, 1: 0.0}, {0: 0.5, 1: 0.5})


def test_active_sampling_is_unbiased_over_many_draws():
    rng = random.Random(11)
    truth = [float(rng.random() < 0.3 + 0.4 * (i % 2)) for i in range(300)]
    scores = [0.2 + 0.6 * t * rng.random() for t in truth]
    weights = sampling_weights([uncertainty(s) for s in scores])
    means, covered = [], 0
    for seed in range(300):
        prios = priorities(weights, seed)
        top = sorted(range(300), key=lambda i: -prios[i])[:40]
        s = priority_sample(weights, prios, top)
        c = weighted_corrected_mean(scores, {i: truth[i] for i in top}, s.probabilities)
        means.append(c.mean)
        covered += c.low <= sum(truth) / 300 <= c.high
    assert sum(means) / len(means) == pytest.approx(sum(truth) / 300, abs=0.01)
    assert covered / 300 >= 0.9


# --- sequential A/B ------------------------------------------------------------------------------

def test_confidence_sequence_first_step_by_hand():
    cs = ConfidenceSequence(alpha=0.05)
    # t=1: sigma^2_0 = 1/4, lam = min(sqrt(2 log 40 / (0.25 * 1 * log 2)), 0.5) = 0.5 on the [0,1] scale
    low, high = cs.add(0.0)
    lam = 0.5
    penalty = 4 * (0.5 - 0.5) ** 2 * (-math.log(1 - lam) - lam) / 4
    half = (math.log(40) + penalty) / lam
    assert (low, high) == (max(-1.0, 2 * (0.5 - half) - 1), min(1.0, 2 * (0.5 + half) - 1)) == (-1.0, 1.0)
    assert cs.n == 1 and cs.estimate == 0.0


def test_confidence_sequence_shrinks_and_rejects_out_of_range_values():
    cs = ConfidenceSequence()
    for i in range(4000):
        cs.add(0.1 if i % 2 else 0.0)
    low, high = cs.interval
    assert 0.0 < low < 0.05 < high < 0.1
    with pytest.raises(ValueError):
        cs.add(1.5)


def test_identical_pipelines_rarely_show_a_winner_at_any_stopping_time():
    false = 0
    for seed in range(200):
        rng = random.Random(seed)
        cs = ConfidenceSequence(alpha=0.05)
        for _ in range(1000):
            if decide(cs.add(float(rng.random() < 0.5) - float(rng.random() < 0.5)), tie=0.0) in (A, B):
                false += 1
                break
    assert false / 200 <= 0.05


def test_bets_tuned_for_a_horizon_are_tighter_there():
    def width_at(t, horizon):
        cs = ConfidenceSequence(horizon=horizon)
        for i in range(t):
            cs.add(0.9 if i % 2 else -0.8)
        low, high = cs.interval
        return high - low

    assert width_at(1000, horizon=1000) < 0.8 * width_at(1000, horizon=None)  # 0.158 against 0.207
    assert width_at(200, horizon=1000) > width_at(200, horizon=None)  # the price: wider long before it


@pytest.mark.parametrize("interval, decision", [
    ((0.01, 0.2), A), ((-0.2, -0.001), B), ((-0.01, 0.015), TIE), ((-0.05, 0.01), UNDECIDED)])
def test_decisions(interval, decision):
    assert decide(interval, tie=0.02) == decision


def test_fixed_sample_size_by_hand():
    # ((1.95996 + 0.84162) * 0.5 / 0.05)^2 = 784.9
    assert fixed_sample_size(0.05, 0.5) == 785
