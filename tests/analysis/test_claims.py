"""Claims located on the text: the judge's paraphrases found in the answer and contexts, or
"not located"; the heuristic's own evidence for offline scores; escaped, marked HTML (English, Arabic)."""
from html import escape
from html.parser import HTMLParser

import pytest

from evaluator.analysis.claims import Where, claim_view, claim_views, locate, support
from evaluator.analysis.highlight import direction, marked, sample_html
from evaluator.model import EvalSample, MetricScore

ANSWER = "The Octopus card was launched in 1997 in Hong Kong. It costs 50 dollars."
CONTEXTS = ["Octopus is a smart card. Launched in September 1997, it was the second contactless card system.",
            "Hong Kong has trams."]
SAMPLE = EvalSample("When did the Octopus card launch?", ANSWER, CONTEXTS, ground_truth="It launched in 1997.")


def cut(text: str, where: Where) -> str:
    return text[where.start:where.end]


def faithfulness(*claims):
    return MetricScore("faithfulness", 0.5, verdicts=[{"claim": c, "verdict": v} for c, v in claims])


def test_a_paraphrased_claim_is_located_in_the_answer_and_its_support_in_the_context():
    view = claim_view(SAMPLE, faithfulness(("The Octopus card launched in 1997", "supported")))
    (claim,) = view.claims
    assert cut(ANSWER, claim.located) == "Octopus card was launched in 1997"
    assert claim.evidence.field == "context:0"
    assert cut(CONTEXTS[0], claim.evidence) == "Launched in September 1997, it was the second contactless card system."


def test_an_unsupported_claim_is_located_without_evidence():
    (claim,) = claim_view(SAMPLE, faithfulness(("The card costs 50 dollars", "unsupported"))).claims
    assert not claim.positive and claim.evidence is None
    assert cut(ANSWER, claim.located) == "costs 50 dollars"


@pytest.mark.parametrize("claim", ["The moon is made of cheese", "Trams run in 1997", ""])
def test_a_claim_the_text_does_not_hold_is_not_located(claim):
    assert locate(claim, ANSWER, "answer") is None


def test_a_word_the_stemmer_misses_is_matched_closely():
    where = locate("the colour is grey", "The color of the tram is grey.", "answer")
    assert cut("The color of the tram is grey.", where) == "color of the tram is grey"


def test_scattered_words_mark_the_whole_sentence():
    text = "Paris, which many visitors to France see first among all the cities there, is large."
    where = locate("Paris is large", text, "answer")
    assert (where.start, where.end) == (0, len(text))


def test_context_precision_marks_each_context_by_its_verdict():
    ms = MetricScore("context_precision", 0.5, verdicts=[{"index": 1, "verdict": "useful", "reason": "launch"},
                                                         {"index": 2, "verdict": "not useful", "reason": "trams"}])
    view = claim_view(SAMPLE, ms)
    assert view.context_verdicts == (True, False)
    page = sample_html(SAMPLE, [view])
    assert 'class="ctx useful"><strong>Context 1 (useful)' in page
    assert 'class="ctx useless"><strong>Context 2 (not useful)' in page


def test_context_recall_locates_reference_statements_and_where_they_were_found():
    ms = MetricScore("context_recall", 1.0, verdicts=[{"statement": "It launched in 1997", "attributed": True}])
    (claim,) = claim_view(SAMPLE, ms).claims
    assert claim.located.field == "reference" and cut(SAMPLE.ground_truth, claim.located) == "launched in 1997"
    assert claim.evidence.field == "context:0"


def test_offline_faithfulness_names_the_words_found_in_no_context():
    view = claim_view(SAMPLE, MetricScore("faithfulness", 0.6, method="offline"))
    assert view.source == "heuristic"
    words = [c.text for c in view.claims if c.kind == "word"]
    assert words == ["costs", "50", "dollars"]
    sentences = [c for c in view.claims if c.kind == "claim"]
    assert [c.text for c in sentences] == ["The Octopus card was launched in 1997 in Hong Kong.", "It costs 50 dollars."]


