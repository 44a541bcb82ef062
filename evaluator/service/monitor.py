"""Production traces as the Monitor page reads them: a project's live runs over time, its alerts, the samples
behind one point, and the OTLP receivers the configuration starts beside the dashboard."""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

from ..analysis import timeline as tl
from ..collect import alerts, beside
from ..config import Config
from ..store.history import RunStore


def live_projects(store: RunStore) -> List[str]:
    """The projects with live runs (a collector writes one per project and day)."""
    return tl.live_projects(store)


def timeline(store: RunStore, project: str, days: int, step: str) -> tl.Timeline:
    """Each metric's means with their 95% bands per hour or day over the last `days`, and the deploys."""
    return tl.timeline(store, project, days=days, step=step)


def alert_events(store: RunStore, project: str) -> List[alerts.AlertEvent]:
    """Breaches and recoveries of the project's alert rules, newest first."""
    return alerts.events(store, project)


def samples_at(store: RunStore, project: str, bucket: str) -> List[Tuple[str, int]]:
    """(run id, sample index) of the traces behind one point (at most tl.MAX_DRILL)."""
    return tl.samples_at(store, project, bucket)


def receiver_projects(config: Config) -> List[str]:
    """The projects of the receivers the configuration starts beside the dashboard."""
    return [entry.project for entry in beside.wanted(config)]


def start_receivers(config: Config, history: str,
                    on_first: Optional[Callable[[Callable[[], Any]], Any]] = None) -> List[beside.Receiver]:
    """Start the configured receivers not running yet; all of them. `on_first(stop_all)` once, at the first."""
    if not beside.wanted(config):
        return []
    return beside.ensure_started(config, history, on_first=on_first)
