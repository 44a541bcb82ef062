"""Agreement statistics against hand-computed values, and the per-metric table from a real report."""
import pytest

from evaluator.analysis.agreement import (
    BINARY,
    GRADED,
    agreement_table,
    auroc,
    calibration,
    format_agreement_table,
    kendall_tau_b,
    label_kind,
    mae,
    pairwise_accuracy,
    rankdata,
    scale_labels,
    spearman,
)
from evaluator import OfflineJudge, RAGEvaluator
from evaluator.model import EvalSample


def test_rankdata_gives_ties_their_mean_rank():
    assert rankdata([10, 20, 20, 5]) == [2.0, 3.5, 3.5, 1.0]


def test_auroc_perfect_reversed_and_undefined():
    assert auroc([0.9, 0.8, 0.1], [1, 1, 0]) == 1.0
    assert auroc([0.1, 0.2, 0.9], [1, 1, 0]) == 0.0
    assert auroc([0.5, 0.6], [1, 1]) is None


def test_auroc_counts_ties_as_half():
    # positives 0.8, 0.5; negatives 0.5, 0.2 -> pairs: (0.8>0.5) 1, (0.8>0.2) 1, (0.5=0.5) 0.5, (0.5>0.2) 1
    assert auroc([0.8, 0.5, 0.5, 0.2], [1, 1, 0, 0]) == pytest.approx(3.5 / 4)


def test_spearman_hand_computed():
    # ranks x = 1 2 3 4, ranks y = 1 3 2 4: d^2 = 0 1 1 0 -> rho = 1 - 6*2 / (4*15) = 0.8
    assert spearman([1, 2, 3, 4], [10, 30, 20, 40]) == pytest.approx(0.8)
    assert spearman([1, 1, 1], [1, 2, 3]) is None


def test_kendall_tau_b_hand_computed():
    # x = 1 2 3 4, y = 1 3 2 4: 5 concordant, 1 discordant of 6 pairs -> (5 - 1) / 6
    assert kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    # with ties: x = 1 1 2, y = 1 2 3 -> n0 = 3, n1 = 1, n2 = 0; C = 2, D = 0 -> 2 / sqrt(2 * 3)
    assert kendall_tau_b([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / (2 * 3) ** 0.5)
    assert kendall_tau_b([3, 2, 1], [1, 2, 3]) == pytest.approx(-1.0)


def test_pairwise_accuracy_within_groups_with_ties_half():
    scores = [0.9, 0.1, 0.5, 0.5, 0.7]
    labels = [1, 0, 1, 0, 1]
    groups = ["a", "a", "b", "b", "c"]  # c has no pair
    assert pairwise_accuracy(scores, labels, groups) == pytest.approx((1 + 0.5) / 2)


def test_pairwise_accuracy_respects_min_gap():
    # utility 5 vs 4 is ignored with min_gap=2; 5 vs 1 is ordered right, 4 vs 1 wrong
    scores, labels = [0.2, 0.9, 0.5], [5, 4, 1]
    assert pairwise_accuracy(scores, labels, ["q"] * 3, min_gap=2) == pytest.approx(0.5)


def test_label_kind_and_scaling():
    assert label_kind([0, 1, 1]) == BINARY
    assert label_kind([0.2, 1]) == GRADED
    assert scale_labels([1, 3, 5]) == [0.0, 0.5, 1.0]
    assert scale_labels([0, 0.5]) == [0.0, 0.5]
    with pytest.raises(ValueError, match="1 to 5"):
        scale_labels([0, 7])


def test_mae_after_scaling():
    assert mae([0.0, 0.5, 1.0], [1, 3, 4]) == pytest.approx((0 + 0 + 0.25) / 3)


def test_calibration_one_bin_per_distinct_label():
    bins = calibration([0.2, 0.4, 0.9, 0.7], [0, 0, 1, 1])
    assert [(b.low, b.n, b.mean_score) for b in bins] == [(0.0, 2, 0.3), (1.0, 2, 0.8)]


def test_calibration_equal_width_bins_for_continuous_labels():
    labels = [0.05, 0.15, 0.35, 0.55, 0.75, 0.95, 1.0]
    bins = calibration([0.1, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0], labels, bins=5)
    assert [b.n for b in bins] == [2, 1, 1, 1, 2]
    assert bins[-1].mean_score == pytest.approx(0.95)


def test_agreement_table_from_a_real_report_with_human_labels():
    context = "The Louvre museum in Paris opened in 1793 and holds the Mona Lisa."
    rows = [
        ("When did the Louvre open?", "The Louvre opened in 1793.", 1, 5),
        ("When did the Louvre open?", "It opened in 1850 in Lyon.", 0, 2),
        ("What does the Louvre hold?", "The Louvre holds the Mona Lisa.", 1, 4),
        ("What does the Louvre hold?", "Bread and cheese from Tom Baker.", 0, 1),
    ]
    samples = [EvalSample(q, a, [context], metadata={"human_labels": {"human_faithfulness": f,
                                                                       "answer_relevancy": r}})
               for q, a, f, r in rows]
    report = RAGEvaluator(OfflineJudge()).evaluate_dataset(samples)
    table = agreement_table(report)
    assert set(table) == {"faithfulness", "answer_relevancy"}
    faith = table["faithfulness"]
    assert (faith.n, faith.kind, faith.auroc) == (4, BINARY, 1.0)
    assert faith.spearman is None
    relevancy = table["answer_relevancy"]
    assert relevancy.kind == GRADED and relevancy.spearman is not None and relevancy.kendall is not None
    assert [b.n for b in relevancy.calibration] == [1, 1, 1, 1]
    text = format_agreement_table(table)
    assert "faithfulness" in text and "1.000" in text


def test_agreement_table_from_pairs_skips_empty_metrics():
    table = agreement_table({"faithfulness": [(0.9, 1), (0.1, 0)], "context_recall": []})
    assert list(table) == ["faithfulness"]
    assert table["faithfulness"].to_dict()["auroc"] == 1.0
