"""Report page (AppTest): empty state, values equal the library's, filters, drill-down, downloads."""
import html
import re
from pathlib import Path

import pytest

from evaluator import OfflineJudge, RAGEvaluator, load_dataset
from apptest import isolate, open_app
from evaluator.analysis.stats import summarize

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data" / "sample.jsonl"
TIMEOUT = 30


@pytest.fixture
def app(tmp_path, monkeypatch):
    isolate(tmp_path, monkeypatch)
    return open_app(TIMEOUT)


@pytest.fixture
def reported(app):
    """The app on the Report page after an offline run of the bundled sample."""
    app.button(key="btn_run").click().run()
    app.switch_page("pages/report.py").run()
    assert not app.exception, [e.value for e in app.exception]
    return app


@pytest.fixture(scope="module")
def library_report():
    return RAGEvaluator(OfflineJudge()).evaluate_dataset(load_dataset(SAMPLE))


def markdown_text(at):
    return "\n".join(m.value for m in at.markdown)


def test_empty_state_points_to_evaluate_and_runs_the_sample_in_one_click(app, library_report):
    app.switch_page("pages/report.py").run()
    assert not app.exception
    assert any("No report yet" in i.value for i in app.info)
    assert app.button(key="btn_go_evaluate").label == "Go to Evaluate"
    app.button(key="btn_quick_run").click().run()
    assert not app.exception, [e.value for e in app.exception]
    cards = {m.label: m.value for m in app.metric}
    assert cards["overall"] == f"{library_report.overall_mean():.3f}"


def test_metric_cards_equal_the_library_means(reported, library_report):
    cards = {m.label: m.value for m in reported.metric}
    means = library_report.mean_scores()
    assert set(means) <= set(cards)
    for name, mean in means.items():
        assert cards[name] == f"{mean:.3f}", name
    assert cards["overall"] == f"{library_report.overall_mean():.3f}"


def test_summary_table_has_std_ci_and_counts(reported, library_report):
    expected = {s.name: s for s in summarize(library_report)}
    table = reported.dataframe[0].value
    assert list(table["metric"]) == list(expected)
    for _, row in table.iterrows():
        s = expected[row["metric"]]
        assert (row["mean"], row["std"], row["95% CI low"], row["95% CI high"]) == (s.mean, s.std, s.ci_low, s.ci_high)
        assert (row["scored"], row["total"], row["fallback"]) == (s.n_scored, s.n_total, s.n_fallback)
    captions = "\n".join(c.value for c in reported.caption)
    recall = expected["context_recall"]
    assert f"scored {recall.n_scored}/{recall.n_total}" in captions


def test_advice_for_low_metrics_and_human_agreement(reported, library_report):
    headers = [h.value for h in reported.subheader]
    assert "What to improve" in headers
    low = [m for m, v in library_report.mean_scores().items() if v is not None and v < 0.7]
    text = markdown_text(reported)
    for metric in low:
        assert f"**{metric}**" in text
    # The bundled sample carries human_faithfulness / human_answer_relevancy labels.
    assert "Agreement with human labels" in headers
    assert "Offline judge: 0 judge calls" in "\n".join(c.value for c in reported.caption)


def samples_table(at):
    (table,) = [d.value for d in at.dataframe if "#" in d.value.columns]
    return table


def test_sample_table_filters(reported, library_report):
    n = len(library_report.results)
    assert len(samples_table(reported)) == n
    reported.selectbox(key="rep_metric").set_value("faithfulness").run()
    reported.slider(key="rep_max").set_value(0.5).run()
    low = [r for r in library_report.results if not r.faithfulness.skipped and r.faithfulness.score <= 0.5]
    assert len(samples_table(reported)) == len(low)
    reported.selectbox(key="rep_metric").set_value("(any)").run()
    reported.text_input(key="rep_search").set_value("refund").run()
    hits = [r for r in library_report.results if "refund" in (r.sample.question + " " + r.sample.answer).lower()]
    assert 0 < len(samples_table(reported)) == len(hits) < n


def test_drill_down_shows_text_and_reasoning(reported, library_report):
    first = library_report.results[0]
    text = markdown_text(reported)
    assert html.escape(first.sample.question) in text
    assert html.escape(first.faithfulness.reasoning) in text
    assert "offline heuristic" in text
    reported.selectbox(key="rep_sample").set_value(5).run()
    other = library_report.results[5]
    text = markdown_text(reported)
    assert html.escape(other.sample.question) in text
    assert html.escape(other.answer_relevancy.reasoning) in text
    for ctx in other.sample.contexts:  # marked with its claims, or as plain text when it has none
        assert html.escape(ctx) in shown_texts(reported)


def test_downloads_and_charts_are_offered(reported):
    labels = [d.proto.label for d in reported.get("download_button")]
    for label in ("Download CSV", "Download JSON", "Download HTML report", "Download Parquet",
                  "Means ± 1 std chart (PNG)", "Means ± 1 std chart (SVG)", "Distributions chart (PNG)"):
        assert label in labels
    charts = reported.get("vega_lite_chart")
    assert len(charts) >= 2
    means_spec = charts[0].proto.spec
    assert "errorbar" in means_spec and "bootstrap 95% CI" in means_spec
    assert [t.label for t in reported.tabs][:2] == ["Means ± 1 std", "Distributions"]


def test_report_survives_switching_pages(reported):
    before = {m.label: m.value for m in reported.metric}
    reported.switch_page("pages/spot_check.py").run()
    reported.switch_page("pages/report.py").run()
    assert {m.label: m.value for m in reported.metric} == before


