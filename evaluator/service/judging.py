"""The judge exam behind the dashboard's "Check this judge" panel, and the exam a run's judge sat.

`check_judge` runs the exam (review/exam.py) for the judge a page configured, beside its baselines, and
stores the result with the judge's settings (store/exams.py; the key is never part of them); the panel
shows the returned dicts. `judge_exam` / `judge_exam_line` find the latest exam the judge of a stored
run sat, for the Report and History pages. Checking a judge calls it: it needs the "run" permission.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import RagmeterError
from ..judges.base import close_judge
from ..judges.registry import judge_kinds
from ..judges.messages import display_url
from ..review.exam import BAND_ADVICE, FIT, GATE, ExamResult, baselines, default_items, format_table, items_from_samples, \
    limit_items, summary_lines, take_exam
from ..review.probes import PAIRS as PROBE_PAIRS
from ..scoring.run_config import RunConfig
from ..store.exams import exam_line, key_of_settings, latest_exams, save_exam
from ..store.history import RunStore
from ..team.access import Access

EXAM_ITEMS = len(default_items())  # what the panel says it will ask


def check_judge(store: Optional[RunStore], config: RunConfig, *, access: Access, api_key: str = "",
                limit: int = 0, owner: Optional[str] = None) -> Dict[str, Any]:
    """The exam for `config`'s judge: {"result", "baselines", "lines", "exam_id"} (result and baselines as
    ExamResult.to_dict()). NotAllowed when the session may not run; a judge that cannot start raises its
    JudgeConfigError. Stored in `store` (when given) with the judge's settings, never its key."""
    access.check("run")
    items = limit_items(default_items(), limit)
    judge = config.build_judge(api_key)
    settings = {**config.settings(judge), "max_tokens": config.judge_max_tokens or None}
    try:
        result = take_exam(judge, items, settings=settings, probes=probes_for(limit))
    finally:
        close_judge(judge)
    exam_id = ""
    if store is not None and not result.baseline:
        exam_id = save_exam(store, result.to_dict(), settings, owner=owner or access.user)
    return {"result": result.to_dict(), "baselines": [b.to_dict() for b in baselines(items, probes_for(limit))],
            "lines": summary_lines(result), "exam_id": exam_id}


def probes_for(limit: int) -> int:
    """Pairs per probe: the full number for the whole exam, no more than the items per metric for a quick one."""
    return min(limit, PROBE_PAIRS) if limit else PROBE_PAIRS


