"""stats: mean/std, seeded bootstrap intervals, per-metric summaries."""
import random
import statistics

import pytest

from evaluator.model import METHOD_BLEND, METHOD_FALLBACK, METHOD_SKIPPED, METRICS, EvalReport, EvalResult, MetricScore
from evaluator.analysis.stats import bootstrap_ci, mean_std, paired_bootstrap_ci, summarize


def uniform(n, seed=1):
    rng = random.Random(seed)
    return [rng.random() for _ in range(n)]


def result(i: int, score: float, *, fallback=False, skip_reference=False, keywords=None) -> EvalResult:
    def ms(name):
        if skip_reference and name in ("context_recall", "answer_correctness"):
            return MetricScore(name, 0.0, "no reference", skipped=True, method=METHOD_SKIPPED)
        return MetricScore(name, score, "", method=METHOD_FALLBACK if fallback else METHOD_BLEND)

    extra = {} if keywords is None else {"keyword_coverage": MetricScore("keyword_coverage", keywords, method="rule")}
    return EvalResult(f"s{i}", **{m: ms(m) for m in METRICS}, extra=extra)


def test_mean_std_matches_statistics_and_handles_small_inputs():
    data = [0.1, 0.5, 0.9, 0.4]
    assert mean_std(data) == (pytest.approx(statistics.fmean(data)), pytest.approx(statistics.stdev(data)))
    assert mean_std([]) == (None, None)
    assert mean_std([0.3]) == (0.3, None)


def test_bootstrap_ci_contains_mean_and_is_deterministic():
    data = uniform(300)
    ci = bootstrap_ci(data, seed=7)
    assert ci[0] < statistics.fmean(data) < ci[1]
    assert bootstrap_ci(data, seed=7) == ci
    assert bootstrap_ci(data, seed=8) != ci
    # ~ 1.96 * sd / sqrt(n) on each side for uniform(0, 1): sd ~ 0.29, half-width ~ 0.033
    assert 0.045 < ci[1] - ci[0] < 0.085


def test_bootstrap_ci_narrows_with_more_data_and_widens_with_level():
    assert bootstrap_ci(uniform(1000))[1] - bootstrap_ci(uniform(1000))[0] < bootstrap_ci(uniform(100))[1] - bootstrap_ci(uniform(100))[0]
    narrow, wide = bootstrap_ci(uniform(200), level=0.5), bootstrap_ci(uniform(200), level=0.99)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]


@pytest.mark.parametrize("values, expected", [([], None), ([0.4], (0.4, 0.4)), ([0.7] * 50, (0.7, 0.7))])
def test_bootstrap_ci_degenerate_inputs(values, expected):
    assert bootstrap_ci(values) == expected


def test_bootstrap_ci_rejects_bad_level():
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci([0.1, 0.2], level=95)


def test_normal_approximation_agrees_with_resampling_for_large_n():
    data = uniform(3000, seed=3)
    exact = bootstrap_ci(data, exact_limit=10**9)
    approx = bootstrap_ci(data)  # 3,000 x 1,000 draws is above the default limit
    assert exact != approx
    assert approx[0] == pytest.approx(exact[0], abs=0.002) and approx[1] == pytest.approx(exact[1], abs=0.002)


def test_paired_ci_excludes_zero_for_consistent_shift_and_includes_it_for_noise():
    rng = random.Random(5)
    shift = [0.05 + rng.uniform(-0.03, 0.03) for _ in range(100)]
    noise = [d for x in range(50) for d in (x / 200, -x / 200)]  # mean exactly 0
    low, high = paired_bootstrap_ci(shift)
    assert 0 < low < 0.05 < high
    low, high = paired_bootstrap_ci(noise)
    assert low < 0 < high


def test_summarize_counts_scored_fallback_and_skipped():
    results = [result(0, 0.2, keywords=1.0), result(1, 0.4, fallback=True), result(2, 0.6, skip_reference=True),
               result(3, 0.8, keywords=0.0)]
    report = EvalReport(results)
    summaries = summarize(report)
    assert [s.name for s in summaries] == report.metric_names() == list(METRICS) + ["keyword_coverage"]
    by = {s.name: s for s in summaries}
    faith = by["faithfulness"]
    assert (faith.mean, faith.n_scored, faith.n_total, faith.n_fallback, faith.n_skipped) == (0.5, 4, 4, 1, 0)
    assert faith.std == pytest.approx(statistics.stdev([0.2, 0.4, 0.6, 0.8]), abs=1e-4)
    assert faith.ci_low <= faith.mean <= faith.ci_high
    assert faith.methods == {METHOD_BLEND: 3, METHOD_FALLBACK: 1}
    recall = by["context_recall"]
    assert (recall.n_scored, recall.n_skipped, recall.methods[METHOD_SKIPPED]) == (3, 1, 1)
    keywords = by["keyword_coverage"]
    assert (keywords.mean, keywords.n_scored, keywords.n_skipped) == (0.5, 2, 2)
    assert {s.name: s.mean for s in summaries} == report.mean_scores()


def test_summarize_of_empty_report_has_no_means():
    summaries = summarize(EvalReport())
    assert [s.mean for s in summaries] == [None] * len(METRICS)
    assert all(s.n_total == 0 and s.ci_low is None for s in summaries)


@pytest.mark.slow
def test_summarize_10k_results_counts_every_row():
    rng = random.Random(0)
    report = EvalReport([result(i, rng.random(), fallback=i % 9 == 0) for i in range(10_000)])
    summaries = summarize(report)
    assert summaries[0].n_scored == 10_000 and summaries[0].n_fallback == 1112
