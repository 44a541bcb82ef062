"""Results as a table: one row per sample, every metric's details in columns, and Parquet files.

This is the form the distributed engines exchange (`score_frame` returns it; Ray streams it to
Parquet) and the form `results_parquet` exports. It is lossless: `results_from_frame` gives back
the results that `results_frame` was made from, sample text included.

Columns, in order:
    index, sample_id, category, question, answer, contexts (list), ground_truth,
    expected_answer_keywords (list), expected_docs (list), metadata (JSON text), overall, elapsed_sec,
    then per metric M (the five judged ones, then the rule-based ones):
    M (score; null when skipped or absent), M_method (null when the metric is absent for the sample),
    M_llm_score, M_heuristic_score, M_reasoning, M_error, M_raw_reply, M_verdicts (JSON text),
    then the judge usage of the row: judge_calls, cache_hits, prompt_tokens, completion_tokens,
    judge_retries, judge_failures (summing a column gives the run's total).

pandas and pyarrow are imported on first use: the core library needs neither.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

from ..errors import MissingExtra
from ..model import METRICS, RULE_METRICS, EvalResult, EvalSample, MetricScore
from .records import sample_from_record

ALL_METRICS = METRICS + RULE_METRICS
SAMPLE_COLUMNS = ("index", "sample_id", "category", "question", "answer", "contexts", "ground_truth",
                  "expected_answer_keywords", "expected_docs", "metadata")
METRIC_PARTS = ("method", "llm_score", "heuristic_score", "reasoning", "error", "raw_reply", "verdicts")
USAGE_COLUMNS = ("judge_calls", "cache_hits", "prompt_tokens", "completion_tokens", "judge_retries",
                 "judge_failures")
_LIST_COLUMNS = ("contexts", "expected_answer_keywords", "expected_docs")
_FLOAT_PARTS = ("llm_score", "heuristic_score")


def result_columns() -> List[str]:
    """Every column of a results frame, in order."""
    columns = list(SAMPLE_COLUMNS) + ["overall", "elapsed_sec"]
    for name in ALL_METRICS:
        columns += [name] + [f"{name}_{part}" for part in METRIC_PARTS]
    return columns + list(USAGE_COLUMNS)


def _need(module: str) -> Any:
    from importlib import import_module

    try:
        return import_module(module)
    except ImportError:
        raise MissingExtra(f"Parquet and data frames need pandas and pyarrow: "
                                 f"pip install 'ragmeter[parquet]' (no module {module!r})") from None


# -- results -> rows ------------------------------------------------------------------------------
def _metric_cells(name: str, ms: Optional[MetricScore]) -> Dict[str, Any]:
    if ms is None:
        return {name: None, **{f"{name}_{part}": None for part in METRIC_PARTS}}
    return {
        name: None if ms.skipped else float(ms.score),
        f"{name}_method": ms.method,
        f"{name}_llm_score": ms.llm_score,
        f"{name}_heuristic_score": ms.heuristic_score,
        f"{name}_reasoning": ms.reasoning,
        f"{name}_error": ms.error,
        f"{name}_raw_reply": ms.raw_reply,
        f"{name}_verdicts": json.dumps(ms.verdicts, ensure_ascii=False) if ms.verdicts else None,
    }


def result_row(index: int, result: EvalResult, usage: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
    """One result as a results-frame row (see the module docstring)."""
    s = result.sample or EvalSample("", "", [])
    row: Dict[str, Any] = {
        "index": index, "sample_id": result.sample_id, "category": s.category, "question": s.question,
        "answer": s.answer, "contexts": list(s.contexts), "ground_truth": s.ground_truth,
        "expected_answer_keywords": s.expected_answer_keywords, "expected_docs": s.expected_docs,
        "metadata": json.dumps(s.metadata or {}, ensure_ascii=False),
        "overall": result.overall(), "elapsed_sec": float(result.elapsed_sec),
    }
    scores = result.metric_scores()
    for name in ALL_METRICS:
        row.update(_metric_cells(name, scores.get(name)))
    row.update({column: int((usage or {}).get(column, 0)) for column in USAGE_COLUMNS})
    return row


def results_frame(results: Iterable[Tuple[int, EvalResult]]) -> Any:
    """A pandas DataFrame with one row per (index, result), columns as in the module docstring."""
    pd = _need("pandas")
    return pd.DataFrame([result_row(i, r) for i, r in results], columns=result_columns())


# -- rows -> results ------------------------------------------------------------------------------
def plain(value: Any) -> Any:
    """A cell as plain Python: numpy arrays become lists, numpy scalars Python numbers, NaN/NA None."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()  # numpy arrays and scalars; lists inside arrays become lists too
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is not None and type(value).__name__ in ("NAType", "NaTType"):
        return None
    return value


