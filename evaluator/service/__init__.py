"""The application layer under both front doors: the use cases the dashboard's views (app.py, pages/) and the
`ragmeter` command line (evaluator/cli/) call, as functions returning small typed results. The command line
parses flags and prints, a page draws; a button and a command that do the same thing call the same function
here. A view imports `evaluator.service` (and `evaluator.model` for the row types), never a store, pager,
queue, registry or reader of its own; the CLI imports the submodules below; the library never imports it.
The names below load on first use (`_LAZY`), so importing one submodule costs only that submodule.

    history      where the history is, its runs (list, rename, delete), the jobs in progress, the worker
    runs         submit, resume, re-score and stop a run; score one typed sample (a Spot check, through
                 `Run`); a run's estimate; one call of the user's pipeline
    reports      a run's summary, a page of rows, one row, tables, charts, advice, downloads, a comparison
    generation   documents chunked, a test-set generation queued, stopped, resumed and read back
    choices      the judges and metrics a run may use, rubric metrics written in plain words
    reviews      the review store, a run's review queue, reviews saved, the judge's agreement with people
    team         the server's configuration, who a session's user is, what they may do
    monitor      a project's live runs over time, its alerts, the receivers started beside the dashboard
    evaluation   a dataset file's rows read as the CLI reads them, what a run records, how a finished run reads
    workers      this process's worker claiming its own job, a `ragmeter worker` started
    options      what options may name: formats, judge kinds, metrics, settings with their origin
    ab           a sequential A/B test of two pipelines
    collect      production traces scored as they arrive (`ragmeter collect`)

Uploads are read behind it (evaluator/io/uploads.py: a preview, the samples under a mapping, conversations),
and so are documents (evaluator/generate/sources.py). It never imports streamlit: caching a result for a
session or for the server is the view's business. Every write takes the session's `Access` and checks it
right before it happens, whatever button led there.
"""
from __future__ import annotations

import sys
import types
import typing
from importlib import import_module as _import_module

