"""Claim views as HTML: the sample's text, escaped, with <mark> elements where claims sit.

Every character of user text goes through html.escape (quotes included) before any tag is
added, so the output is safe for the HTML report and for the dashboard's st.html. Each text
block carries dir="rtl" when it is Arabic, else dir="auto", so right-to-left text reads in order;
claims in lists sit in <bdi> so a mixed list keeps its punctuation where it belongs.

Mark classes: "ok" (a supported claim / a found statement), "bad" (unsupported, not found),
"evidence" (the context sentence that supports a claim), "word" (a heuristic's unsupported word).
"""
from __future__ import annotations

import html
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from ..model import EvalSample
from ..text import detect_language
from .claims import ANSWER, REFERENCE, Claim, ClaimView, Where, context_field

CSS = """
.rm-claims mark{padding:0 .1em;border-radius:.2em}
.rm-claims mark.ok{background:#c8f7c5}.rm-claims mark.bad{background:#ffc9c9}
.rm-claims mark.evidence{background:#fff3a3}.rm-claims mark.word{background:#ffc9c9;text-decoration:underline}
.rm-claims .ctx.useful{border-left:4px solid #2e9e44}.rm-claims .ctx.useless{border-left:4px solid #c92a2a}
.rm-claims .ctx{padding-left:.5em;margin:.3em 0}.rm-claims .lost{color:#868e96}
"""
STYLE = f"<style>{CSS}</style>"

# (start, end, css class, title) of one mark
Mark = Tuple[int, int, str, str]


def direction(text: str) -> str:
    """The dir attribute for a text block: "rtl" for Arabic, else "auto"."""
    return "rtl" if detect_language(text or "") == "ar" else "auto"


def marked(text: str, marks: Iterable[Mark]) -> str:
    """`text` escaped, with each mark as <mark class=… title=…>; a mark overlapping an earlier one is dropped."""
    text = text or ""
    out: List[str] = []
    pos = 0
    for start, end, css, title in sorted(marks, key=lambda m: (m[0], -m[1])):
        if start < pos or end <= start or end > len(text):
            continue
        out.append(html.escape(text[pos:start]))
        out.append(f'<mark class="{css}" title="{html.escape(title)}">{html.escape(text[start:end])}</mark>')
        pos = end
    out.append(html.escape(text[pos:]))
    return "".join(out)


def field_marks(views: Sequence[ClaimView]) -> Dict[str, List[Mark]]:
    """Field name -> its marks, from every claim's location and evidence."""
    out: Dict[str, List[Mark]] = {}

    def add(where: Optional[Where], css: str, title: str) -> None:
        if where is not None:
            out.setdefault(where.field, []).append((where.start, where.end, css, title))

    for view in views:
        for n, claim in enumerate(view.claims, 1):
            label = f"{view.metric} {n}: {claim.verdict}"
            css = "word" if claim.kind == "word" else ("ok" if claim.positive else "bad")
            add(claim.located, css, label)
            add(claim.evidence, "evidence", f"supports {label}")
    return out


def _block(label: str, text: str, marks: List[Mark], css: str = "") -> str:
    cls = f' class="{css}"' if css else ""
    return (f'<div{cls}><strong>{html.escape(label)}</strong>'
            f'<div dir="{direction(text)}">{marked(text, marks)}</div></div>')


def _claim_item(claim: Claim) -> str:
    where = "" if claim.kind in ("context", "word") or claim.located else ' <span class="lost">(not located)</span>'
    verdict = html.escape(claim.verdict)
    return f'<li><bdi dir="auto">{html.escape(claim.text)}</bdi> — {verdict}{where}</li>'


def _claim_list(view: ClaimView) -> str:
    items = [c for c in view.claims if c.kind != "word"]
    words = [c.text for c in view.claims if c.kind == "word"]
    source = "judge" if view.source == "judge" else "heuristic evidence"
    parts = [f"<p><strong>{html.escape(view.metric)}</strong> ({source})</p>"]
    if view.note:
        parts.append(f"<p>{html.escape(view.note)}</p>")
    parts.append("<ol>" + "".join(_claim_item(c) for c in items) + "</ol>")
    if words:
        shown = ", ".join(html.escape(w) for w in dict.fromkeys(words))
        parts.append(f'<p>Words found in no context: <bdi dir="auto">{shown}</bdi></p>')
    return "".join(parts)


def _usefulness(views: Sequence[ClaimView], index: int) -> Optional[bool]:
    for view in views:
        if index < len(view.context_verdicts) and view.context_verdicts[index] is not None:
            return view.context_verdicts[index]
    return None


def sample_html(sample: EvalSample, views: Sequence[ClaimView], *, style: bool = True) -> str:
    """The answer, reference and contexts with every view's claims marked, then each view's claim list."""
    marks = field_marks(views)
    parts = [STYLE if style else "", '<div class="rm-claims">']
    parts.append(_block("Answer", sample.answer, marks.get(ANSWER, [])))
    if sample.ground_truth:
        parts.append(_block("Reference", sample.ground_truth, marks.get(REFERENCE, [])))
    for i, ctx in enumerate(sample.contexts or []):
        useful = _usefulness(views, i)
        css = "ctx" + ("" if useful is None else (" useful" if useful else " useless"))
        tag = "" if useful is None else (" (useful)" if useful else " (not useful)")
        parts.append(_block(f"Context {i + 1}{tag}", ctx, marks.get(context_field(i), []), css))
    parts.extend(_claim_list(v) for v in views)
    parts.append("</div>")
    return "".join(parts)
