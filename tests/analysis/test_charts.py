"""charts and analysis.aggregate: vega-lite specs built from aggregate rows, rendered offline to PNG and SVG."""
import random
import subprocess
import sys

from evaluator.analysis.agreement import agreement_table
from evaluator.analysis.aggregate import category_rows, histogram_rows
from evaluator.analysis.charts import (
    calibration_chart, category_chart, chart_png, chart_svg, distribution_chart,
    means_chart,
)
from evaluator.model import METHOD_BLEND, METHOD_FALLBACK, METRICS, EvalReport, EvalResult, EvalSample, MetricScore

PAYLOAD = "</svg><script>alert(1)</script>"


def report(n=60, categories=("billing", "setup", PAYLOAD), seed=2):
    rng = random.Random(seed)
    results = []
    for i in range(n):
        sample = EvalSample(f"q{i}", "a", ["c"], "a", sample_id=f"s{i}",
                            category=categories[i % len(categories)] if categories else None)
        scores = {m: MetricScore(m, round(rng.random(), 4), method=METHOD_FALLBACK if i % 7 == 0 else METHOD_BLEND)
                  for m in METRICS}
        results.append(EvalResult(sample.sample_id, **scores, sample=sample))
    return EvalReport(results)


def marks(spec):
    return [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in spec["layer"]]


def test_means_chart_has_bars_with_std_error_bars_and_ci_tooltip():
    rep = report()
    spec = means_chart(rep).to_dict()
    assert marks(spec) == ["bar", "errorbar", "text"]
    rows = {row["metric"]: row for row in spec["data"]["values"]}
    assert list(rows) == list(METRICS)
    means, stds = rep.mean_scores(), rep.std_scores()
    faith = rows["faithfulness"]
    assert faith["mean"] == means["faithfulness"] and faith["std"] == stds["faithfulness"]
    assert faith["low"] == max(0.0, faith["mean"] - faith["std"]) and faith["high"] == min(1.0, faith["mean"] + faith["std"])
    assert faith["scored"] == "60/60" and faith["fallbacks"] == 9
    errorbar = spec["layer"][1]["encoding"]
    assert errorbar["x"]["field"] == "low" and errorbar["x2"]["field"] == "high"
    tooltip_titles = [t.get("title", t["field"]) for t in spec["layer"][0]["encoding"]["tooltip"]]
    assert "bootstrap 95% CI" in tooltip_titles and "scored/total" in tooltip_titles
    assert spec["layer"][2]["encoding"]["text"]["field"] == "mean"


def test_means_chart_names_metrics_in_full_on_the_vertical_axis():
    spec = means_chart(report()).to_dict()
    for layer in spec["layer"]:
        y = layer["encoding"]["y"]
        assert y["field"] == "metric" and y["axis"]["labelLimit"] >= 200
    assert spec["layer"][0]["encoding"]["x"]["scale"]["domain"] == [0, 1]
    svg = chart_svg(means_chart(report()))
    assert "answer_correctness" in svg and "…" not in svg  # no label cut short


def test_distribution_is_prebinned_so_data_size_does_not_grow_with_samples():
    small, big = report(30), report(3000)
    rows = histogram_rows(big)
    assert len(rows) == len(histogram_rows(small)) == len(METRICS) * 10
    for metric in METRICS:
        assert sum(r["count"] for r in rows if r["metric"] == metric) == 3000
    spec = distribution_chart(big).to_dict()
    assert spec["facet"]["field"] == "metric" and len(spec["data"]["values"]) == len(rows)


def test_a_score_of_one_lands_in_the_last_bin():
    rep = EvalReport([EvalResult("x", **{m: MetricScore(m, 1.0) for m in METRICS})])
    last = [r for r in histogram_rows(rep) if r["metric"] == "faithfulness"][-1]
    assert (last["bin_start"], last["count"]) == (0.9, 1)


def test_category_chart_means_and_none_without_categories():
    assert category_chart(report(categories=None)) is None
    rep = report(30)
    rows = category_rows(rep)
    billing = [r.faithfulness.score for r in rep.results if r.sample.category == "billing"]
    cell = next(r for r in rows if r["category"] == "billing" and r["metric"] == "faithfulness")
    assert cell["mean"] == round(sum(billing) / len(billing), 4) and cell["n"] == 10
    assert category_chart(rep).to_dict()["layer"][0]["mark"]["type"] == "rect"


def test_many_categories_are_pooled_into_other():
    rows = category_rows(report(200, categories=[f"c{i}" for i in range(50)]), max_categories=5)
    assert len({r["category"] for r in rows}) == 6 and any(r["category"] == "(other)" for r in rows)


def test_calibration_chart_plots_mean_score_per_label_bin():
    rep = report(40)
    for i, result in enumerate(rep.results):
        result.sample.metadata["human_labels"] = {"faithfulness": float(i % 2)}
    table = agreement_table(rep)
    spec = calibration_chart(table).to_dict()
    points = spec["data"]["values"]
    assert {p["metric"] for p in points} == {"faithfulness"} and sum(p["rows"] for p in points) == 40
    assert spec["mark"]["type"] == "line" and spec["encoding"]["x"]["field"] == "label"
    assert calibration_chart({}) is None


def test_png_and_svg_render_offline():
    chart = means_chart(report())
    png = chart_png(chart)
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000
    svg = chart_svg(chart)
    assert svg.lstrip().startswith("<svg") and "faithfulness" in svg
    assert chart_png(chart.to_dict(), scale=1).startswith(b"\x89PNG")


def test_dataset_strings_are_escaped_in_svg():
    svg = chart_svg(category_chart(report()))
    assert PAYLOAD not in svg and "<script" not in svg
    assert "&lt;/svg&gt;&lt;script&gt;" in svg


def test_library_imports_without_loading_altair():
    code = ("import sys, evaluator.analysis.charts, evaluator.report.export, evaluator.store.history, evaluator.analysis.stats; "
            "assert 'altair' not in sys.modules and 'vl_convert' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
