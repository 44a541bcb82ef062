"""The HTML report escapes all dataset and judge text: script payloads load in real Chromium as
visible text and never run.

The report also carries a Content-Security-Policy that forbids scripts. That would hide an
escaping bug from a "did a script run?" check, so each test is run twice: once as written (both
defences) and once with the CSP removed (escaping alone must hold). Both also inspect the DOM: no
<script> element and no event-handler attribute may exist at all.
"""
from __future__ import annotations

import re
from dataclasses import replace

import pytest

from evaluator import EvalReport, EvalSample, OfflineJudge, RAGEvaluator
from evaluator.report.export import html_report

pytestmark = pytest.mark.browser

PAYLOADS = (
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=1">',
    "</style><script>window.__pwned=1</script>",
    '"><svg onload=window.__pwned=1>',
)
CSP_META = re.compile(r'<meta http-equiv="Content-Security-Policy"[^>]*>')
# Every attribute whose name starts with "on" anywhere in the document (an event handler).
HANDLERS_JS = """() => [...document.querySelectorAll('*')].flatMap(
    el => [...el.attributes].filter(a => a.name.toLowerCase().startsWith('on'))
          .map(a => el.tagName + ' ' + a.name))"""


def _hostile_sample(i: int, payload: str) -> EvalSample:
    return EvalSample(
        question=f"Question {i} {payload}",
        answer=f"Answer {i} {payload}",
        contexts=[f"Context {i}a {payload}", f"Context {i}b {payload}"],
        ground_truth=f"Reference {i} {payload}",
        sample_id=f"id-{i}-{payload}",
        category=f"cat-{i} {payload}",
    )


def _poison_scores(result, payload: str):
    """The judge's text is untrusted too: put the payload in every reasoning, raw reply and error."""
    for name, ms in result.metric_scores().items():
        poisoned = replace(ms, reasoning=f"{ms.reasoning} {payload}", raw_reply=f'{{"reasoning": "{payload}"}}',
                           error=f"judge said {payload}")
        result.scores[name] = poisoned
    return result


@pytest.fixture(scope="module")
def hostile_report() -> EvalReport:
    evaluator = RAGEvaluator(OfflineJudge())
    samples = [_hostile_sample(i, p) for i, p in enumerate(PAYLOADS)]
    report = evaluator.evaluate_dataset(samples)
    report.results = [_poison_scores(r, p) for r, p in zip(report.results, PAYLOADS)]
    return report


def _render(report: EvalReport, use_vl_convert: bool) -> str:
    payload = PAYLOADS[0]
    return html_report(report, title=f"Report {payload}", dataset_name=f"data {PAYLOADS[1]}.csv",
                       settings={"judge": f"offline {PAYLOADS[2]}", "note": PAYLOADS[3]},
                       use_vl_convert=use_vl_convert)


@pytest.mark.parametrize("use_vl_convert", [True, False], ids=["vl-convert-charts", "fallback-charts"])
@pytest.mark.parametrize("keep_csp", [True, False], ids=["with-csp", "escaping-only"])
def test_payloads_display_as_text_and_never_run(hostile_report, page, tmp_path, artifacts_dir,
                                                keep_csp, use_vl_convert):
    html = _render(hostile_report, use_vl_convert)
    assert len(CSP_META.findall(html)) == 1, "the report must carry its script-forbidding CSP"
    if not keep_csp:
        html = CSP_META.sub("", html)
    path = tmp_path / "report.html"
    path.write_text(html, encoding="utf-8")

    dialogs, console = [], []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("console", lambda m: console.append(m.text))
    page.on("pageerror", lambda e: console.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")

    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert dialogs == []
    assert page.evaluate("document.querySelectorAll('script').length") == 0
    assert page.evaluate(HANDLERS_JS) == []
    # Chromium logs a CSP violation when a blocked script or load was attempted: there must be none.
    assert not [m for m in console if "Content Security Policy" in m or "Refused" in m], console
    assert page.title() == f"Report {PAYLOADS[0]}"

    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    text = page.inner_text("body")
    for payload in PAYLOADS:
        for shown_as in ("Question", "Answer", "Context", "Reference", "cat-", "judge said"):
            assert any(f"{shown_as}" in line and payload in line for line in text.splitlines()), \
                f"{shown_as!r} with {payload!r} not shown as text"
    assert f"data {PAYLOADS[1]}.csv" in text
    # The </style> payload must not have ended the stylesheet: the page is still styled.
    assert page.evaluate("getComputedStyle(document.querySelector('.card')).borderTopStyle") == "solid"
    variant = f"{'csp' if keep_csp else 'nocsp'}-{'vl' if use_vl_convert else 'fallback'}"
    page.screenshot(path=str(artifacts_dir / f"html_report_xss-{variant}.png"), full_page=True)
