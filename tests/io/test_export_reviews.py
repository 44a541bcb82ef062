"""The HTML report's "Corrected by your reviewers" section: the corrected mean per metric, escaped."""
from evaluator import OfflineJudge, RAGEvaluator
from evaluator.analysis.inference import corrected_mean
from evaluator.report.export import html_report
from evaluator.model import EvalSample
from evaluator.review.agreement import review_agreement, corrected_line
from evaluator.store.reviews import Review

SAMPLES = [EvalSample(f"Where is store {i}?", f"Store {i} is on street {i}.", [f"Store {i} is on street {i}."],
                      sample_id=f"s{i}") for i in range(12)]


def test_the_report_shows_the_corrected_mean_from_random_reviews():
    report = RAGEvaluator(OfflineJudge(), metrics=["faithfulness"]).evaluate_dataset(SAMPLES)
    results = list(enumerate(report.results))
    reviews = [Review("r", i, "faithfulness", "disagree", "ana", corrected=0.5, queue="random") for i in (1, 4, 7)]
    table = review_agreement(reviews, results)
    html = html_report(report, use_vl_convert=False, reviewed={m: corrected_line(a) for m, a in table.items()})
    expected = corrected_mean([r.scores["faithfulness"].score for r in report.results], {1: 0.5, 4: 0.5, 7: 0.5})
    assert "<h2>Corrected by your reviewers</h2>" in html
    assert f"→ corrected {expected.mean:.2f} [{expected.low:.2f}, {expected.high:.2f}] from 3 reviews" in html


def test_no_section_without_reviews_and_metric_names_are_escaped():
    report = RAGEvaluator(OfflineJudge(), metrics=["faithfulness"]).evaluate_dataset(SAMPLES[:2])
    assert "Corrected by your reviewers" not in html_report(report, use_vl_convert=False)
    html = html_report(report, use_vl_convert=False, reviewed={"<b>tone</b>": "judged 0.50 → corrected 0.40"})
    assert "<td>&lt;b&gt;tone&lt;/b&gt;</td>" in html and "<b>tone</b>" not in html
