"""Where a score came from: who scored a run, and how two runs were scored differently.

A comparison of two runs means something only when the same scorer measured both. `scorer_differences`
lists every setting that changes what a score *means* (judge, model, the judge's endpoint host, the
heuristic set, metric settings, language, the test set's version); `ragmeter compare` warns with the list,
and refuses to gate a pull request on a scorer difference unless told `--allow-different-scorers` (a
different test set version is warned about and compared on the sample ids both runs share, as before). `pipeline_changes`
lists what changed in the thing under test (the target, a prompt version, the git commit), which is what a
comparison is for: shown, never refused.

`Provenance` is the caption every exported chart and report carries, so a chart forwarded without its
page still says which data, how many rows, which judge, when, which run and which ragmeter drew it.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..io.versions import ROWS_KEY, VERSION_KEY
from ..store.naming import heuristics_word, host_of, is_offline, scorer_label  # noqa: F401  (host_of: re-exported)

OFFLINE = "offline lexical estimates — not judgements"

# (settings key, what it is called in a warning): a difference in any of these changes what a score means.
SCORER_KEYS: Tuple[Tuple[str, str], ...] = (
    ("judge", "judge"), ("model", "judge model"), ("base_url", "judge endpoint"),
    ("heuristics", "heuristic set"), ("language", "language"), ("temperature", "judge temperature"),
    ("judge_mode", "judge mode"), ("repeats", "judge repeats"), ("rubrics", "rubrics"),
    ("alignment", "metric alignment"), (VERSION_KEY, "dataset version"),
)
_BLOCKING = frozenset(key for key, _ in SCORER_KEYS if key != VERSION_KEY)
# What changed in the pipeline under test: listed, never refused (it is what a comparison measures).
PIPELINE_KEYS: Tuple[Tuple[str, str], ...] = (
    ("target", "target"), ("git_commit", "git commit"), ("git_dirty", "uncommitted changes"),
    ("prompt_version", "prompt version"), ("template_version", "template version"),
)


@dataclass(frozen=True)
class Difference:
    """One setting that differs between the baseline and the candidate run, both values as plain text."""

    what: str
    baseline: str
    candidate: str
    blocks: bool = True  # whether --fail-on-regression refuses to judge (False: a dataset version, a pipeline change)

    def sentence(self) -> str:
        return f"{self.what}: {self.baseline} (baseline) vs {self.candidate} (candidate)"

    def to_dict(self) -> Dict[str, Any]:
        return {"what": self.what, "baseline": self.baseline, "candidate": self.candidate,
                "refuses_the_gate": self.blocks}


def _normal(key: str, value: Any) -> Any:
    if key == "base_url":
        return host_of(str(value or ""))
    if key == "heuristics":  # in users' words: the "ragmeter" set is the default one
        return [heuristics_word({"heuristics": value})]
    if key == "target" and isinstance(value, Mapping):  # what it called, never a header value
        return value.get("name") or value.get("url") and host_of(str(value.get("url"))) or value.get("kind") or ""
    return value


def _shown(value: Any) -> str:
    if value in (None, "", [], {}):
        return "none"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(sorted(str(k) for k in value)) + " (settings differ)"
    return str(value)


def _differences(a: Mapping[str, Any], b: Mapping[str, Any], keys: Sequence[Tuple[str, str]],
                 missing_is_unknown: bool) -> List[Difference]:
    found = []
    for key, what in keys:
        if missing_is_unknown and (key not in a or key not in b):
            continue  # a run saved before this setting was recorded: unknown, not different
        va, vb = _normal(key, a.get(key)), _normal(key, b.get(key))
        if json.dumps(va, sort_keys=True, default=str) != json.dumps(vb, sort_keys=True, default=str):
            found.append(Difference(what, _shown(va), _shown(vb), blocks=key in _BLOCKING))
    return found


# How a judge was asked: meaningless when neither run had one (the heuristics alone scored both).
_JUDGE_ONLY_KEYS = frozenset(("judge_mode", "temperature", "repeats"))


def scorer_differences(baseline: Mapping[str, Any], candidate: Mapping[str, Any]) -> List[Difference]:
    """Every setting that makes the two runs' scores mean different things, in SCORER_KEYS order."""
    keys = SCORER_KEYS
    if is_offline(baseline) and is_offline(candidate):
        keys = tuple((key, what) for key, what in SCORER_KEYS if key not in _JUDGE_ONLY_KEYS)
    return _differences(baseline, candidate, keys, missing_is_unknown=True)


def pipeline_changes(baseline: Mapping[str, Any], candidate: Mapping[str, Any]) -> List[Difference]:
    """What changed in the pipeline under test between the runs (target, git commit, prompt version)."""
    return _differences(baseline, candidate, PIPELINE_KEYS, missing_is_unknown=False)