def _metric_from_row(name: str, row: Dict[str, Any]) -> Optional[MetricScore]:
    method = row.get(f"{name}_method")
    if method is None:
        return None
    score = row.get(name)
    verdicts = row.get(f"{name}_verdicts")
    return MetricScore(name, 0.0 if score is None else float(score), row.get(f"{name}_reasoning") or "",
                       skipped=score is None, method=method, llm_score=row.get(f"{name}_llm_score"),
                       heuristic_score=row.get(f"{name}_heuristic_score"), raw_reply=row.get(f"{name}_raw_reply"),
                       verdicts=json.loads(verdicts) if verdicts else [], error=row.get(f"{name}_error"))


def result_from_row(row: Dict[str, Any]) -> Tuple[int, EvalResult]:
    """(index, result) from one results-frame row (cells may still be numpy values)."""
    row = {k: plain(v) for k, v in row.items()}
    record = dict(row, metadata=json.loads(row.get("metadata") or "{}"))
    scores = {name: _metric_from_row(name, row) for name in ALL_METRICS}
    core = {name: scores[name] or MetricScore(name, 0.0, "Not present in the results table.", skipped=True,
                                              method="skipped") for name in METRICS}
    extra = {name: scores[name] for name in RULE_METRICS if scores[name] is not None}
    result = EvalResult(row.get("sample_id"), **core, elapsed_sec=float(row.get("elapsed_sec") or 0.0),
                        extra=extra, sample=sample_from_record(record))
    return int(row["index"]), result


def results_from_frame(frame: Any) -> Iterator[Tuple[int, EvalResult]]:
    """(index, result) for every row of a results frame, in row order."""
    for row in frame.to_dict("records"):
        yield result_from_row(row)


def row_usage(row: Dict[str, Any]) -> Dict[str, int]:
    """The judge usage columns of one row."""
    return {column: int(plain(row.get(column)) or 0) for column in USAGE_COLUMNS}


# -- Parquet -------------------------------------------------------------------------------------
def parquet_schema() -> Any:
    """The pyarrow schema of a results table (explicit, so an all-null column still has a type)."""
    pa = _need("pyarrow")
    text, number, texts = pa.string(), pa.float64(), pa.list_(pa.string())
    types = {"index": pa.int64(), "overall": number, "elapsed_sec": number}
    types.update({c: texts for c in _LIST_COLUMNS})
    types.update({c: pa.int64() for c in USAGE_COLUMNS})
    for name in ALL_METRICS:
        types[name] = number
        types.update({f"{name}_{p}": number for p in _FLOAT_PARTS})
    return pa.schema([(c, types.get(c, text)) for c in result_columns()])


def frame_table(frame: Any) -> Any:
    """A results DataFrame as a pyarrow Table with the results schema."""
    pa = _need("pyarrow")
    return pa.Table.from_pandas(frame[result_columns()], schema=parquet_schema(), preserve_index=False)


class ParquetSink:
    """Appends results frames to one Parquet file as they arrive (one row group per frame)."""

    def __init__(self, path: str | Path) -> None:
        pq = _need("pyarrow.parquet")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.rows = 0
        self._writer = pq.ParquetWriter(str(self.path), parquet_schema(), compression="zstd")

    def write(self, frame: Any) -> None:
        self._writer.write_table(frame_table(frame))
        self.rows += len(frame)

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> "ParquetSink":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def results_parquet(results: Iterable[Tuple[int, EvalResult]], path: str | Path) -> int:
    """Write (index, result) pairs to a Parquet file; returns the number of rows written."""
    with ParquetSink(path) as sink:
        sink.write(results_frame(results))
    return sink.rows


def parquet_bytes(results: Iterable[Tuple[int, EvalResult]]) -> bytes:
    """(index, result) pairs as the bytes of a Parquet file (for downloads)."""
    import io

    pq = _need("pyarrow.parquet")
    buffer = io.BytesIO()
    pq.write_table(frame_table(results_frame(results)), buffer, compression="zstd")
    return buffer.getvalue()


def read_results_parquet(path: str | Path) -> List[Tuple[int, EvalResult]]:
    """The (index, result) pairs of a results Parquet file, in index order."""
    pq = _need("pyarrow.parquet")
    frame = pq.read_table(str(path)).to_pandas()
    return sorted(results_from_frame(frame), key=lambda pair: pair[0])
