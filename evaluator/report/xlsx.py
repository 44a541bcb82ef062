"""A run as an Excel workbook (`-o results.xlsx`, the Report's Excel download), for a stakeholder who opens it.

Two sheets. Summary: the run (its name, dataset, date, data version, judge, run id and ragmeter version: a
workbook forwarded alone still says which run it is; report/header.py), samples, time, each metric's mean ± std, its 95% CI, its band
and how many samples it scored, the overall mean, and what to improve (analysis/advice.py) for each metric
under the threshold, then the run's notes. Samples: one row per sample, the CSV's columns (records.flat_row) and a reasoning
column per metric beside them; the header frozen, filters on, a row whose question or answer is in an
Arabic, Hebrew, Persian or Urdu script set right-to-left.

Written with openpyxl's write-only workbook, a row at a time, so a stored run streams from the history a
page at a time (never held whole). Every value goes through `redact_value`; text is written as text (never a
formula, whatever it starts with), characters XML cannot hold are replaced (safetext.drawable), bidirectional
controls dropped, and a cell is cut at Excel's
32,767 characters with a marker.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, BinaryIO, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from ..analysis.summary import RunSummary
from ..analysis.advice import recommendations
from ..analysis.bands import band
from ..errors import MissingExtra
from ..io.records import flat_row
from ..io.redact import redact_value, sanitize_settings
from ..model import EvalResult
from ..safetext import drawable
from .files import reasoned_row, reasoning_columns
from .header import RunHeader

MAX_CELL = 32_767  # Excel's limit on the characters of one cell
CUT = " […cut: the full text is in the JSON report]"
_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")  # Hebrew, Arabic (and its supplements), Syriac, Thaana
_WIDTHS = {"question": 50, "answer": 60, "ground_truth": 40, "contexts": 60}


def has_rtl(*texts: Any) -> bool:
    """Whether any of the texts holds right-to-left script (the row is then shown right to left)."""
    return any(isinstance(t, str) and _RTL.search(t) is not None for t in texts)


def _openpyxl() -> Any:
    try:
        import openpyxl
    except ImportError:
        raise MissingExtra("writing Excel needs openpyxl: pip install 'ragmeter[excel]'") from None
    return openpyxl


def _text(value: Any) -> Any:
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

    if not isinstance(value, str):
        return value
    value = ILLEGAL_CHARACTERS_RE.sub("", drawable(value))  # no bidi control either: "gpj.evil" is not "live.jpg"
    return value if len(value) <= MAX_CELL else value[:MAX_CELL - len(CUT)] + CUT


def _cell(ws: Any, value: Any, style: Dict[str, Any]) -> Any:
    from openpyxl.cell import WriteOnlyCell

    cell = WriteOnlyCell(ws, value=_text(value))
    if isinstance(value, str):
        cell.data_type = "s"  # text stays text: "=cmd()" is shown, never run
    for key, item in style.items():
        setattr(cell, key, item)
    return cell


def write_xlsx(target: Union[str, Path, BinaryIO], rows: Iterable[Tuple[int, EvalResult]],
               summary: RunSummary, *, settings: Mapping[str, Any], dataset: str,
               header: Optional[RunHeader] = None) -> None:
    """The workbook to `target` (a path or a binary file): Summary, then Samples from `rows` (one pass). Without
    `header` the run is named by its dataset, with no date, run id or notes (a run that was not saved)."""
    openpyxl = _openpyxl()
    book = openpyxl.Workbook(write_only=True)
    header = header or RunHeader.of(title="", dataset=dataset, settings=settings, summary=summary, date="",
                                    run_id="")
    _summary_sheet(book.create_sheet("Summary"), summary, settings, header)
    _samples_sheet(book.create_sheet("Samples"), rows, list(summary.metric_names))
    book.save(target)


def _summary_sheet(ws: Any, summary: RunSummary, settings: Mapping[str, Any], header: RunHeader) -> None:
    from openpyxl.styles import Font

    bold = {"font": Font(bold=True)}
    ws.column_dimensions["A"].width = 28
    for letter in "BCDEFG":
        ws.column_dimensions[letter].width = 18
    for line in _summary_lines(summary, settings, header):
        head = line and isinstance(line[0], str) and line[0].isupper() and len(line) == 1
        ws.append([_cell(ws, v, bold if head else {}) for v in line])


def _summary_lines(summary: RunSummary, settings: Mapping[str, Any], header: RunHeader) -> Iterator[List[Any]]:
    clean = sanitize_settings(dict(settings))
    yield ["RUN"]
    for label, value in header.rows():
        yield [label, str(redact_value(value))]
    yield ["Samples", summary.n_rows]
    yield ["Total time (s)", round(summary.total_time, 2)]
    for key, label in (("model", "Model"), ("judge", "Judge setting"), ("engine", "Engine")):
        if clean.get(key) not in (None, ""):
            yield [label, str(redact_value(clean[key]))]
    if summary.judge_status:
        yield ["Judge status", str(redact_value(summary.judge_status))]
    yield []
    yield ["METRICS"]
    yield ["Metric", "Mean", "Std", "95% CI low", "95% CI high", "Band", "Scored"]
    means: Dict[str, Any] = {}
    for m in summary.metrics:
        means[m.name] = m.mean
        yield [m.name, m.mean, m.std, m.ci_low, m.ci_high, band(m.mean) if m.mean is not None else "N/A",
               f"{m.n_scored}/{m.n_total}"]
    overall = summary.overall_mean
    yield ["overall", overall, None, None, None, band(overall) if overall is not None else "N/A",
           f"{summary.n_overall}/{summary.n_rows}"]
    advice = recommendations(means)
    yield []
    yield ["WHAT TO IMPROVE"]
    if not advice:
        yield ["Every metric with a mean is at or above 0.7 (Good)."]
    for item in advice:
        yield [item.metric, round(item.score, 3), item.band, item.diagnosis]
        for action in item.actions:
            yield ["", "", "", "• " + action]
    yield []
    yield ["NOTES"]
    if not header.notes:
        yield ["No notes on this run."]
    for head, text in header.notes:
        yield [str(redact_value(head)), str(redact_value(text))]


def _samples_sheet(ws: Any, rows: Iterable[Tuple[int, EvalResult]], names: Sequence[str]) -> None:
    from openpyxl.styles import Alignment, Font

    columns = list(flat_row(EvalResult(None), names)) + reasoning_columns(names)
    for i, column in enumerate(columns, 1):
        ws.column_dimensions[_letter(i)].width = _WIDTHS.get(column, 42 if column.endswith("_reasoning") else 14)
    ws.freeze_panes = "A2"
    ws.append([_cell(ws, c, {"font": Font(bold=True)}) for c in columns])
    rtl = {"alignment": Alignment(horizontal="right", readingOrder=2, wrap_text=True, vertical="top")}
    ltr = {"alignment": Alignment(wrap_text=True, vertical="top")}
    count = 0
    for _, result in rows:
        row = reasoned_row(result, names)
        style = rtl if has_rtl(row.get("question"), row.get("answer")) else ltr
        ws.append([_cell(ws, row.get(c), style) for c in columns])
        count += 1
    ws.auto_filter.ref = f"A1:{_letter(len(columns))}{count + 1}"


def _letter(index: int) -> str:
    from openpyxl.utils import get_column_letter

    return str(get_column_letter(index))


def xlsx_bytes(rows: Iterable[Tuple[int, EvalResult]], summary: RunSummary, *,
               settings: Mapping[str, Any], dataset: str, header: Optional[RunHeader] = None) -> bytes:
    """The workbook's bytes (the dashboard's Excel download)."""
    import io

    out = io.BytesIO()
    write_xlsx(out, rows, summary, settings=settings, dataset=dataset, header=header)
    return out.getvalue()

