"""Production traces as the Monitor page reads them: a project's live runs over time, its alerts, the samples
behind one point, and the OTLP receivers the configuration starts beside the dashboard."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

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


def receiver_counts(config: Config, project: str) -> Optional[Dict[str, Any]]:
    """The project's receiver's own counters (its GET /status), or None when none answers."""
    entry = config.collect_for(project)
    return beside.receiver_status(entry) if entry is not None and entry.listen else None


def receiver_counts_line(counts: Dict[str, Any]) -> str:
    """The receiver's counters in one line for the Monitor page: open traces against their byte budget,
    what was dropped and why, and the connections holding slots."""
    buffer, conns = counts.get("buffer") or {}, counts.get("connections") or {}
    drops = sorted((counts.get("dropped") or {}).items())
    dropped = ", ".join(f"{reason.replace('_', ' ')} {n:,}" for reason, n in drops)
    parts = [f"traces received {counts.get('received', {}).get('traces', 0):,}, stored {counts.get('stored', 0):,}"]
    if buffer:
        parts.append(f"open traces {buffer.get('traces', 0):,} ({buffer.get('waiting_for_root', 0):,} waiting for "
                     f"their root), {buffer.get('bytes', 0) / 1e6:.1f} of {buffer.get('max_bytes', 0) / 1e6:.0f} MB, "
                     f"oldest {buffer.get('oldest_age_s', 0):g} s (expire at {buffer.get('max_age_s', 0):g} s)")
    if conns:
        parts.append(f"connections {conns.get('authenticated', 0)}/{conns.get('max', 0)}, "
                     f"{conns.get('pending', 0)} not yet authenticated")
    parts.append(f"dropped: {dropped or 'none'}")
    return "; ".join(parts)
