"""`ragmeter collect`: an OTLP/HTTP receiver that scores sampled production traces as they arrive.

    ragmeter collect --listen 127.0.0.1:4318 --project shop-bot [--sample 0.1] [--rule 'metadata.env = "prod"']...
                     [--max-per-hour N] [--token-env VAR] [--max-request-mb N] [--max-traces-per-second N]
                     [--offline | --judge NAME | --model M --base-url URL] [--history PATH_OR_URL]
                     [--alert "faithfulness < 0.75 over 200"]... [--webhook URL]

Senders export to http://HOST:PORT/v1/traces (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). Sampled traces go
to the project's live run of the day (`ragmeter runs --project NAME`); a status line on stderr and
`GET /status` give the counters. With a team configuration ($RAGMETER_CONFIG), a `[[collect]]` entry
for the project gives the rate, rules, cap and judge (`--judge NAME` names a `[[judges]]` entry);
flags given here win. SIGTERM or Ctrl-C: stop taking requests, let scoring finish its rows in flight,
exit 0; rows not scored yet are scored by the next start.
"""
from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any, Callable, List, Optional, Tuple

from ..errors import ConfigError, RagmeterError
from ..service.collect import Limits, LiveRuns, Receiver, RuleError, RunConfig, Sampler, SamplingRules, local_worker
from ..service.collect import serve, team_config, watch_parent
from .args import UsageError, run_config
from ..environment import secret

EXIT_OK, EXIT_USAGE = 0, 2


def listen_address(text: str) -> Tuple[str, int]:
    address = team_config.listen_address(text)
    if address is None:
        raise UsageError(f"--listen {text!r}: write HOST:PORT, e.g. 127.0.0.1:4318")
    return address


def bearer_token(var: str) -> str:
    """The token from the environment variable named by --token-env (never from the command line)."""
    if not var:
        return ""
    token = (secret(var) or "").strip()
    if not token:
        raise UsageError(f"--token-env {var}: the variable is not set or empty; export {var}=<token> first")
    return token


def collect_settings(args: argparse.Namespace) -> Tuple[SamplingRules, RunConfig]:
    """The sampling rules and the judge: flags first, then the project's [[collect]] entry, then defaults."""
    conf = team_config.current()
    entry = conf.collect_for(args.project)
    rate = args.sample if args.sample is not None else (entry.sample if entry else 1.0)
    rules = args.rule if args.rule is not None else list(entry.rules if entry else ())
    cap = args.max_per_hour if args.max_per_hour is not None else (entry.max_per_hour if entry else 0)
    judge_name = args.judge or (entry.judge if entry and not (args.offline or args.model) else None)
    if judge_name and any(j.name == judge_name for j in conf.judges):
        if args.model or args.base_url:
            raise UsageError(f"--judge {judge_name} is a configured judge: it names its own model and endpoint")
        args.judge = None
        config = conf.judge(judge_name).run_config(run_config(args))
    else:
        args.judge = judge_name
        config = run_config(args)
    try:
        return SamplingRules.parse(rate, rules, cap), config
    except RuleError as exc:
        if args.rule is None and entry is not None:  # the rule came from the file: say which entry
            raise ConfigError(f"{conf.source}: [[collect]] project {entry.project!r}: {exc}") from None
        raise


def limits_of(args: argparse.Namespace) -> Limits:
    if not args.max_request_mb > 0 or not args.max_traces_per_second > 0 or args.settle < 0:
        raise UsageError("--max-request-mb and --max-traces-per-second must be above 0, --settle 0 or more")
    return Limits(max_request_bytes=int(args.max_request_mb * (1 << 20)),
                  max_traces_per_second=args.max_traces_per_second, settle=args.settle)


