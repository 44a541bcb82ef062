"""Judge exams in the history database: the `judge_exams` table (migration m013 in history.py).

`ragmeter judge check` and the dashboard's "Check this judge" store what the exam found (review/exam.py's
ExamResult.to_dict()) with the judge's settings, never a key. A judge is known by `judge_key`: its model
and base URL as shown (no credentials), so a run scored by that judge finds the latest exam it sat.
"""
from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, Mapping, Optional

from ..io.redact import redacted_json, sanitize_settings
from .history import RunStore, default_owner

OPENAI_URL = "https://api.openai.com/v1"  # a run that named no base URL was judged here (judges/base.py)


def judge_key(model: Any, base_url: Any) -> str:
    """'model @ base-url' (the URL without user:password@ or a query), '' for no model (offline)."""
    from ..judges.messages import display_url

    if not model:
        return ""
    return f"{model} @ {display_url(str(base_url or OPENAI_URL)).rstrip('/')}"


def key_of_settings(settings: Mapping[str, Any]) -> str:
    """The judge_key of a run's stored settings ('' for an offline run)."""
    if settings.get("judge") == "offline":
        return ""
    return judge_key(settings.get("model"), settings.get("base_url"))


def save_exam(store: RunStore, result: Mapping[str, Any], settings: Mapping[str, Any],
              owner: Optional[str] = None) -> str:
    """Store one exam's result with the judge's settings (sanitised); its id."""
    exam_id = uuid.uuid4().hex[:12]
    clean = sanitize_settings(dict(settings))
    row = (exam_id, judge_key(settings.get("model"), settings.get("base_url")),
           datetime.now(timezone.utc).isoformat(timespec="seconds"), owner or default_owner(),
           str(result.get("exam") or "built-in"), str(result.get("verdict") or ""),
           redacted_json(clean), redacted_json(dict(result)))
    with store.transaction() as db:
        db.execute("INSERT INTO judge_exams (exam_id, judge_key, created_at, owner, exam, verdict, settings, result) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
    return exam_id


def latest_exams(store: RunStore, keys: Iterable[str]) -> Dict[str, Dict[str, Any]]:
    """judge_key -> its latest exam ({exam_id, created_at, exam, verdict, settings, result}) for these keys."""
    wanted = sorted({k for k in keys if k})
    if not wanted:
        return {}
    marks = ", ".join("?" for _ in wanted)
    with store.transaction(write=False) as db:
        rows = db.fetchall(f"SELECT exam_id, judge_key, created_at, exam, verdict, settings, result FROM judge_exams "
                           f"WHERE judge_key IN ({marks}) ORDER BY created_at, exam_id", wanted)
    found: Dict[str, Dict[str, Any]] = {}
    for exam_id, key, created, exam, verdict, settings, result in rows:  # later rows replace earlier ones
        found[key] = {"exam_id": exam_id, "created_at": created, "exam": exam, "verdict": verdict,
                      "settings": json.loads(settings), "result": json.loads(result)}
    return found


def exam_line(exam: Optional[Mapping[str, Any]]) -> str:
    """One line for a run's header: 'judge check: weak (built-in exam, 2026-12-06)', or '' when none."""
    if not exam:
        return ""
    return f"judge check: {exam['verdict']} ({exam['exam']} exam, {str(exam['created_at'])[:10]})"


EXAM_KEY = "judge_exam"  # the settings key a run's caption reads its judge's exam from (analysis/provenance.py)
NOT_EXAMINED = "judge not examined"


def exam_caption(exam: Optional[Mapping[str, Any]]) -> str:
    """'exam: fit for trends (0.82)' (the verdict and the weakest metric's kappa), or 'judge not examined'."""
    if not exam:
        return NOT_EXAMINED
    kappa = (exam.get("result") or {}).get("kappa")
    return f"exam: {exam['verdict']}" + ("" if kappa is None else f" ({float(kappa):.2f})")


def with_exam(store: RunStore, settings: Mapping[str, Any]) -> Dict[str, Any]:
    """A run's settings with the caption of the latest exam its judge sat (EXAM_KEY); an offline run's, or a
    history that cannot say (an old one without the table), unchanged."""
    key = key_of_settings(settings or {})
    if not key:
        return dict(settings or {})
    try:
        exam = latest_exams(store, [key]).get(key)
    except Exception:  # a history without the table yet, a database error: the caption says nothing of it
        return dict(settings)
    return {**settings, EXAM_KEY: exam_caption(exam)}
