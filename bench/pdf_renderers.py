"""Which renderer writes the one-page PDF summary (issue 40): seconds, MB of dependencies, and whether Arabic
comes out right to left, for each candidate that is importable, side by side.

    python bench/pdf_renderers.py [--repeats 3] [--json out.json]

Candidates: vl-convert (already a dependency: the PNG/SVG charts), fpdf2 (pure Python; right-to-left needs
its text shaping, i.e. the uharfbuzz wheel), reportlab (no shaping or bidi of its own). To measure one that
is not installed here, install it into a scratch virtualenv and put its site-packages on PYTHONPATH; never into
the project's environment. Each renders the same page (a title, an Arabic question, a score line) and pypdf
reads it back in layout mode, which gives each line's glyphs from left to right as drawn: a right-to-left line
laid out correctly reads back reversed; one drawn left to right in typing order reads back as typed (wrong).
"""
from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Callable, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TITLE = "ragmeter report: support.jsonl"
ARABIC = "ما هي سياسة الاسترداد في المتجر"
SCORE = "Overall score 0.812 · 120/120 rows scored"
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"  # has Arabic glyphs (fonts-dejavu-core)
PACKAGES = {"vl-convert": ["vl-convert-python"], "fpdf2": ["fpdf2", "fonttools", "defusedxml", "pillow"],
            "fpdf2 + uharfbuzz": ["fpdf2", "fonttools", "defusedxml", "pillow", "uharfbuzz"],
            "reportlab": ["reportlab", "pillow", "charset-normalizer"]}


def with_vl_convert() -> bytes:
    from evaluator.analysis.charts import chart_pdf
    from evaluator.report.pdf import text_block

    spec = {"$schema": "https://vega.github.io/schema/vega-lite/v5.json",
            "vconcat": [text_block(TITLE, [(SCORE, False), (ARABIC, True)])]}
    return chart_pdf(spec)


def _fpdf(shaping: bool) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.add_font("dejavu", fname=FONT)
    pdf.set_font("dejavu", size=12)
    if shaping:
        pdf.set_text_shaping(True)  # needs uharfbuzz
    for line in (TITLE, SCORE, ARABIC):
        pdf.cell(0, 10, line, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def with_reportlab() -> bytes:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdfmetrics.registerFont(TTFont("dejavu", FONT))
    page = canvas.Canvas(out)
    page.setFont("dejavu", 12)
    for i, line in enumerate((TITLE, SCORE, ARABIC)):
        page.drawString(40, 800 - 20 * i, line)
    page.save()
    return out.getvalue()


RENDERERS: Dict[str, Callable[[], bytes]] = {
    "vl-convert": with_vl_convert, "fpdf2": lambda: _fpdf(False), "fpdf2 + uharfbuzz": lambda: _fpdf(True),
    "reportlab": with_reportlab,
}


def mb_of(names: List[str]) -> Optional[float]:
    """Installed size of the distributions (None when one is missing)."""
    total = 0
    for name in names:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            return None
        total += sum((f.size or 0) for f in dist.files or [] if f.size)
    return round(total / 1e6, 1)


def rtl_right(data: bytes) -> str:
    from pypdf import PdfReader

    text = " ".join(p.extract_text(extraction_mode="layout") for p in PdfReader(io.BytesIO(data)).pages)
    if ARABIC[::-1][:4] in text:  # the line's last word drawn leftmost
        return "yes"
    return "NO (drawn left to right)" if ARABIC[:12] in text else "NO (text lost)"


def measure(name: str, repeats: int) -> Dict[str, object]:
    render = RENDERERS[name]
    try:
        t0 = time.perf_counter()
        data = render()
        first = time.perf_counter() - t0
    except Exception as exc:  # not installed, or it cannot do this at all: say which
        return {"renderer": name, "status": f"unavailable: {type(exc).__name__}: {str(exc).splitlines()[0][:80]}"}
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        render()
        times.append(time.perf_counter() - t0)
    return {"renderer": name, "status": "ok", "first_s": round(first, 2), "median_s": round(statistics.median(times), 3),
            "deps_mb": mb_of(PACKAGES[name]), "pdf_kb": round(len(data) / 1024, 1), "rtl_right": rtl_right(data)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows = [measure(name, args.repeats) for name in RENDERERS]
    print(f"{'renderer':<20}{'first s':>9}{'median s':>10}{'deps MB':>9}{'PDF kB':>8}  RTL right")
    for r in rows:
        if r["status"] != "ok":
            print(f"{r['renderer']:<20}  {r['status']}")
            continue
        deps = "?" if r["deps_mb"] is None else r["deps_mb"]
        print(f"{r['renderer']:<20}{r['first_s']:>9}{r['median_s']:>10}{deps:>9}{r['pdf_kb']:>8}  {r['rtl_right']}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