def alerts_for(args: argparse.Namespace, store: Any) -> Optional[Callable[[], None]]:
    """What the alert flags start: a poll function, or None without --alert. The one place alerts are wired."""
    if not args.alert:
        if args.webhook:
            raise UsageError("--webhook posts alerts: give at least one --alert rule")
        return None
    from ..service.collect import alerts, webhook

    try:  # a rule that does not parse, a missing baseline run, a webhook URL that is not http(s): the flags' fault
        monitor = alerts.AlertMonitor(store, args.project, alerts.parse_rules(args.alert))
        hook = webhook.Webhook(webhook.check_url(args.webhook)) if args.webhook else None
    except (alerts.AlertRuleError, webhook.WebhookError) as exc:
        raise UsageError(str(exc)) from None

    def poll() -> None:
        monitor.poll()
        webhook.deliver(store, args.project, hook)
    return poll


def from_entry(args: argparse.Namespace) -> None:
    """Flags not given take the project's [[collect]] entry's values (the dashboard starts the receiver
    with --project alone: collect/beside.py); a listen address is needed from one or the other."""
    entry = team_config.current().collect_for(args.project)
    if entry is not None:
        args.listen = args.listen or entry.listen
        args.token_env = args.token_env or entry.token_env
        args.alert = args.alert or list(entry.alerts)
        if not args.webhook:
            args.webhook_env = args.webhook_env or entry.webhook_env
    if not args.listen:
        raise UsageError("--listen HOST:PORT is required (or a [[collect]] entry for the project with listen = ...)")
    if args.webhook_env:
        args.webhook = (secret(args.webhook_env) or "").strip()
        if not args.webhook:
            raise UsageError(f"--webhook-env {args.webhook_env}: the variable is not set or empty; "
                             f"export {args.webhook_env}=<webhook URL> first")


def run_collect(args: argparse.Namespace) -> int:
    from ..service import history

    from_entry(args)
    host, port = listen_address(args.listen)
    token = bearer_token(args.token_env)
    rules, config = collect_settings(args)
    limits = limits_of(args)
    store = history.open_history(history.history_for(args.history))
    poll_alerts = alerts_for(args, store)
    live = LiveRuns(store, args.project, config, settle=limits.settle).start()
    receiver = Receiver(live, Sampler(rules), token=token, limits=limits)
    try:
        server = serve(receiver, host, port)
    except OSError as exc:
        live.close()
        raise UsageError(f"--listen {args.listen}: cannot listen there ({exc.strerror or exc})") from None
    worker = local_worker(store)  # None with `[runs] workers = "external"`: `ragmeter worker`s score the jobs
    print(f"ragmeter collect: listening on http://{host}:{port}/v1/traces for project {args.project!r} "
          f"({rules.describe()}; judge {config.judge}{' ' + config.model if config.model else ''}; "
          f"{'bearer token from ' + args.token_env if token else 'no token'}); history {store.shown}; "
          f"{'scored by its own worker process' if worker else 'scored by external workers'}", file=sys.stderr)
    stop = threading.Event()
    _on_signals(stop)
    if args.parent:  # started beside a dashboard (collect/beside.py): it must not outlive a dashboard killed -9
        watch_parent(args.parent)
    try:
        _watch(receiver, stop, args.status_every, poll_alerts)
    finally:
        server.close()
        live.close()
        if worker is not None:
            worker.shutdown(8.0)  # rows in flight are finished and kept; the rest is scored at the next start
        print(f"ragmeter collect: stopped; {receiver.status_line()}", file=sys.stderr)
    return EXIT_OK


def _on_signals(stop: threading.Event) -> None:
    def handler(signum: int, frame: Any) -> None:
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, handler)


def _watch(receiver: Receiver, stop: threading.Event, every: float, poll_alerts: Optional[Callable[[], None]]) -> None:
    """Until a signal: a status line every `every` seconds, alerts polled each second."""
    waited = 0.0
    while not stop.wait(1.0):
        waited += 1.0
        if poll_alerts is not None:
            try:
                poll_alerts()
            except RagmeterError as exc:
                print(f"ragmeter collect: alerts: {exc}", file=sys.stderr)
        if every and waited >= every:
            waited = 0.0
            error = receiver.sink.error if isinstance(receiver.sink, LiveRuns) else None
            print(f"ragmeter collect: {receiver.status_line()}"
                  + (f"; scoring waits: {error}" if error else ""), file=sys.stderr)


__all__: List[str] = ["run_collect"]
