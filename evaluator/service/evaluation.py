"""Scoring a dataset file, the command line's way in: its rows read (any format, a TREC run with its
judgments), what the run records of the pipeline it measures, and how a finished run reads: its summary,
the report files written from its rows, and the verdict that decides the exit code. The run itself is
started or queued through service.runs, as the pages do."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple

from ..analysis import summary as summaries
from ..analysis.summary import RunSummary
from ..analysis.agreement import format_agreement_table
from ..analysis.judging import OFFLINE_NOTICE
from ..analysis.noise import format_judge_noise
from ..errors import DatasetError
from ..io import trec
from ..io.datasets import CLI, load_dataset
from ..io.outputs import check_output
from ..io.versions import version_of
from ..model import EvalReport, EvalResult, EvalSample
from ..report.export import write_results
from ..scoring.costs import usage_line
from ..scoring.progress import Progress
from ..scoring.verdict import EXIT_CODES, Verdict, from_decision, plural, verdict

RETRIEVAL_METRICS = trec.RETRIEVAL_METRICS  # what a retrieval run (ids and judgments, no answers) scores by default
OUTPUTS = "outputs"  # run settings key: the files a run was started to write, so a resume writes them too

Rows = Callable[[], Iterator[Tuple[int, EvalResult]]]


@dataclass(frozen=True)
class DataSource:
    """Where a run's rows come from: a dataset file or folder, or a TREC run with its judgments."""

    data: str
    mapping: Optional[Dict[str, str]] = None
    qrels: Optional[str] = None
    run: Optional[str] = None
    needs_answer: bool = True  # False when a target answers each question
    tool_evidence: bool = True
    sheet: Optional[str] = None
    max_rows: Optional[int] = None  # the limits a door resolved (team/settings.py input_limits); None = none
    max_mb: Optional[int] = None

    @property
    def retrieval(self) -> bool:
        return bool(self.qrels or self.run)


def read_samples(source: DataSource, notes: List[str], warnings: List[str]) -> List[EvalSample]:
    """The rows of `source`; `notes` gets how the file was read (which tool's, rows left out) even when reading
    fails, `warnings` the unread columns that look like a field. DatasetError saying what is wrong."""
    if source.retrieval:
        return trec.read_retrieval(source.data, source.qrels, source.run, notes)
    if not Path(source.data).is_dir() and trec.looks_like_run(source.data):
        raise DatasetError(f"{source.data} looks like a TREC run file (query Q0 doc rank score name); score it "
                           "with its judgments: ragmeter evaluate RUN --qrels QRELS")
    return load_dataset(source.data, source.mapping, surface=CLI, needs_answer=source.needs_answer, notes=notes,
                        tool_evidence=source.tool_evidence, sheet=source.sheet, warnings=warnings,
                        max_rows=source.max_rows, max_bytes=source.max_mb * 1_000_000 if source.max_mb else None)


def what_changed(prompt_version: Optional[str] = None) -> Dict[str, Any]:
    """What a run records of the pipeline it measures (analysis/provenance.py): the git commit and whether the
    work tree had uncommitted changes, and the prompt version; Compare and the History trend show them."""
    from ..analysis.provenance import git_state

    found = git_state(".")
    if prompt_version:
        found["prompt_version"] = prompt_version
    return found


def output_settings(outputs: Mapping[str, str]) -> Dict[str, Any]:
    """The run settings that remember the files a run was started to write, as absolute paths."""
    absolute = {name: str(Path(path).expanduser().resolve()) for name, path in outputs.items() if path}
    return {OUTPUTS: absolute} if absolute else {}


def with_key_hint(message: str, hint: str) -> str:
    """The library's advice about the judge's key in a door's own syntax (the openai client loads only here)."""
    from ..judges.openai import KEY_HINT

    return message.replace(KEY_HINT, hint)


def missed_thresholds(report: EvalReport, thresholds: Dict[str, float]) -> List[str]:
    """The thresholds `report` misses (an N/A mean misses), as the verdict lists them."""
    return list(verdict(report, thresholds=thresholds).missed)


# What the command line prints a finished run with: the library's own formatters, through this one door.
__all__ = [
    "DataSource", "EXIT_CODES", "OFFLINE_NOTICE", "OUTPUTS", "Progress", "RETRIEVAL_METRICS", "Rows", "RunSummary",
    "Verdict", "check_output", "format_agreement_table", "format_judge_noise", "from_decision",
    "missed_thresholds", "output_settings", "plural", "read_samples", "summaries", "usage_line", "version_of",
    "what_changed", "with_key_hint", "write_results",
]
