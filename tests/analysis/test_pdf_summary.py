"""The one-page PDF summary and the HTML report's chart captions: provenance and the overall score in the real
files' text (pypdf for the PDF), Arabic kept right to left, user text drawn as written."""
from __future__ import annotations

import io
import re

from pypdf import PdfReader

from evaluator import EvalSample, Run, RunConfig, RunStore
from evaluator.report.downloads import RunFiles
from evaluator.report.pdf import is_rtl
from evaluator.scoring import summaries

ARABIC_Q = "ما هي سياسة الاسترداد في المتجر؟"


def stored(rows: list, dataset: str = "support.jsonl", page: str = "") -> RunFiles:
    store = RunStore()
    run = Run.new(RunConfig(metrics=["faithfulness", "answer_relevancy"]), rows, dataset_name=dataset, store=store)
    run.start().join()
    info = store.get_run(run.run_id)
    return RunFiles(dataset, summaries.stored(store, run.run_id), info.settings, store=store, run_id=run.run_id,
                    date=info.created_at, title="Support bot · before the prompt change", page=page)


def pdf_text(data: bytes) -> str:
    reader = PdfReader(io.BytesIO(data))
    assert len(reader.pages) == 1  # one page to attach to an e-mail
    return reader.pages[0].extract_text()


def test_the_pdf_holds_provenance_the_overall_score_and_the_worst_samples():
    rows = [EvalSample(f"What does policy {i} say? <b>**x**</b>", f"Maybe {i}.", [f"Policy {i}: yes."],
                       sample_id=f"q-{i}") for i in range(7)]
    files = stored(rows)
    text = pdf_text(files.pdf())
    overall = files.summary.overall_mean
    assert f"Overall score {overall:.3f}" in text
    assert "support.jsonl" in text and "7/7 rows scored" in text and files.run_id in text
    assert "offline lexical estimates — not judgements" in text and re.search(r"ragmeter \S+", text)
    assert "What to improve" in text and "The 5 weakest answers" in text and "What this measures" in text
    assert re.search(r"#\d+ · q-\d", text)
    assert "<b>**x**</b>" in text  # user text drawn as written, not as markup


def test_the_page_is_a4_or_letter_whatever_the_content_with_the_offline_caveat_up_top(monkeypatch):
    few = stored([EvalSample("Q?", "A.", ["A."], sample_id="s0")])
    many = stored([EvalSample(f"What does policy {i} say? " + "and more " * 40, "Maybe. " * 60, ["Policy: yes."],
                              sample_id=f"q-{i}") for i in range(30)], page="letter")
    assert PdfReader(io.BytesIO(few.pdf())).pages[0].mediabox[2:] == [595, 842]  # A4, in points
    assert PdfReader(io.BytesIO(many.pdf())).pages[0].mediabox[2:] == [612, 792]  # US Letter
    monkeypatch.setenv("RAGMETER_PDF_PAGE", "letter")
    assert PdfReader(io.BytesIO(few.pdf())).pages[0].mediabox[2:] == [612, 792]
    first = pdf_text(few.pdf()).splitlines()[:3]
    assert first[0].startswith("Overall score") and "offline" in first[1].lower(), first
    text = pdf_text(many.pdf())
    assert "Faithfulness" in text and "Answer relevancy" in text and "answer_relevancy" in text  # plain + technical
    assert "Support bot · before the prompt change" in text and "support.jsonl" in text


def test_arabic_is_set_in_a_regular_weight():
    files = stored([EvalSample(ARABIC_Q, "ربما أسبوع.", ["سياسة الاسترداد: ٣٠ يوما."], sample_id="ar-0")])
    page = PdfReader(io.BytesIO(files.pdf())).pages[0]
    fonts = [str(f.get_object()["/BaseFont"]) for f in page["/Resources"]["/Font"].values()]
    assert any("DejaVuSans" in f and "Bold" not in f for f in fonts), fonts  # the body font, Arabic included


def test_arabic_questions_stay_right_to_left_in_the_pdf():
    files = stored([EvalSample(ARABIC_Q, "ربما أسبوع.", ["سياسة الاسترداد: ٣٠ يوما."], sample_id=f"ar-{i}")
                    for i in range(3)], dataset="عربي.jsonl")
    text = pdf_text(files.pdf())
    # A PDF keeps glyphs in visual order: a right-to-left line extracts reversed, word for word.
    assert ARABIC_Q[::-1].replace("؟", "").strip()[:10] in text.replace("؟", "")
    assert is_rtl(ARABIC_Q) and not is_rtl("policy 3 ما") and is_rtl("3 ما")


def test_the_html_report_captions_every_chart_with_its_provenance():
    files = stored([EvalSample(f"Q{i}?", f"A {i}.", [f"A {i}."], sample_id=f"s{i}") for i in range(3)])
    html = files.html()
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", html)
    assert captions and all(files.run_id in c and "3/3 rows scored" in c and "support.jsonl" in c for c in captions)