SMALL_CSV = (b"question,answer,contexts\n"
             b"Where is the office?,In Cairo.,The office is in Cairo.\n"
             b"Who signs the form?,The manager.,The team manager signs the form.\n")


def run_small_upload(at):
    """Score a 2-row upload without categories or rule metrics, then show its report."""
    at.switch_page("pages/evaluate.py").run()
    at.radio(key="eval_source").set_value("Upload a file").run()
    at.file_uploader(key="upload_file").set_value(("small.csv", SMALL_CSV, "text/csv")).run()
    at.button(key="btn_run").click().run()
    at.switch_page("pages/report.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(samples_table(at)) == 2


def test_filters_and_drill_down_pick_survive_page_switches(reported):
    reported.selectbox(key="rep_metric").set_value("faithfulness").run()
    reported.slider(key="rep_max").set_value(0.9).run()
    pick = reported.selectbox(key="rep_sample").options[1]
    reported.selectbox(key="rep_sample").set_value(int(pick.split(" · ")[0][1:]) - 1).run()  # "#n" counts from 1
    shown = len(samples_table(reported))
    for page in ("pages/history.py", "pages/spot_check.py", "pages/evaluate.py", "pages/report.py"):
        reported.switch_page(page).run()
    assert not reported.exception and not reported.warning
    assert (reported.selectbox(key="rep_metric").value, reported.slider(key="rep_max").value) == ("faithfulness", 0.9)
    assert reported.selectbox(key="rep_sample").value == int(pick.split(" · ")[0][1:]) - 1
    assert len(samples_table(reported)) == shown


def test_a_kept_pick_beyond_a_smaller_report_falls_back_to_its_first_sample(reported):
    reported.selectbox(key="rep_sample").set_value(20).run()
    run_small_upload(reported)
    assert reported.selectbox(key="rep_sample").value == 0
    assert "Where is the office?" in markdown_text(reported)


def test_kept_filters_a_new_report_cannot_offer_are_dropped(reported, library_report):
    category = next(r.sample.category for r in library_report.results if r.sample.category)
    reported.multiselect(key="rep_categories").set_value([category]).run()
    reported.selectbox(key="rep_metric").set_value("keyword_coverage").run()
    assert len(samples_table(reported)) < len(library_report.results)
    run_small_upload(reported)
    assert reported.selectbox(key="rep_metric").value == "(any)"
    assert "rep_categories" not in [w.key for w in reported.multiselect]  # no categories to offer


def test_retrieval_metrics_show_as_cards_and_their_ranks_in_the_drill_down(tmp_path, monkeypatch):
    from evaluator import EvalSample, Run, RunConfig, RunStore

    isolate(tmp_path, monkeypatch)
    rows = [EvalSample("Where is the warranty?", "Two years.", ["Warranty: two years."], sample_id="r1",
                       expected_docs=["warranty"], retrieval_ids=["returns", "warranty", "returns"]),
            EvalSample("Shipping?", "EU only.", ["Shipping: EU only."], sample_id="r2", relevance={"ship": 2})]
    run = Run.new(RunConfig(metrics=("context_precision", "ndcg@3", "mrr")), rows, dataset_name="ids.jsonl",
                  store=RunStore()).start()
    run.join()
    at = open_app(TIMEOUT)
    at.switch_page("pages/history.py").run()
    at.button(key="btn_hist_open").click().run()
    assert not at.exception, [e.value for e in at.exception]
    cards = {m.label.replace("\u2060", ""): m.value for m in at.metric}  # errors.md keeps "@" from linking
    assert cards["ndcg@3"] == f"{1 / 1.584962500721156:.3f}" and cards["mrr@5"] == "0.500"  # r2 has no ids: N/A
    assert list(cards).index("ndcg@3") == list(cards).index("context_precision") + 1  # beside the judged one
    captions = "\n".join(c.value for c in at.caption)
    assert f"data version ` {RunStore().get_run(run.run_id).settings['dataset_version']} `" in captions
    assert "Retrieved ids, by rank: returns, warranty, returns" in captions and "Per-rank breakdown" in captions
    ranks = [d.value for d in at.dataframe if "rank" in d.value.columns][0]
    assert list(ranks["doc_id"]) == ["returns", "warranty", "returns"]
    assert list(ranks["note"]) == ["", "", "duplicate of rank 1"]
    at.switch_page("pages/report.py").run()  # AppTest stays on the page that switched; the report is kept
    at.selectbox(key="rep_sample").set_value(1).run()
    text = "\n".join(m.value for m in at.markdown)
    assert "No retrieval ids for this sample" in text  # N/A with its reason, never 0


def shown_texts(at) -> str:
    """The sample text the page draws, tags dropped: Markdown blocks and the marked-claims HTML
    (without its claim lists, which quote an answer sentence as a claim)."""
    bodies = [m.value for m in at.markdown] + [h.proto.body for h in at.get("html")]
    text = re.sub(r"<ol>.*?</ol>", "", "\n".join(bodies), flags=re.S).replace("<br>", "\n")
    return re.sub(r"<[^>]+>", "", text)


@pytest.mark.parametrize("pick", [0, 5])
def test_drill_down_shows_answer_and_contexts_once(reported, library_report, pick):
    reported.selectbox(key="rep_sample").set_value(pick).run()
    sample = library_report.results[pick].sample
    page = shown_texts(reported)
    for text in [sample.question, sample.answer, *sample.contexts]:
        assert page.count(html.escape(text)) == 1, text
