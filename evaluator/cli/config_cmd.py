"""`ragmeter config`: each setting a command would use and where it came from (team/settings.py resolves them).

    ragmeter config [--json] [--config FILE] [--history H] [--cache FILE | --no-cache] [--project P]
                    [--offline | --model M] [--judge NAME] [--base-url URL] [--api-key-env VAR]
                    [--engine local|ray] [--ray-address A] [--ray-workers N]

Like `git config --show-origin`: one line per setting, its value and its origin (a flag, an environment
variable, the team file and its key, or the default). The flags are those of `evaluate`, `worker` and
`collect` that change what is resolved: give them to see what that command line would use. A key is
shown as "set (N characters)" or "not set", a history URL without its password; --json prints the same
as one object, name -> {value, origin, layer}.
"""
from __future__ import annotations

import argparse
import json
from typing import Any, List

from ..team.settings import Flags, Setting, resolve

EXIT_OK = 0


def add_config_parser(sub: Any) -> None:
    """`ragmeter config`'s options; every default is None, so only what is typed counts as a flag."""
    p = sub.add_parser("config", help="show each setting (history, judge cache, user, judge, runs) and where it "
                                      "came from",
                       description="Print each setting a ragmeter command would use and where it came from: "
                                   "flag > environment > the team file ($RAGMETER_CONFIG) > default. Give the "
                                   "flags a command would get to see what it would use. Keys are never printed: "
                                   "they show as set or not set; a history URL is shown without its password.")
    p.add_argument("--json", action="store_true", help="print one JSON object: name -> {value, origin, layer}")
    p.add_argument("--config", default=None, metavar="FILE", help="resolve with this team file instead of $RAGMETER_CONFIG's")
    p.add_argument("--history", default=None, help="as evaluate/worker/collect --history")
    cache = p.add_mutually_exclusive_group()
    cache.add_argument("--cache", default=None, metavar="FILE", help="as evaluate --cache")
    cache.add_argument("--no-cache", action="store_true", default=False, help="as evaluate --no-cache")
    p.add_argument("--project", default=None, help="as evaluate --project")
    judge = p.add_mutually_exclusive_group()
    judge.add_argument("--offline", action="store_true", default=False, help="as evaluate --offline")
    judge.add_argument("--model", default=None, help="as evaluate --model")
    p.add_argument("--judge", default=None, metavar="NAME", help="a judge kind, or a [[judges]] name of the team file")
    p.add_argument("--base-url", default=None, help="as evaluate --base-url")
    p.add_argument("--api-key-env", default=None, metavar="VAR", help="as evaluate --api-key-env")
    p.add_argument("--engine", choices=("local", "ray"), default=None, help="as worker --engine")
    p.add_argument("--ray-address", default=None, metavar="ADDRESS", help="as worker --ray-address")
    p.add_argument("--ray-workers", type=int, default=None, metavar="N", help="as worker --ray-workers")


def run_config_command(args: argparse.Namespace) -> int:
    settings = resolve(Flags.of(args))
    if args.json:
        print(json.dumps(settings.to_dict(), indent=2, ensure_ascii=False))
    else:
        print("\n".join(table(list(settings))))
    return EXIT_OK


def table(settings: List[Setting]) -> List[str]:
    """NAME VALUE ORIGIN, aligned; values as they may be shown (secrets masked)."""
    rows = [("NAME", "VALUE", "ORIGIN")] + [(s.name, text(s.shown), s.origin) for s in settings]
    widths = [max(len(row[i]) for row in rows) for i in (0, 1)]
    return [f"{name:<{widths[0]}}  {value:<{widths[1]}}  {origin}" for name, value, origin in rows]


def text(value: Any) -> str:
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (list, tuple)):  # [roles] admins, [targets] allow, [[collect]] alerts
        return ", ".join(map(str, value)) or "-"
    return str(value)