if typing.TYPE_CHECKING:  # what mypy and editors see; at run time each name loads on first use (below)
    from ..analysis.bands import BAND_COLORS, NA_COLOR, badge_html, band, band_ranges
    from ..analysis.judging import OFFLINE_NOTICE, judge_calls, usable_replies
    from ..analysis.stats import MetricSummary
    from ..analysis.summary import RunSummary, WorstTurn
    from ..analysis.summary import agreement as labels_agreement
    from ..analysis.summary import noise as judge_noise
    from ..analysis.summary import verdict_of
    from ..analysis.timeline import MAX_DRILL, Deploy, Point, Timeline
    from ..collect.alerts import AlertEvent
    from ..collect.beside import RESTART_AFTER as RECEIVER_RESTART_AFTER
    from ..collect.beside import Receiver, SupervisedReceiver
    from ..config import LOCAL_USER, Config
    from ..conversation import ASSISTANT, TOOL, USER, Conversation, Turn
    from ..errors import ConfigError, DatasetError, MetricError, NotAllowed, RagmeterError, TargetError, WorkerError
    from ..generate.chart import coverage_chart
    from ..generate.chunking import Chunk
    from ..generate.coverage import Coverage, compute_coverage
    from ..generate.gate import REASONS as GATE_REASONS
    from ..generate.items import TestItem, apply_edits, testset_bytes
    from ..generate.kinds import DEFAULT_MIX, KINDS
    from ..generate.runner import GenerateSettings
    from ..generate.sources import document_types, folder_chunks, source_html, upload_chunks
    from ..io.conversations import ConversationSet
    from ..io.datasets import FIELDS as DATASET_FIELDS
    from ..io.datasets import REQUIRED as REQUIRED_FIELDS
    from ..io.datasets import DatasetPreview
    from ..io.shapes import TargetResponse
    from ..io.uploads import (
        conversation_rows,
        conversation_samples,
        digest,
        first_user_message,
        is_conversation_upload,
        load_conversation_upload,
        load_upload,
        mapping_warnings,
        preview_cells,
        preview_upload,
        upload_token,
        upload_types,
    )
    from ..io.versions import version_of as data_version
    from ..judges.base import DEFAULT_BASE_URL
    from ..judges.registry import OPENAI as OPENAI_JUDGE
    from ..judges.registry import JudgeEntry, judge_plugin_errors
    from ..metrics.combined import JUDGE_MODES
    from ..metrics.combined import MODE_WORDS as JUDGE_MODE_WORDS
    from ..metrics.parsing import SCALES
    from ..metrics.registry import DEFAULT_METRICS
    from ..metrics.rubric import DEFAULT_FIELDS, RUBRIC_FIELDS
    from ..report.downloads import RunFiles
    from ..report.frames import (
        conversation_frame,
        drop_empty,
        external_columns,
        report_frame,
        rows_frame,
        score_columns,
        select_rows,
        turn_rows,
        with_turn_columns,
        worst_turn,
    )
    from ..review.agreement import FEW_REVIEWS, ReviewAgreement, corrected_line
    from ..review.correction import TARGET_HALF_WIDTH
    from ..review.entries import PASS_FAIL, agree_with_all, reviewable, scale_of, shown_corrected
    from ..review.entries import Entry as ReviewEntry
    from ..review.queue import ORDERS, queue_label, review_queue
    from ..runs.generation import can_resume
    from ..runs.run import RunConfig
    from ..store.generations import GenerationInfo
    from ..safetext import drawable
    from ..store.history import RunInfo, RunStore, default_owner
    from ..store.jobs import JobInfo, Limits, Progress
    from ..store.pages import PAGE_SIZE, Filters
    from ..store.reviews import AGREE, DISAGREE, Review, ReviewStore
    from ..targets import TargetConfig
    from ..targets.http import DEFAULT_BODY
    from ..team.access import LAPTOP_ACCESS, Access
    from ..team.identity import Decision
    from ..team.resuming import resumed_config
    from ..team.startup import ServerOptions
    from .choices import (
        RETRIEVAL_METRICS,
        environment_key,
        import_rubrics,
        judge_cache_file,
        judge_entries,
        judge_needs_key,
        key_hint,
        key_variable_for,
        metric_choices,
        new_rubric,
        rubrics_file,
    )
    from .generation import (
        generation,
        generation_contents,
        generation_failure,
        generation_is_offline,
        generations,
        resume_generation,
        stop_generation,
        submit_generation,
    )
    from .history import (
        TEAM_HISTORY,
        check_history_path,
        default_history,
        delete_run,
        history_location,
        is_active,
        job,
        job_queue,
        jobs_in_progress,
        latest_finished_run,
        list_runs,
        open_history,
        owners_and_projects,
        MAX_NAME_CHARS,
        clean_name,
        default_run_name,
        rename_run,
        resumable,
        run_info,
        scorer_label,
        start_worker,
        stop_run,
        stop_workers,
        wait_ended,
    )
    from .monitor import (
        alert_events,
        live_projects,
        receiver_counts,
        receiver_counts_line,
        receiver_projects,
        samples_at,
        start_receivers,
        timeline,
    )
    from .notes import MAX_NOTE_CHARS, Note, may_note, run_notes, save_note
    from .compare import Comparison, compare, sequential_tests
    from .exports import EXPORT_TYPES, export_bytes, export_file_name, reviewed_line, run_header, run_title
    from ..metrics.registry import metric_title
    from .reports import (
        advice,
        calibration_chart,
        chart_file,
        chart_file_name,
        chart_png,
        chart_svg,
        claims_html,
        compare_chart,
        comparison_file,
        compare_verdict,
        disagreement,
        judge_cost,
        metric_summaries,
        project_trend,
        report_summary,
        rows_page,
        run_files,
        run_provenance,
        run_row,
        run_summary,
        summary_charts,
        timeline_chart,
        trend_chart,
    )
    from .reviews import (
        agreement,
        queue_scores,
        review_store,
        reviewable_metrics,
        reviewed_indices,
        run_reviews,
        save_reviews,
    )
    from .judging import EXAM_ITEMS, check_judge, exam_rows, judge_exam, judge_exam_line
    from .runs import estimate, rescore_run, resume_run, spot_check, submit_run, target_config, try_target
    from .team import access_of, identify, server_config, startup_problems

