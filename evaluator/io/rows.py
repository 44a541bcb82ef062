"""A source's rows, whatever its format: the reader its file type names (io/filetypes.py), or a saved dataset.

What every reader shares (single-turn datasets in datasets.py, conversations in conversations.py): the
encoding found, the columns where the format fixes them, then the records with where each one is (`Rows`).
The format's registration in io/filetypes.py names its reader; this module keeps no list of formats.
"""
from __future__ import annotations

import csv
from contextlib import contextmanager
from typing import Iterator

from ..errors import DatasetError
from .arrow_rows import read_saved_dataset
from .filetypes import reader_for
from .giskard_reports import read_report_folder
from .sources import GISKARD_REPORT, SAVED_DATASET, Rows, Source

__all__ = ["Rows", "source_rows"]


@contextmanager
def source_rows(src: Source) -> Iterator[Rows]:
    """The rows of a source; read errors that slip past the readers become a DatasetError."""
    # A saved dataset or a Giskard report is a folder found by its files (sources.py), so no extension names its reader.
    folders = {SAVED_DATASET: read_saved_dataset, GISKARD_REPORT: read_report_folder}
    read = folders.get(src.format) or reader_for(src.format)
    try:
        with read(src) as rows:
            yield rows
    except (UnicodeError, csv.Error, RecursionError) as exc:  # backstop: the readers convert these first
        raise DatasetError(f"cannot be read ({type(exc).__name__}: {exc}); save it as UTF-8 CSV or JSON Lines",
                           file=src.name) from None
