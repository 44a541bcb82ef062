"""`ragmeter note`: a note on a saved run or on one of its samples, or the run's notes listed.

    ragmeter note RUN_ID "text"                    a note on the run
    ragmeter note RUN_ID --sample ID "text"        a note on one sample (its sample_id, or #n: its n-th row)
    ragmeter note RUN_ID                           the run's notes, oldest first
    ragmeter note RUN_ID --file note.txt           the text read from a file ("-": standard input)

The author is $RAGMETER_USER, else the login name. The text is stored as typed and shown as text everywhere
(the Report, the HTML and PDF exports, the share link), never as Markdown or HTML. Exit 0, or 2 for an unknown
run or sample, an empty note or one over the size limit.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, List

from ..errors import RagmeterError
from ..safetext import drawable
from ..service import history, notes
from ..service.notes import MAX_NOTE_CHARS as MAX_CHARS


def add_note_parser(sub: Any) -> None:
    note = sub.add_parser("note", help="leave a note on a saved run or one of its samples (or list its notes)",
                          description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    note.add_argument("run_id", metavar="RUN_ID", help="the run (see 'ragmeter runs')")
    # The rest ("text", --sample, --file, --history) in any order: argparse alone cannot take a positional after
    # an option here, and `ragmeter note RUN --sample ID "text"` is how people write it.
    note.add_argument("rest", nargs=argparse.REMAINDER, metavar="[--sample ID] [--file PATH] [--history DB] [TEXT]",
                      help="the note's text (or --file PATH, '-' for standard input), --sample ID or #n for a "
                           "sample's note, --history DB; with no text, the run's notes are listed")


def _options(rest: List[str]) -> argparse.Namespace:
    parser = _RaisingParser(prog="ragmeter note RUN_ID", add_help=False)
    parser.add_argument("text", nargs="?", default=None)
    parser.add_argument("--sample", default=None)
    parser.add_argument("--file", default=None)
    parser.add_argument("--history", default=None)
    return parser.parse_args(rest)


class _RaisingParser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # a usage error (exit 2, one line), not argparse's exit
        raise RagmeterError(f"note: {message}; write: ragmeter note RUN_ID [--sample ID] \"text\"")


def _text(args: argparse.Namespace) -> Any:
    if args.file is None:
        return args.text
    if args.text is not None:
        raise RagmeterError("give the note as an argument or with --file, not both")
    if args.file == "-":
        return sys.stdin.read(MAX_CHARS * 4 + 1)
    try:
        with Path(args.file).open(encoding="utf-8") as f:
            return f.read(MAX_CHARS * 4 + 1)  # enough to say how long it is, never a whole huge file
    except (OSError, UnicodeDecodeError) as exc:
        raise RagmeterError(f"{args.file}: the note cannot be read ({exc}); give a UTF-8 text file") from None


def run_note(parsed: argparse.Namespace) -> int:
    args = _options(parsed.rest)
    args.run_id = parsed.run_id
    store = history.open_history(history.history_for(args.history))
    text = _text(args)
    if text is None:
        store.get_run(args.run_id)  # HistoryError (exit 2) for an unknown run
        found = notes.run_notes(store, args.run_id)
        if not found:
            print(f"run {args.run_id} has no notes yet; add one with: ragmeter note {args.run_id} \"text\"")
        for n in found:
            print(f"{n.created_at[:16].replace('T', ' ')}  {n.author}  on {n.on}:")
            print("\n".join(f"    {line}" for line in _printable(n.text).splitlines()))
        return 0
    # the person at the keyboard may note (a laptop's trust); the author is $RAGMETER_USER, else the login name
    note = notes.save_note(store, args.run_id, text, access=history.LAPTOP_ACCESS, sample=args.sample)
    print(f"ragmeter: noted on {note.on} of run {args.run_id} as {note.author} (note {note.note_id})")
    return 0


def _printable(text: str) -> str:
    """A note as a terminal shows it safely: control characters (an escape sequence) replaced, bidirectional
    controls removed (safetext.drawable), lines kept."""
    return "".join(c if c.isprintable() or c in "\n\t" else "\ufffd" for c in drawable(text))