# Name -> (module, its name there), the module relative to this package; a bare module string keeps the name.
# Loaded on first use (PEP 562): the command line imports one use-case module (evaluator.service.runs) without
# the ~70 modules a page may ask for, and a page's `service.X` costs only X's own modules.
_LAZY: typing.Dict[str, typing.Union[str, typing.Tuple[str, str]]] = {
    "AGREE": "..store.reviews",
    "ASSISTANT": "..conversation",
    "Access": "..team.access",
    "AlertEvent": "..collect.alerts",
    "BAND_COLORS": "..analysis.bands",
    "Chunk": "..generate.chunking",
    "Comparison": ".compare",
    "Config": "..config",
    "ConfigError": "..errors",
    "Conversation": "..conversation",
    "ConversationSet": "..io.conversations",
    "Coverage": "..generate.coverage",
    "DATASET_FIELDS": ("..io.datasets", "FIELDS"),
    "DEFAULT_BASE_URL": "..judges.base",
    "DEFAULT_BODY": "..targets.http",
    "DEFAULT_FIELDS": "..metrics.rubric",
    "DEFAULT_METRICS": "..metrics.registry",
    "DEFAULT_MIX": "..generate.kinds",
    "DISAGREE": "..store.reviews",
    "DatasetError": "..errors",
    "DatasetPreview": "..io.datasets",
    "Decision": "..team.identity",
    "Deploy": "..analysis.timeline",
    "EXAM_ITEMS": ".judging",
    "EXPORT_TYPES": ".exports",
    "FEW_REVIEWS": "..review.agreement",
    "Filters": "..store.pages",
    "GATE_REASONS": ("..generate.gate", "REASONS"),
    "GenerateSettings": "..generate.runner",
    "GenerationInfo": "..store.generations",
    "JUDGE_MODES": "..metrics.combined",
    "JUDGE_MODE_WORDS": ("..metrics.combined", "MODE_WORDS"),
    "JobInfo": "..store.jobs",
    "JudgeEntry": "..judges.registry",
    "KINDS": "..generate.kinds",
    "LAPTOP_ACCESS": "..team.access",
    "LOCAL_USER": "..config",
    "Limits": "..store.jobs",
    "MAX_DRILL": "..analysis.timeline",
    "MAX_NOTE_CHARS": ".notes",
    "MetricError": "..errors",
    "MetricSummary": "..analysis.stats",
    "NA_COLOR": "..analysis.bands",
    "NotAllowed": "..errors",
    "Note": ".notes",
    "OFFLINE_NOTICE": "..analysis.judging",
    "OPENAI_JUDGE": ("..judges.registry", "OPENAI"),
    "ORDERS": "..review.queue",
    "PAGE_SIZE": "..store.pages",
    "PASS_FAIL": "..review.entries",
    "Point": "..analysis.timeline",
    "Progress": "..store.jobs",
    "RECEIVER_RESTART_AFTER": ("..collect.beside", "RESTART_AFTER"),
    "REQUIRED_FIELDS": ("..io.datasets", "REQUIRED"),
    "RETRIEVAL_METRICS": ".choices",
    "RUBRIC_FIELDS": "..metrics.rubric",
    "RagmeterError": "..errors",
    "Receiver": "..collect.beside",
    "Review": "..store.reviews",
    "ReviewAgreement": "..review.agreement",
    "ReviewEntry": ("..review.entries", "Entry"),
    "ReviewStore": "..store.reviews",
    "RunConfig": "..runs.run",
    "RunFiles": "..report.downloads",
    "RunInfo": "..store.history",
    "RunStore": "..store.history",
    "RunSummary": "..analysis.summary",
    "SCALES": "..metrics.parsing",
    "ServerOptions": "..team.startup",
    "SupervisedReceiver": "..collect.beside",
    "TARGET_HALF_WIDTH": "..review.correction",
    "TEAM_HISTORY": ".history",
    "TOOL": "..conversation",
    "TargetConfig": "..targets",
    "TargetError": "..errors",
    "TargetResponse": "..io.shapes",
    "TestItem": "..generate.items",
    "Timeline": "..analysis.timeline",
    "Turn": "..conversation",
    "USER": "..conversation",
    "WorkerError": "..errors",
    "WorstTurn": "..analysis.summary",
    "access_of": ".team",
    "advice": ".reports",
    "agree_with_all": "..review.entries",
    "agreement": ".reviews",
    "alert_events": ".monitor",
    "apply_edits": "..generate.items",
    "badge_html": "..analysis.bands",
    "band": "..analysis.bands",
    "band_ranges": "..analysis.bands",
    "calibration_chart": ".reports",
    "can_resume": "..runs.generation",
    "chart_file": ".reports",
    "chart_file_name": ".reports",
    "chart_png": ".reports",
    "chart_svg": ".reports",
    "check_history_path": ".history",
    "check_judge": ".judging",
    "claims_html": ".reports",
    "compare": ".compare",
    "compare_chart": ".reports",
    "compare_verdict": ".reports",
    "comparison_file": ".reports",
    "compute_coverage": "..generate.coverage",
    "conversation_frame": "..report.frames",
    "conversation_rows": "..io.uploads",
    "conversation_samples": "..io.uploads",
    "corrected_line": "..review.agreement",
    "coverage_chart": "..generate.chart",
    "data_version": ("..io.versions", "version_of"),
    "default_history": ".history",
    "default_owner": "..store.history",
    "drawable": "..safetext",  # text as a reader should see it: no control or bidi character (pages/_errors.py)
    "delete_run": ".history",
    "digest": "..io.uploads",
    "disagreement": ".reports",
    "document_types": "..generate.sources",
    "drop_empty": "..report.frames",
    "environment_key": ".choices",
    "estimate": ".runs",
    "exam_rows": ".judging",
    "export_bytes": ".exports",
    "export_file_name": ".exports",
    "external_columns": "..report.frames",
    "first_user_message": "..io.uploads",
    "folder_chunks": "..generate.sources",
    "generation": ".generation",
    "generation_contents": ".generation",
    "generation_failure": ".generation",
    "generation_is_offline": ".generation",
    "generations": ".generation",
    "history_location": ".history",
    "identify": ".team",
    "import_rubrics": ".choices",
    "is_active": ".history",
    "is_conversation_upload": "..io.uploads",
    "job": ".history",
    "job_queue": ".history",
    "jobs_in_progress": ".history",
    "judge_cache_file": ".choices",
    "judge_calls": "..analysis.judging",
    "judge_cost": ".reports",
    "judge_entries": ".choices",
    "judge_exam": ".judging",
    "judge_exam_line": ".judging",
    "judge_needs_key": ".choices",
    "judge_noise": ("..analysis.summary", "noise"),
    "judge_plugin_errors": "..judges.registry",
    "key_hint": ".choices",
    "key_variable_for": ".choices",
    "labels_agreement": ("..analysis.summary", "agreement"),
    "latest_finished_run": ".history",
    "list_runs": ".history",
    "live_projects": ".monitor",
    "load_conversation_upload": "..io.uploads",
    "load_upload": "..io.uploads",
    "mapping_warnings": "..io.uploads",
    "may_note": ".notes",
    "metric_choices": ".choices",
    "metric_summaries": ".reports",
    "metric_title": "..metrics.registry",
    "new_rubric": ".choices",
    "open_history": ".history",
    "owners_and_projects": ".history",
    "preview_cells": "..io.uploads",
    "preview_upload": "..io.uploads",
    "project_trend": ".reports",
    "queue_label": "..review.queue",
    "queue_scores": ".reviews",
    "receiver_counts": ".monitor",
    "receiver_counts_line": ".monitor",
    "receiver_projects": ".monitor",
    "rename_run": ".history",
    "clean_name": ".history",
    "default_run_name": ".history",
    "scorer_label": ".history",
    "MAX_NAME_CHARS": ".history",
    "report_frame": "..report.frames",
    "report_summary": ".reports",
    "rescore_run": ".runs",
    "resumable": ".history",
    "resume_generation": ".generation",
    "resume_run": ".runs",
    "resumed_config": "..team.resuming",
    "review_queue": "..review.queue",
    "review_store": ".reviews",
    "reviewable": "..review.entries",
    "reviewable_metrics": ".reviews",
    "reviewed_indices": ".reviews",
    "reviewed_line": ".exports",
    "rows_frame": "..report.frames",
    "rows_page": ".reports",
    "rubrics_file": ".choices",
    "run_files": ".reports",
    "run_header": ".exports",
    "run_info": ".history",
    "run_notes": ".notes",
    "run_provenance": ".reports",
    "run_reviews": ".reviews",
    "run_row": ".reports",
    "run_summary": ".reports",
    "run_title": ".exports",
    "samples_at": ".monitor",
    "save_note": ".notes",
    "save_reviews": ".reviews",
    "scale_of": "..review.entries",
    "score_columns": "..report.frames",
    "select_rows": "..report.frames",
    "sequential_tests": ".compare",
    "server_config": ".team",
    "shown_corrected": "..review.entries",
    "source_html": "..generate.sources",
    "spot_check": ".runs",
    "start_receivers": ".monitor",
    "start_worker": ".history",
    "startup_problems": ".team",
    "stop_generation": ".generation",
    "stop_run": ".history",
    "stop_workers": ".history",
    "submit_generation": ".generation",
    "submit_run": ".runs",
    "summary_charts": ".reports",
    "target_config": ".runs",
    "testset_bytes": "..generate.items",
    "timeline": ".monitor",
    "timeline_chart": ".reports",
    "trend_chart": ".reports",
    "try_target": ".runs",
    "turn_rows": "..report.frames",
    "upload_chunks": "..generate.sources",
    "upload_token": "..io.uploads",
    "upload_types": "..io.uploads",
    "usable_replies": "..analysis.judging",
    "verdict_of": "..analysis.summary",
    "wait_ended": ".history",
    "with_turn_columns": "..report.frames",
    "worst_turn": "..report.frames",
}


def __getattr__(name: str) -> typing.Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = (where, name) if isinstance(where, str) else where
    value = getattr(_import_module(module, __name__), attribute)
    globals()[name] = value  # the next look-up is a plain global
    return value


def __dir__() -> typing.List[str]:
    return sorted(set(globals()) | set(_LAZY))


class _Door(types.ModuleType):
    """This package, guarding its names: importing a submodule sets it as an attribute of the package, and a
    use case named like its module (`generation`, `compare`) would turn into the module. The function wins;
    the module stays reachable as `evaluator.service.generation` in imports."""

    def __setattr__(self, name: str, value: typing.Any) -> None:
        if not (isinstance(value, types.ModuleType) and name in _LAZY):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Door

__all__ = sorted(_LAZY)  # every name of the door is public; _LAZY is the one list of them
