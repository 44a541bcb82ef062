"""The OTLP receivers the team configuration starts beside the dashboard ([[collect]] listen = ...):
started from every page run (a dict lookup once they run), stopped when the process exits, and
their state for the Monitor page (service.start_receivers)."""
from __future__ import annotations

import logging
from typing import List

from evaluator import service

from pages import _errors as errors
from pages import _runs as runs
from pages import _team as team

log = logging.getLogger("ragmeter.dashboard")


def ensure() -> List[service.Receiver]:
    """Start the configured receivers that are not running; never raises into a page."""
    config = team.config()
    if not service.receiver_projects(config):
        return []
    try:
        return service.start_receivers(config, runs.history_path(), on_first=runs._on_exit)  # noqa: SLF001 (one exit hook for the process)
    except Exception:  # the pages still draw; the Monitor page says what is wrong
        log.exception("starting the configured trace receivers failed")
        return []


def projects() -> List[str]:
    """The projects of the receivers the configuration starts beside the dashboard."""
    return service.receiver_projects(team.config())


def show(project: str) -> None:
    """The Monitor page's line about `project`'s receiver, when this dashboard runs one: listening,
    starting, or a red box with the receiver's own last line (a port in use, a variable not set)."""
    for receiver in ensure():
        if receiver.project != project:
            continue
        status = receiver.status()
        if status.state == "listening":
            errors.caption("Receiving traces on http://{address}/v1/traces (started by {who}).", address=status.listen,
                           who="ragmeter serve" if isinstance(receiver, service.SupervisedReceiver) else "this dashboard")
            counts = service.receiver_counts(team.config(), project)
            if counts is not None:
                errors.caption("{line}", line=service.receiver_counts_line(counts))
        elif status.state == "starting":
            errors.caption("The trace receiver on {address} is starting.", address=status.listen)
        elif isinstance(receiver, service.SupervisedReceiver):  # `ragmeter serve` runs and restarts it
            errors.error("The trace receiver for this project is not running: {problem}", problem=status.problem,
                         icon=":material/error:")
        else:
            errors.error("The trace receiver for this project is not running: {problem} It is started again "
                         "when a page is opened {seconds} s after it stopped; the dashboard's log has its output.",
                         problem=status.problem, seconds=int(service.RECEIVER_RESTART_AFTER), icon=":material/error:")
