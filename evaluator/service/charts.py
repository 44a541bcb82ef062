"""Chart files: any report chart as a file a stakeholder can forward, its provenance printed under it (the
`--chart` use cases of `ragmeter runs` and `ragmeter compare`; cli/charts.py parses and prints).

    ragmeter runs --run RUN_ID --chart means|distributions|by-category -o FILE.png|.svg|.pdf
    ragmeter runs --project P --chart trend -o trend.svg
    ragmeter compare BASE NEW --chart compare -o compare.pdf

The caption (analysis/provenance.py) names the dataset and its version, the rows scored out of all, the
judge (or that the scores are offline estimates), the date, the run id and the ragmeter version. Without
-o the chart is written to ./ragmeter-<dataset>-<run>-<chart>.svg, and the path is printed.
"""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, List, Optional

from ..analysis import charts
from ..analysis.compare import RunComparison
from ..analysis.provenance import Provenance, file_name
from ..store.exams import with_exam
from ..analysis.trend import project_trend
from ..errors import RagmeterError
from ..scoring import summaries
from ..store.history import RunStore
from ..team.settings import history_location

RUN_CHARTS = ("means", "distributions", "by-category")
CHARTS = (*RUN_CHARTS, "trend")
FORMATS = ("png", "svg", "pdf")


def _target(output: Optional[str], dataset: str, run_id: str, chart: str) -> Path:
    if not output:
        return Path(file_name(dataset, run_id, chart, "svg"))
    ext = Path(output).suffix.lower().lstrip(".")
    if ext not in FORMATS:
        raise RagmeterError(f"{output}: a chart is written as .png, .svg or .pdf (e.g. -o means.svg), "
                            f"not {'.' + ext if ext else 'a file without an extension'}")
    return Path(output)


MAX_PNG_HEIGHT = 1600  # px: a trend of many metrics stays one image a reader scrolls once


def _write(spec: Any, path: Path) -> Path:
    try:
        data = charts.chart_bytes(spec, path.suffix, max_height=MAX_PNG_HEIGHT)
    except ImportError as exc:
        raise RagmeterError(f"{exc}") from None
    try:
        path.write_bytes(data)
    except OSError as exc:
        raise RagmeterError(f"{path}: the chart cannot be written there ({exc.strerror or exc}); "
                            "choose another path") from None
    return path


def _run_spec(store: RunStore, run_id: str, chart: str) -> tuple:
    info = store.get_run(run_id)  # HistoryError (exit 2) for an unknown id
    summary = summaries.stored(store, run_id)
    order = list(summary.metric_names)
    if chart == "means":
        built: Any = charts.means_chart(None, summaries=list(summary.metrics))
    elif chart == "distributions":
        built = charts.histogram_chart(summary.histogram_rows(), order)
    else:
        built = charts.category_heatmap(summary.category_rows(), order)
        if built is None:
            raise RagmeterError(f"run {run_id} has no sample with a category, so there is no by-category chart; "
                                "add a 'category' column to the dataset, or choose --chart means")
    prov = Provenance.of_summary(dataset=info.dataset_name, settings=with_exam(store, info.settings), summary=summary,
                                 date=info.finished_at or info.created_at, run_id=run_id)
    return charts.captioned(built, prov), info.dataset_name


def chart_file(history: Optional[str], chart: str, output: Optional[str], *, run_id: Optional[str],
               project: Optional[str]) -> Path:
    """One run's chart (`run_id`) or a project's trend (`project`, or the run's) written to `output` (or a
    name made from the run); the path written."""
    store = RunStore(history_location(history))
    if chart == "trend":
        return trend_file(store, project or _project_of(store, run_id), output)
    if not run_id:
        raise RagmeterError(f"--chart {chart} needs the run: ragmeter runs --run RUN_ID --chart {chart} "
                            "-o FILE.svg (see 'ragmeter runs' for the ids)")
    spec, dataset = _run_spec(store, run_id, chart)
    return _write(spec, _target(output, dataset, run_id, chart))


def _project_of(store: RunStore, run_id: Optional[str]) -> str:
    """The project of the run --run names (--chart trend --run ID charts that run's project)."""
    if not run_id:
        raise RagmeterError("--chart trend needs --project (or --run RUN_ID: that run's project): whose runs to "
                            "chart over time (list them with: ragmeter runs)")
    return store.get_run(run_id).project or store.get_run(run_id).dataset_name


def trend_file(store: RunStore, project: str, output: Optional[str]) -> Path:
    """A project's runs in order, one series per scorer, as a file at most MAX_PNG_HEIGHT px tall (a PNG)."""
    trend = project_trend(store, project)
    if not trend.points:
        raise RagmeterError(f"project {project!r} has no finished run with scores to chart")
    newest = trend.runs[-1]
    spec = charts.trend_chart([p.to_row() for p in trend.points], trend.changes)
    prov = Provenance.of_run(dataset=newest.dataset_name, settings=with_exam(store, newest.settings),
                             scored=newest.n_done, total=newest.n_samples, date=_now(), run_id=newest.run_id)
    caption = _trend_caption(prov, len(trend.runs), project)
    return _write(charts.captioned(spec, caption), _target(output, project, "project", "trend"))


class _Caption:
    """A caption of several lines (a trend: the newest run's provenance and how many runs are drawn)."""

    def __init__(self, lines: List[str]) -> None:
        self._lines = lines

    def lines(self) -> List[str]:
        return self._lines


def _trend_caption(prov: Provenance, n_runs: int, project: str) -> _Caption:
    first, second = prov.lines()
    return _Caption([f"project {project}: {n_runs} finished runs · newest: {first}", second])


def compare_caption(cmp: RunComparison, summary_rows: int = 0) -> _Caption:
    """The compare chart's caption: the candidate's provenance, and the baseline it is set against."""
    a, b = cmp.run_a, cmp.run_b
    prov = Provenance.of_run(dataset=b.dataset_name, settings=b.settings, scored=b.n_done, total=b.n_samples,
                             date=b.finished_at or b.created_at, run_id=b.run_id)
    first, second = prov.lines()
    said = [f"candidate {first}", f"baseline run {a.run_id} ({a.label}) · {cmp.n_paired} paired rows · {second}"]
    headline = cmp.comparability.headline()
    if headline:  # "not comparable: scored by different heuristics (default vs jaccard); ..."
        said.append(headline)
    return _Caption(said)


def write_compare_chart(cmp: RunComparison, output: Optional[str]) -> Path:
    """`ragmeter compare BASE NEW --chart compare -o FILE`."""
    rows = charts.compare_rows(cmp)
    if not rows:
        raise RagmeterError("the runs share no scored sample on any metric, so there is nothing to chart")
    spec = charts.compare_chart(rows, cmp.run_a.label, cmp.run_b.label)
    path = _target(output, cmp.run_b.dataset_name, cmp.run_b.run_id, "compare")
    return _write(charts.captioned(spec, compare_caption(cmp)), path)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="minutes")
