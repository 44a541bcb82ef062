"""Where a report is written (`-o PATH`): checked before the run starts, not after it.

The extension chooses the format; a path that is a folder, that cannot be created or written,
or whose extension ragmeter does not write, is refused with `OutputError` naming the path before
any judge or target call, so a long run never ends in a report that cannot be saved.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import OutputError
from .filetypes import REPORT, file_type


def check_output(path: str) -> str:
    """The report format of `path`, once it is known the file can be written there."""
    target = Path(path).expanduser()
    if target.is_dir():
        raise OutputError(f"{path} is a folder; give a file name, e.g. {target / 'report.json'}")
    fmt = file_type(path, REPORT).format  # an extension ragmeter does not write: OutputError
    if target.exists():
        if not os.access(target, os.W_OK):
            raise OutputError(f"{path} cannot be written (permission denied); choose another path")
        return fmt
    parent = target.parent
    while not parent.exists() and parent != parent.parent:  # write_output creates missing folders
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"{path} cannot be created: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{path} cannot be created: no permission to write in {parent}")
    return fmt