def exam_rows(results: List[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    """One table row per judge and metric, for st.dataframe."""
    rows = []
    for r in results:
        for m in r["metrics"]:
            low, high = m["interval"]
            k_low, k_high = m.get("kappa_interval") or (0.0, 0.0)
            rows.append({"judge": r["judge"], "metric": m["metric"], "items": m["items"], "format": m["compliance"],
                         "balanced accuracy": m["balanced_accuracy"], "95% interval": f"{low:.2f}-{high:.2f}",
                         "kappa": m.get("kappa"), "kappa 95% interval": f"{k_low:.2f}-{k_high:.2f}",
                         "calls/item": m["calls"], "tokens/item": m["tokens"], "s/item": m["seconds"],
                         "verdict": m["verdict"]})
    return rows


def judge_exam(store: RunStore, settings: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The latest exam the judge of a run with these stored settings sat, or None."""
    key = key_of_settings(settings or {})
    return latest_exams(store, [key]).get(key) if key else None


def judge_exam_line(store: RunStore, settings: Mapping[str, Any]) -> str:
    """'judge check: weak (built-in exam, 2026-12-06)' for a run whose judge sat one, else ''. A history
    that cannot be read says nothing here (the page shows its own error for the run)."""
    try:
        return exam_line(judge_exam(store, settings))
    except Exception:  # an old history without the table yet, a database error: no line
        return ""


def gate_lines(settings: Mapping[str, Any], store: Optional[RunStore]) -> List[str]:
    """What a gated run (--fail-under) says about its judge before its last line: nothing for an offline run or a
    judge fit to gate releases; a warning for a judge never examined, examined unfit to gate, or unknown (no
    history to look in)."""
    key = key_of_settings(settings or {})
    if not key:
        return []
    check = f"check it: ragmeter judge check --model {settings.get('model')}" + (
        f" --base-url {display_url(str(settings['base_url']))}" if settings.get("base_url") else "")
    if store is None:
        return [f"warning: this gate's judge exam is unknown (no run history to look in); {check}"]
    exam = judge_exam_or_none(store, settings)
    if exam is None:
        return [f"warning: this gate ran on a judge that was never examined ({key}): nothing says its scores agree "
                f"with people's; {check}"]
    if exam["verdict"] == GATE:
        return []
    return [f"warning: this gate ran on a judge whose exam said {exam['verdict']} ({exam_line(exam)}): "
            f"{BAND_ADVICE.get(exam['verdict'], 'its exam gave no verdict')}"]


def judge_exam_or_none(store: RunStore, settings: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """`judge_exam`, None too when the history cannot say (an old one without the table)."""
    try:
        return judge_exam(store, settings)
    except Exception:  # an old history without the table, a database error: unknown, said as such by the caller
        return None


# --- the exam as the command line sits it (`ragmeter judge check`) ------------------------------------------
def exam_items(exam: Optional[str], limit: int = 0, rubrics: Sequence[str] = ()) -> Tuple[List[Any], str]:
    """The exam's items (the built-in items, or a labelled dataset's human_<metric> columns, the `rubrics` named
    included), at most `limit` per metric (0: all), and the exam's name; RagmeterError for a file that cannot be
    one, or rubrics without a file (the built-in exam has no item for them)."""
    if limit < 0:
        raise RagmeterError(f"--limit must be 0 (every item) or more, not {limit}")
    if not exam:
        if rubrics:
            raise RagmeterError("a rubric metric is examined on your own labels: add --exam FILE with a "
                                f"human_{rubrics[0]} column (the built-in exam has no item for it)")
        return limit_items(default_items(), limit), "built-in"
    from ..io.datasets import load_dataset

    try:
        items = items_from_samples(load_dataset(exam), exam, rubrics)
    except ValueError as exc:
        raise RagmeterError(str(exc)) from exc
    return limit_items(items, limit), Path(exam).name


def exam_settings(config: RunConfig, judge: Any) -> Dict[str, Any]:
    """What an exam is stored with: the judge's settings (never its key) and its completion cap."""
    return {**config.settings(judge), "max_tokens": config.judge_max_tokens or None}


def sit_exam(judge: Any, items: List[Any], settings: Dict[str, Any], *, exam: str, probes: int = PROBE_PAIRS,
             on_item: Optional[Callable[[int, int], None]] = None,
             metrics: Optional[Mapping[str, Any]] = None) -> ExamResult:
    """`judge` answers the exam's items and `probes` pairs per probe (closed after); the result, stopped
    early when the judge failed. `metrics`: the rubric metrics the items name, by name."""
    try:
        return take_exam(judge, items, exam=exam, settings=settings, on_item=on_item, probes=probes,
                         metrics=metrics)
    finally:
        close_judge(judge)


def store_exam(store: RunStore, result: ExamResult, settings: Dict[str, Any]) -> str:
    """Keep the result in the history with the judge's settings: every run scored by this judge shows it."""
    return save_exam(store, result.to_dict(), settings)


__all__ = [
    "EXAM_ITEMS", "FIT", "PROBE_PAIRS", "ExamResult", "baselines", "check_judge", "exam_items", "exam_line",
    "exam_rows", "exam_settings", "gate_lines", "format_table", "judge_exam", "judge_exam_line", "judge_kinds", "sit_exam", "store_exam", "summary_lines",
]