def test_offline_views_for_precision_and_recall_and_none_for_relevancy():
    scores = {m: MetricScore(m, 0.5, method="offline") for m in
              ("faithfulness", "answer_relevancy", "context_precision", "context_recall")}
    views = claim_views(SAMPLE, scores)
    assert [v.metric for v in views] == ["faithfulness", "context_precision", "context_recall"]
    precision = views[1]
    assert precision.context_verdicts[0] is True


def test_skipped_scores_have_no_view():
    assert claim_view(SAMPLE, MetricScore("faithfulness", 0.0, skipped=True)) is None


class _Text(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text, self.marks = [], [], []
        self._in_mark = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_mark = tag == "mark"

    def handle_endtag(self, tag):
        self._in_mark = False if tag == "mark" else self._in_mark

    def handle_data(self, data):
        self.text.append(data)
        if self._in_mark:
            self.marks.append(data)


def parse(page):
    parser = _Text()
    parser.feed(page)
    return parser


def test_marked_text_is_escaped_and_keeps_every_character():
    text = '<script>alert(1)</script> "Paris" & <b>Lyon</b>'
    page = marked(text, [(26, 33, "ok", 'x" onmouseover="1')])
    assert "<script>" not in page and "<b>" not in page and 'onmouseover="1"' not in page
    parsed = parse(page)
    assert "".join(parsed.text) == text
    assert parsed.marks == ['"Paris"']
    assert [t for t, _ in parsed.tags] == ["mark"]


def test_overlapping_marks_keep_the_first():
    assert marked("abcdef", [(0, 4, "ok", "a"), (2, 6, "bad", "b")]).count("<mark") == 1


def test_hostile_claims_and_contexts_are_escaped_in_the_page():
    evil = '<img src=x onerror=alert(1)>'
    sample = EvalSample("q", f"Paris {evil}.", [f"Paris is big {evil}."])
    page = sample_html(sample, [claim_view(sample, faithfulness((f"Paris {evil}", "supported")))])
    assert evil not in page and escape(evil) in page
    assert {t for t, _ in parse(page).tags} <= {"style", "div", "strong", "mark", "p", "ol", "li", "bdi", "span"}


ARABIC = EvalSample("متى أُطلقت بطاقة أوكتوبس؟", "أُطلقت بطاقة أوكتوبس عام ١٩٩٧ في هونغ كونغ.",
                    ["بطاقة أوكتوبس بطاقة ذكية أُطلقت عام ١٩٩٧ في هونغ كونغ."])


def test_an_arabic_claim_without_diacritics_is_located_in_text_with_them():
    view = claim_view(ARABIC, faithfulness(("اطلقت بطاقة اوكتوبس عام 1997", "supported")))
    (claim,) = view.claims
    assert cut(ARABIC.answer, claim.located) == "أُطلقت بطاقة أوكتوبس عام ١٩٩٧"
    assert claim.evidence.field == "context:0"


def test_arabic_blocks_read_right_to_left():
    page = sample_html(ARABIC, [claim_view(ARABIC, faithfulness(("اطلقت بطاقة اوكتوبس عام 1997", "supported")))])
    blocks = [a.get("dir") for t, a in parse(page).tags if t == "div" and "dir" in a]
    assert blocks == ["rtl", "rtl"]
    assert '<mark class="ok" title="faithfulness 1: supported">أُطلقت بطاقة أوكتوبس عام ١٩٩٧</mark>' in page
    assert direction("Paris") == "auto"


def test_support_picks_the_sentence_holding_most_of_the_claim():
    where = support("second contactless system", [("context:0", CONTEXTS[0]), ("context:1", CONTEXTS[1])])
    assert cut(CONTEXTS[0], where).startswith("Launched in September")


def test_the_html_report_shows_the_claims_on_the_text():
    from evaluator.report.export import html_report
    from evaluator.model import EvalReport, EvalResult

    ms = faithfulness(("The Octopus card launched in 1997", "supported"), ("The card costs 50 dollars", "unsupported"))
    page = html_report(EvalReport([EvalResult("s1", sample=SAMPLE, scores={"faithfulness": ms})]), use_vl_convert=False)
    assert "<summary>Claims on the text</summary>" in page
    assert '<mark class="ok" title="faithfulness 1: supported">Octopus card was launched in 1997</mark>' in page
    assert '<mark class="bad" title="faithfulness 2: unsupported">costs 50 dollars</mark>' in page
    assert "mark.evidence{" in page
