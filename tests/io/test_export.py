"""export: CSV with formulas neutralised, lossless JSON, and a self-contained, script-free HTML report."""
import csv
import io
import json
import os
import re
import shutil
import subprocess
from html import escape
from html.parser import HTMLParser

import pytest

from evaluator import OfflineJudge, RAGEvaluator
from evaluator.report.export import html_report, report_from_json, results_csv, results_json
from evaluator.model import METHOD_BLEND, METHOD_FALLBACK, METRICS, EvalReport, EvalResult, EvalSample, MetricScore

CANARY = "sk-canary-export-9a8b7c"
PAYLOADS = {
    "script": "<script>document.title='PWNED-script'</script>",
    "img": "<img src=x onerror=\"document.title='PWNED-img'\">",
    "style": "</style><script>document.title='PWNED-style'</script>",
    "quote": "\"><svg onload=\"document.title='PWNED-svg'\">",
}


def hostile_report() -> EvalReport:
    results = []
    for i, (name, payload) in enumerate(PAYLOADS.items()):
        sample = EvalSample(question=f"Q {payload}", answer=f"A {payload}", contexts=[f"C {payload}", "plain"],
                            ground_truth=f"G {payload}", sample_id=f"id {payload}", category=f"cat {payload}")
        scores = {m: MetricScore(m, 0.3 + 0.1 * i, f"R {payload}", method=METHOD_BLEND, llm_score=0.4,
                                 heuristic_score=0.2, raw_reply=f"RAW {payload}") for m in METRICS}
        scores["faithfulness"].error = f"E {payload}"
        results.append(EvalResult(sample.sample_id, **scores, elapsed_sec=0.1, sample=sample))
    return EvalReport(results, total_time=2.0, usage={"calls": 20})


def offline_report() -> EvalReport:
    samples = [EvalSample(f"What is item {i}?", f"Item {i} is a thing.", [f"Item {i} is a thing we sell."],
                          f"Item {i} is a thing.", sample_id=f"s{i}", category="x" if i % 2 else "y",
                          expected_answer_keywords=["thing"]) for i in range(6)]
    return RAGEvaluator(OfflineJudge()).evaluate_dataset(samples)


# -- CSV ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("prefix", ["=", "+", "-", "@", "\t", "\r"])
@pytest.mark.parametrize("field", ["question", "answer", "sample_id", "category", "ground_truth"])
def test_csv_neutralises_formula_cells(prefix, field):
    text = f"{prefix}HYPERLINK(\"x\",\"y\")"
    sample = EvalSample("q", "a", ["c"], "g", sample_id="s", category="k")
    setattr(sample, field, text)
    result = RAGEvaluator(OfflineJudge()).evaluate(sample)
    [row] = list(csv.DictReader(io.StringIO(results_csv(EvalReport([result])), newline="")))
    assert row[field] == "'" + text


def test_csv_keeps_plain_text_and_numbers():
    report = offline_report()
    rows = list(csv.DictReader(io.StringIO(results_csv(report), newline="")))
    assert len(rows) == 6 and rows[0]["question"] == "What is item 0?"
    assert float(rows[0]["faithfulness"]) == report.results[0].faithfulness.score
    assert rows[0]["faithfulness_method"] == "offline" and rows[0]["expected_doc_recall"] == ""


def test_csv_of_empty_report_has_a_header():
    assert results_csv(EvalReport()).splitlines()[0].startswith('"sample_id","category","question"')


# -- JSON ---------------------------------------------------------------------------------------
def test_json_round_trips_and_drops_secrets():
    report = hostile_report()
    text = results_json(report, settings={"model": "m", "api_key": CANARY, "judge": {"token": CANARY}})
    assert CANARY not in text
    data = json.loads(text)
    assert data["settings"] == {"model": "m", "judge": {}}
    assert data["mean_scores"] == report.mean_scores() and len(data["records"]) == 4
    back = report_from_json(text)
    assert back.results == report.results and back.total_time == 2.0 and back.usage == {"calls": 20}


def test_report_from_json_rejects_other_json():
    with pytest.raises(ValueError, match="results_json"):
        report_from_json('{"num_samples": 3}')


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attributes = set(), set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attributes.update(name for name, _ in attrs)


def parsed(html: str):
    """Every element and attribute name a browser's parser would create (payload text is not among them)."""
    parser = _Tags()
    parser.feed(html)
    return parser.tags, parser.attributes


# -- HTML ---------------------------------------------------------------------------------------
@pytest.fixture(params=[True, False], ids=["vl-convert", "hand-drawn"])
def hostile_html(request):
    return html_report(hostile_report(), title=f"T {PAYLOADS['script']}", dataset_name=f"D {PAYLOADS['img']}",
                       settings={"model": PAYLOADS["style"], "api_key": CANARY}, use_vl_convert=request.param,
                       labels_agreement={"faithfulness": {"n": 4, "kind": PAYLOADS["img"], "auroc": 0.75}})