def judge_words(settings: Mapping[str, Any]) -> str:
    """Who scored a run, in words: the judge's label (store/naming.py), or that the scores are estimates and by
    which heuristic set."""
    return f"{OFFLINE} (heuristics: {heuristics_word(settings)})" if is_offline(settings) else scorer_label(settings)


@dataclass(frozen=True)
class Provenance:
    """The caption of an exported chart or report: what was scored, by whom, when, in which run."""

    dataset: str
    version: str
    scored: int
    total: int
    judge: str
    date: str
    run_id: str
    ragmeter: str
    exam: str = ""  # "exam: fit for trends (0.82)" or "judge not examined" (store/exams.py with_exam), "" unknown

    @classmethod
    def of_run(cls, *, dataset: str, settings: Mapping[str, Any], scored: int, total: int, date: str,
               run_id: str, ragmeter: Optional[str] = None) -> "Provenance":
        return cls(dataset=dataset or "unnamed dataset", version=str(settings.get(VERSION_KEY) or "unknown"),
                   scored=scored, total=int(settings.get(ROWS_KEY) or total), judge=judge_words(settings),
                   date=(date or "")[:16].replace("T", " "), run_id=run_id or "not saved",
                   ragmeter=ragmeter or ragmeter_version(), exam=str(settings.get("judge_exam") or ""))

    @classmethod
    def of_summary(cls, *, dataset: str, settings: Mapping[str, Any], summary: Any, date: str,
                   run_id: str) -> "Provenance":
        """A run's caption from its summary (analysis.summary.RunSummary, which imports this module): rows with
        an overall score out of all its rows."""
        return cls.of_run(dataset=dataset, settings=settings, scored=summary.n_overall, total=summary.n_rows,
                          date=date, run_id=run_id)

    def lines(self) -> List[str]:
        """The caption as two short lines (a chart is ~560 px wide)."""
        exam = f" · {self.exam}" if self.exam else ""  # the judge's exam, when a caller looked it up
        return [f"{self.dataset} (version {self.version}) · {self.scored}/{self.total} rows scored · "
                f"judge: {self.judge}{exam}",
                f"{self.date} · run {self.run_id} · ragmeter {self.ragmeter}"]

    def text(self) -> str:
        return " · ".join(self.lines())

    def to_dict(self) -> Dict[str, Any]:
        return {"dataset": self.dataset, "dataset_version": self.version, "rows_scored": self.scored,
                "rows_total": self.total, "judge": self.judge, "date": self.date, "run_id": self.run_id,
                "ragmeter_version": self.ragmeter, **({"judge_exam": self.exam} if self.exam else {})}


GIT_TIMEOUT_S = 5


def git_state(where: str = ".") -> Dict[str, Any]:
    """{git_commit, git_dirty} of the repository `where` is in (what a CLI run records, so Compare and the
    History trend can say what changed); {} outside a repository, without git, or when git is slow."""
    import subprocess

    def git(*argv: str) -> Optional[str]:
        try:
            done = subprocess.run(["git", "-C", where, *argv], capture_output=True, text=True, timeout=GIT_TIMEOUT_S,
                                  check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "--short=12", "HEAD")
    if not commit:
        return {}
    changed = git("status", "--porcelain", "--untracked-files=no")
    return {"git_commit": commit, **({} if changed is None else {"git_dirty": bool(changed)})}


def ragmeter_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ragmeter")
    except PackageNotFoundError:  # a source checkout that was never installed
        return "unknown"


NAME_CHARS = 40  # of the dataset's part of a download's name; a run id's part keeps RUN_CHARS
RUN_CHARS = 16


def name_part(text: str, limit: int = NAME_CHARS) -> str:
    """`text` as one safe piece of a file name: letters and digits of any script, `-` and `_`; everything else
    (path separators, `<`, `>`, quotes, spaces, bidi and other invisible format characters) becomes one `-`,
    trimmed at both ends and cut to `limit` characters; "" when nothing is left. The one sanitiser every
    download's name goes through (file_name), so "gpj.evil" can never read as "live.jpg"."""
    kept = "".join(c if c.isalnum() or c in "-_" else "-" for c in text)
    return re.sub("-{2,}", "-", kept).strip("-_")[:limit].strip("-_")


def file_name(dataset: str, run_id: str, kind: str, ext: str) -> str:
    """`ragmeter-<dataset>-<run>-<kind>.<ext>`: the name of every download of a run (its report, rows, charts),
    each part through name_part; the dataset's stem only (never a path)."""
    stem = dataset.rsplit("/", 1)[-1].rsplit("\\", 1)[-1] if dataset else ""
    stem = stem.rsplit(".", 1)[0] if "." in stem.strip(".") else stem
    parts = (name_part(stem) or "dataset", name_part(run_id or "", RUN_CHARS) or "unsaved",
             name_part(kind) or "file")
    return "-".join(("ragmeter",) + parts) + "." + (name_part(ext.lstrip("."), 8) or "bin")
