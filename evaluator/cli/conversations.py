"""`ragmeter evaluate` on a conversation dataset: replay with --target if given, score, save, report.

A conversation run is an ordinary run of the history (chat_runs.py): `ragmeter runs` lists it,
`--resume RUN_ID` scores the conversations it has no result for (its target replays only those it
never recorded), and `--rescore RUN_ID` scores its recorded replies with another judge. --batch,
--engine ray, --labels, --mapping and --dry-run are refused with the reason. `--record PATH` also
writes the replayed conversations as JSON Lines (what --no-history runs keep of a replay).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, List, Optional

from ..store.chat_records import conversation_of
from ..runs.chat_runs import ConversationRun
from .args import UsageError, parse_thresholds, run_config
from ..conversation import Conversation
from ..errors import RagmeterError
from ..io.conversations import load_conversations
from ..io.surfaces import CLI
from ..model import EvalReport
from ..targets import TargetConfig

_REFUSED = (("--batch", "batch"), ("--labels", "labels"), ("--mapping", "mapping"), ("--dry-run", "dry_run"))


class ConversationUsage(RagmeterError):
    """An option conversations do not support (exit 2)."""


def check_args(args: argparse.Namespace) -> None:
    for flag, attr in _REFUSED:
        if getattr(args, attr, None):
            raise ConversationUsage(f"{flag} does not work with a conversation dataset yet: score it without {flag}")
    if args.engine == "ray":
        raise ConversationUsage("--engine ray scores single-turn rows; drop it for a conversation dataset")


def target_config(args: argparse.Namespace) -> Optional[TargetConfig]:
    if not args.target:
        return None
    return TargetConfig.from_options(args.target, body=args.target_body, headers=args.target_header,
                                     fields=args.target_field, base_url=args.target_base_url,
                                     timeout=args.target_timeout)


def new_run(args: argparse.Namespace, store: Any) -> ConversationRun:
    found = load_conversations(args.data, surface=CLI)
    for cid, reason in found.skipped:
        print(f"warning: skipped conversation {cid}: {reason}", file=sys.stderr)
    print(f"read {len(found.conversations)} conversations ({found.format})", file=sys.stderr)
    return ConversationRun.new(run_config(args), found.conversations, dataset_name=Path(args.data).name,
                               store=store, target=target_config(args), project=args.project)


def stored_run(args: argparse.Namespace, store: Any, resumed_config: Any) -> ConversationRun:
    """--resume or --rescore of a conversation run (cli.py sends only those here)."""
    if args.rescore:
        if args.resume or args.data or args.target:
            raise UsageError("--rescore takes the saved replies of a run: give no DATA file, --resume or --target")
        return ConversationRun.rescore(store, args.rescore, run_config(args))
    config = resumed_config(args, store.get_run(args.resume).settings)
    return ConversationRun.resume(store, args.resume, config=config, target=target_config(args),
                                  target_headers=args.target_header)


def save_recording(report: EvalReport, path: Path) -> None:
    conversations: List[Conversation] = [c for c in (conversation_of(r.sample) for r in report.results) if c]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for conv in conversations:
            f.write(json.dumps(conv.to_dict(), ensure_ascii=False, default=str) + "\n")
    print(f"recorded {len(conversations)} conversations to {path} (re-score: ragmeter evaluate {path})",
          file=sys.stderr)


def evaluate(args: argparse.Namespace, store: Any, drive: Any, resumed_config: Any) -> int:
    """The conversation path of `ragmeter evaluate`: the same run, progress, output and verdict as rows.

    `drive` and `resumed_config` are cli.py's (passed in, so this module does not import cli.py back)."""
    check_args(args)
    if (args.resume or args.rescore) and store is None:
        raise UsageError("--resume and --rescore need the run history; drop --no-history")
    run = stored_run(args, store, resumed_config) if args.resume or args.rescore else new_run(args, store)
    if run.target is not None and store is None and not args.record:
        print("note: the replayed conversations are not saved (--no-history and no --record)", file=sys.stderr)

    def ended(run: Any) -> None:
        if args.record and run.target is not None and run.report is not None:
            save_recording(run.report, Path(args.record))

    return drive(run, args, parse_thresholds(args.fail_under, []), rows="conversation", ended=ended)