def test_html_escapes_every_payload(hostile_html):
    for payload in PAYLOADS.values():
        assert payload not in hostile_html
        assert escape(payload, quote=True) in hostile_html
    assert CANARY not in hostile_html
    tags, attributes = parsed(hostile_html)
    assert not tags & {"script", "img", "iframe", "object", "embed", "link", "base", "foreignobject"}
    assert not [a for a in attributes if a.startswith("on")]
    assert hostile_html.count("</style>") == 1


def test_html_is_self_contained_with_strict_csp(hostile_html):
    assert ('<meta http-equiv="Content-Security-Policy" content="default-src &#x27;none&#x27;; '
            'style-src &#x27;unsafe-inline&#x27;; img-src data:">') in hostile_html
    assert "http://" not in hostile_html and "https://" not in hostile_html
    assert not re.search(r"(src|href)\s*=", hostile_html.replace("src=x", ""), re.I)
    assert hostile_html.count("<svg") >= 2


def test_html_contents_summary_advice_methods_and_details():
    report = offline_report()
    report.results[0].answer_relevancy = MetricScore("answer_relevancy", 0.2, "judge down", method=METHOD_FALLBACK,
                                                     heuristic_score=0.2, error="TimeoutError: stalled")
    html = html_report(report, dataset_name="shop.csv", settings={"model": "offline"})
    for text in ("shop.csv", "Summary", "95% CI", "Score bands and recommendations", "How scores were made",
                 "heuristic after judge failure", "TimeoutError: stalled", "By category", "Settings",
                 "What is item 5?", "Item 5 is a thing we sell.", "keyword_coverage"):
        assert text in html, text
    assert html.count('<details class="sample">') == 6
    assert "Mean score per metric" in html and "Score distribution per metric" in html


def test_html_embeds_only_the_worst_samples_when_capped():
    report = offline_report()
    worst = sorted(report.results, key=lambda r: r.overall())[:2]
    html = html_report(report, max_samples=2)
    assert html.count('<details class="sample">') == 2 and "worst 2 of 6" in html
    assert "every row is in the CSV" in html
    shown = re.findall(r'<details class="sample"><summary><strong>([^<]*)</strong>', html)
    assert shown == [r.sample_id for r in worst]
    assert "95% CI" in html and "scored 6/6" in html  # the summary still covers every sample


@pytest.mark.slow
def test_html_caps_the_samples_by_default_and_stays_small():
    from evaluator.report.export import DEFAULT_MAX_SAMPLES

    report = offline_report()
    report.results = [report.results[i % 6] for i in range(DEFAULT_MAX_SAMPLES * 3)]
    html = html_report(report, use_vl_convert=False)
    assert html.count('<details class="sample">') == DEFAULT_MAX_SAMPLES
    assert f"worst {DEFAULT_MAX_SAMPLES:,} of {DEFAULT_MAX_SAMPLES * 3:,}" in html


def test_offline_html_says_scores_are_lexical_estimates_at_the_top():
    html = html_report(offline_report(), settings={"judge": "offline"}, use_vl_convert=False)
    notice = html.index("lexical estimates")
    assert notice < html.index("<h2>Summary</h2>") and "paraphrase" in html and "word salad" in html


def test_html_header_names_a_failed_judge_and_the_fallbacks():
    report = offline_report()
    for r in report.results:
        r.faithfulness = MetricScore("faithfulness", 0.4, "judge down", method=METHOD_FALLBACK, heuristic_score=0.4,
                                     error="JudgeError: Judge rejected the request: HTTP 401 Unauthorized")
    report.usage = {"calls": 0, "failures": 6, "stopped_on_judge_failure": "Judge rejected the request: HTTP 401"}
    html = html_report(report, settings={"judge": "openai", "model": "gpt-4o-mini"}, use_vl_convert=False)
    assert "gpt-4o-mini · 0/6 calls answered, 0/6 replies usable · HTTP 401" in html
    assert "The run stopped: the judge failed." in html and "6 of 6 judged scores" in html
    assert "lexical estimates (words shared" not in html  # not an offline run


def test_per_sample_badges_carry_their_metric_names():
    html = html_report(offline_report(), use_vl_convert=False)
    summary = re.search(r'<details class="sample"><summary>(.*?)</summary>', html, re.S).group(1)
    for name in ("faithfulness", "answer relevancy", "context precision"):
        assert f'<span class="muted">{name}</span>' in summary


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.mark.slow
@pytest.mark.parametrize("keep_csp", [True, False], ids=["with-csp", "escaping-alone"])
def test_no_script_runs_in_chromium(tmp_path, keep_csp):
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs Debian's chromium at /usr/bin/chromium")
        pytest.skip("chromium not installed")
    html = html_report(hostile_report(), title="SAFE-TITLE")
    if not keep_csp:  # escaping alone must already stop every payload
        html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    page = tmp_path / "report.html"
    page.write_text(html, encoding="utf-8")
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=3000", "--dump-dom",
         page.as_uri()], capture_output=True, text=True, timeout=120,
    ).stdout
    assert "<title>SAFE-TITLE</title>" in dom
    assert "<script" not in dom.lower()
