"""Production traces scored as they arrive (`ragmeter collect`, and the receivers a dashboard starts beside it):
the receiver, its sampling rules, the project's live run of the day, alert rules and their webhook, and the
worker that scores the live runs' rows. The parts are evaluator/collect/'s; a door wires them from its options."""
from __future__ import annotations

from .. import config as team_config
from ..collect import alerts, webhook
from ..collect.live import LiveRuns
from ..collect.sampling import RuleError, Sampler, SamplingRules
from ..collect.server import Limits, Receiver, serve
from ..runs.child import local_worker, watch_parent
from ..runs.run import RunConfig

__all__ = [
    "Limits", "LiveRuns", "Receiver", "RuleError", "RunConfig", "Sampler", "SamplingRules", "alerts", "local_worker",
    "serve", "team_config", "watch_parent", "webhook",
]
