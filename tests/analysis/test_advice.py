"""advice: the score bands and the concrete advice for each low metric."""
import pytest

from evaluator.analysis.advice import recommendations
from evaluator.analysis.bands import BAND_COLORS, badge_html, band, band_ranges
from evaluator.model import METRICS, RULE_METRICS


@pytest.mark.parametrize("score, expected", [
    (1.0, "Excellent"), (0.9, "Excellent"), (0.8999, "Good"), (0.7, "Good"), (0.6999, "Needs improvement"),
    (0.5, "Needs improvement"), (0.4999, "Problem"), (0.0, "Problem"),
])
def test_band_boundaries(score, expected):
    assert band(score) == expected


def test_every_band_has_a_colour():
    assert set(BAND_COLORS) == {band(s) for s in (1.0, 0.8, 0.6, 0.1)}
    assert all(c.startswith("#") and len(c) == 7 for c in BAND_COLORS.values())


@pytest.mark.parametrize("metric, diagnosis, phrases", [
    ("context_recall", "retrieval misses", ["raise top_k", "chunking", "metadata filters"]),
    ("answer_relevancy", "prompt drifts", ["improve the prompt", "system prompt"]),
    ("faithfulness", "hallucination", ["answer only from the documents"]),
    ("context_precision", "noisy retrieval", ["rerank", "lower top_k", "hybrid search"]),
    ("answer_correctness", "wrong facts", ["improve retrieval", "grounding", "reference answers"]),
])
def test_specific_advice_per_metric(metric, diagnosis, phrases):
    [advice] = recommendations({metric: 0.4})
    assert (advice.metric, advice.score, advice.band) == (metric, 0.4, "Problem")
    assert diagnosis in advice.diagnosis.lower()
    actions = " ".join(advice.actions).lower()
    for phrase in phrases:
        assert phrase in actions


def test_only_low_metrics_get_advice_worst_first():
    means = {"faithfulness": 0.95, "answer_relevancy": 0.69, "context_precision": 0.7,
             "context_recall": 0.3, "answer_correctness": None}
    advice = recommendations(means)
    assert [a.metric for a in advice] == ["context_recall", "answer_relevancy"]
    assert [a.band for a in advice] == ["Problem", "Needs improvement"]


def test_threshold_is_configurable_and_every_metric_has_advice():
    means = {m: 0.85 for m in METRICS + RULE_METRICS}
    assert recommendations(means) == []
    advice = recommendations(means, threshold=0.9)
    assert {a.metric for a in advice} == set(METRICS + RULE_METRICS)
    assert all(a.actions and a.band == "Good" for a in advice)


def test_band_ranges_are_written_from_the_thresholds():
    assert band_ranges() == {"Excellent": "0.9+", "Good": "0.7–0.9", "Needs improvement": "0.5–0.7",
                             "Problem": "< 0.5"}


def test_one_badge_for_dashboard_and_report():
    inline, css = badge_html(0.95), badge_html(0.95, css_class=True)
    assert BAND_COLORS["Excellent"] in inline and ">0.950<" in inline
    assert 'class="badge b0"' in css and ">0.950<" in css
    assert ">n/a<" in badge_html(None) and 'class="badge na"' in badge_html(None, css_class=True)
    assert "&lt;script&gt;" in badge_html(0.1, "<script>")  # text is escaped
