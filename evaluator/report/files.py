"""A run's CSV, JSON and Parquet files (its Excel workbook: xlsx.py) written from rows that stream past (issue 28: a run is never held whole
to be written): the one writer of each, for a report in memory (export.results_csv, results_json) as for a
stored run read from the history a page at a time (the CLI's -o, the Report's downloads).

The figures that head the JSON are the run's summary's (analysis/summary.py), not recomputed from the rows;
Parquet is written a row group per page. Every value goes through the guards: `redact_value` over each row
and record, `sanitize_settings` over the settings, the CSV formula guard on every cell.
"""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, TextIO, Tuple

from ..analysis.summary import RunSummary
from ..io.filetypes import write_csv_rows
from ..io.records import column_names, flat_row, result_from_record, result_to_record
from ..io.redact import redact_value, redacted_json, sanitize_settings
from ..model import EvalResult
from ..scoring.verdict import from_decision

JSON_FORMAT = "ragmeter-results"
JSON_VERSION = 1

Rows = Callable[[], Iterator[Tuple[int, EvalResult]]]  # a fresh pass over (index, result), in index order


def reasoning_columns(names: Sequence[str]) -> List[str]:
    """The reasoning column of every metric column, <metric>_reasoning, after all of flat_row's columns."""
    return [f"{name}_reasoning" for name in column_names(names)]


def reasoned_row(result: EvalResult, names: Sequence[str]) -> Dict[str, Any]:
    """records.flat_row and each metric's reasoning (the judge's words, or why it was skipped), redacted: a row of
    the CSV and of the Excel workbook's Samples sheet."""
    row = flat_row(result, names)
    for name in column_names(names):
        score = result.scores.get(name)
        row[f"{name}_reasoning"] = (score.reasoning or score.error or "") if score is not None else None
    return {k: redact_value(v) for k, v in row.items()}


def write_csv(f: TextIO, rows: Iterable[Tuple[int, EvalResult]], names: Any) -> None:
    """export.results_csv's text, a row at a time (open `f` with newline=""; with encoding "utf-8-sig" for
    Excel, which reads a file without the byte-order mark in the locale's code page and garbles Arabic)."""
    write_csv_rows(f, (reasoned_row(result, names) for _, result in rows),
                   empty=list(flat_row(EvalResult(None), names)) + reasoning_columns(names))


def write_parquet(path: Path, rows: Iterable[Tuple[int, EvalResult]], names: Any) -> None:
    """export.results_parquet's file (io/frames.py's columns and schema), a row group per page of rows."""
    from ..io.frames import ParquetSink, results_frame

    with ParquetSink(path, names) as sink:
        for page in _pages(rows):
            sink.write(results_frame([(i, redacted(r, i)) for i, r in page], names))


def _pages(rows: Iterable[Tuple[int, EvalResult]], size: int = 1_000) -> Iterator[List[Tuple[int, EvalResult]]]:
    page: List[Tuple[int, EvalResult]] = []
    for pair in rows:
        page.append(pair)
        if len(page) == size:
            yield page
            page = []
    if page:
        yield page


def redacted(result: EvalResult, index: int = 0) -> EvalResult:
    """`result` with `redact_value` over all of its text (through its lossless record form)."""
    return result_from_record(redact_value(result_to_record(result, index)))


def csv_bytes(rows: Iterable[Tuple[int, EvalResult]], names: Any, *, bom: bool = True) -> bytes:
    """The CSV as bytes (a dashboard download: the file's text, never the run's rows, held at once), with the
    UTF-8 byte-order mark Excel needs to read it as UTF-8 unless `bom=False`."""
    out = io.StringIO(newline="")
    write_csv(out, rows, names)
    return out.getvalue().encode("utf-8-sig" if bom else "utf-8")


def parquet_bytes(rows: Iterable[Tuple[int, EvalResult]], names: Any) -> bytes:
    """The Parquet file's bytes, written a page at a time through a temporary file (a dashboard download)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="ragmeter-") as tmp:
        path = Path(tmp) / "results.parquet"
        write_parquet(path, rows, names)
        return path.read_bytes()


def json_bytes(rows: Rows, summary: RunSummary, settings: Mapping[str, Any]) -> bytes:
    out = io.StringIO()
    write_json(out, rows, summary, settings)
    return out.getvalue().encode("utf-8")


def json_head(summary: RunSummary, settings: Mapping[str, Any]) -> Dict[str, Any]:
    """export.results_json's figures (EvalReport.to_dict's, the settings, noise, verdict) from the summary."""
    metrics = summary.metrics
    means = summary.decision.means
    head: Dict[str, Any] = {
        "num_samples": summary.n_rows,
        "total_time_s": round(summary.total_time, 4),
        "mean_scores": {m.name: means.get(m.name) for m in metrics},
        "std_scores": {m.name: m.std for m in metrics},
        "overall_mean": summary.overall_mean,
    }
    if summary.usage:
        head["usage"] = sanitize_settings(dict(summary.usage))
    if summary.target is not None:
        head["target"] = summary.target_dict()
    if summary.conversations:
        turns = summary.turns
        head.update(kind="conversations", num_conversations=head["num_samples"],
                    num_turns_scored=summary.n_turns,
                    means_over="mean_scores: over conversations (each conversation's turn mean); "
                               "turn_mean_scores: over every assistant turn",
                    turn_mean_scores={m: t.mean for m, t in turns.items()},
                    turn_scored={m: f"{t.scored}/{t.total}" for m, t in turns.items()})
    head["format"], head["version"] = JSON_FORMAT, JSON_VERSION
    head["settings"] = sanitize_settings(dict(settings))
    if summary.noise:
        head["judge_noise"] = [n.to_dict() for n in summary.noise]
    head["verdict"] = from_decision(summary.decision.to_dict()).to_dict()
    return redact_value(head)


def write_json(f: TextIO, rows: Rows, summary: RunSummary, settings: Mapping[str, Any]) -> None:
    """export.results_json's document: its figures, then each row's dict and each row's record, one at a time
    (two passes over `rows`)."""
    head = json_head(summary, settings)
    listed = "conversations" if summary.conversations else "samples"
    f.write(json.dumps(head, ensure_ascii=False, default=str)[:-1])
    for key, item in ((listed, lambda i, r: r.to_dict()), ("records", lambda i, r: result_to_record(r, i))):
        f.write(f', "{key}": [')
        for n, (i, result) in enumerate(rows()):
            f.write(("," if n else "") + redacted_json(item(i, result)))
        f.write("]")
    f.write("}")
