"""`ragmeter evaluate` on a conversation dataset: replay with --target if given, score, report.

Conversations run on the local engine, scored directly (not through the run history): --resume,
--rescore, --batch, --engine ray, --labels and --mapping are refused with the reason. A replay's
conversations are saved as JSON Lines (--record PATH, else beside the history, in conversations/):
re-score them by evaluating that file; evaluating it again with the same --target resumes each
conversation at its first turn not asked.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, List, Optional

from .chat_scoring import evaluate_conversations
from .conversation import Conversation
from .errors import JudgeFailed, RagmeterError
from .io.conversations import load_conversations
from .io.surfaces import CLI
from .targets import TargetConfig
from .targets.replay import chat_target, replay

_REFUSED = (("--resume", "resume"), ("--rescore", "rescore"), ("--batch", "batch"), ("--labels", "labels"),
            ("--mapping", "mapping"), ("--dry-run", "dry_run"))


class ConversationUsage(RagmeterError):
    """An option conversations do not support (exit 2)."""


def check_args(args: argparse.Namespace) -> None:
    for flag, attr in _REFUSED:
        if getattr(args, attr, None):
            raise ConversationUsage(f"{flag} does not work with a conversation dataset yet: conversations are scored "
                                    "directly; re-score by evaluating the file (or a replay's recording) again")
    if args.engine == "ray":
        raise ConversationUsage("--engine ray scores single-turn rows; drop it for a conversation dataset")


def record_path(args: argparse.Namespace) -> Optional[Path]:
    """Where a replay's conversations are saved: --record, else the history's folder (None with --no-history)."""
    if getattr(args, "record", None):
        return Path(args.record)
    if args.no_history:
        return None
    from .history import default_history_path

    folder = (Path(args.history).expanduser().parent if args.history else default_history_path().parent)
    return folder / "conversations" / f"{Path(args.data).stem}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"


def replayed(conversations: List[Conversation], args: argparse.Namespace) -> List[Conversation]:
    config = TargetConfig.from_options(args.target, body=args.target_body, headers=args.target_header,
                                       fields=args.target_field, base_url=args.target_base_url,
                                       timeout=args.target_timeout)
    target = chat_target(config)
    out = []
    for n, conv in enumerate(conversations, 1):
        out.append(replay(conv, target, args.target, config.policy))
        if not args.quiet:
            print(f"\rtarget: {n}/{len(conversations)} conversations replayed", end="", file=sys.stderr)
    if not args.quiet:
        print(file=sys.stderr)
    return out


def save_recording(conversations: List[Conversation], path: Optional[Path]) -> None:
    if path is None:
        print("note: the replayed conversations are not saved (--no-history and no --record)", file=sys.stderr)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for conv in conversations:
            f.write(json.dumps(conv.to_dict(), ensure_ascii=False, default=str) + "\n")
    print(f"recorded {len(conversations)} conversations to {path} (re-score: ragmeter evaluate {path})",
          file=sys.stderr)


def evaluate(args: argparse.Namespace, finish: Any, run_config: Any, parse_thresholds: Any) -> int:
    """The conversation path of `ragmeter evaluate`; `finish` etc. are cli.py's, so output reads the same."""
    check_args(args)
    found = load_conversations(args.data, surface=CLI)
    for cid, reason in found.skipped:
        print(f"warning: skipped conversation {cid}: {reason}", file=sys.stderr)
    print(f"read {len(found.conversations)} conversations ({found.format})", file=sys.stderr)
    conversations = found.conversations
    if args.target:
        conversations = replayed(conversations, args)
        save_recording(conversations, record_path(args))
    config = run_config(args)
    evaluator = config.evaluator(config.build_judge())
    thresholds = parse_thresholds(args.fail_under, [])
    try:
        report = evaluate_conversations(evaluator, conversations, max_workers=config.workers)
    except JudgeFailed as exc:  # nothing is saved for conversations, so there is nothing to resume
        print(f"ragmeter: judge failed: {exc} (no conversation was scored; fix the judge and run again)",
              file=sys.stderr)
        return 3
    settings = dict(config.settings(), kind="conversations")
    return int(finish(report, args, thresholds, settings, Path(args.data).name))
