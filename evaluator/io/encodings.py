"""Which text encoding a dataset file uses.

UTF-8 with or without BOM, UTF-16/UTF-32 with BOM. A file that is not valid UTF-8 is read as
Windows-1252 (what Excel writes on Western Windows; Latin-1 for the five bytes cp1252 leaves
undefined), with a logged warning. NUL bytes without a BOM (a binary file, or UTF-16 without
BOM), gzip and zip/xlsx files are refused (a gzip with what to name it: .gz files are read, io/compressed.py).
"""
from __future__ import annotations

import codecs
import io
import logging
from typing import IO

from .sources import Source, Where

log = logging.getLogger("ragmeter")

_CHUNK = 1 << 20
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16 LE: its BOM starts the same way
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _decodes(src: Source, encoding: str) -> bool:
    """Whether the whole stream decodes, checked in chunks so nothing is held in memory."""
    decoder = codecs.getincrementaldecoder(encoding)()
    try:
        with src.open() as f:
            while chunk := f.read(_CHUNK):
                decoder.decode(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def choose_encoding(src: Source) -> str:
    """The encoding to read the file with; raises DatasetError for binary or mis-marked files."""
    with src.open() as f:
        head = f.read(65536)
    where = Where(src.name)
    marked = [encoding for bom, encoding in _BOMS if head.startswith(bom)]
    for encoding in marked:  # UTF-16 LE text starting with U+0000 carries the UTF-32 LE mark too
        if _decodes(src, encoding):
            return encoding
    if marked:
        label = marked[-1].replace("-sig", "").upper()
        raise where.error(f"starts with a {label} byte-order mark but is not valid {label}; "
                          "save it again as UTF-8")
    if head.startswith(b"PK\x03\x04"):
        raise where.error("is a zip archive or an Excel workbook, not a text file; in Excel use "
                          "File > Save As > 'CSV UTF-8', or export JSON Lines")
    if head.startswith(b"\x1f\x8b"):
        raise where.error("is gzip-compressed, not a text file; give it its .gz name (data.jsonl.gz: ragmeter "
                          "unpacks it) or unpack it first (gunzip)")
    if b"\x00" in head:
        raise where.error("contains NUL bytes: it is a binary file, or UTF-16 without a byte-order "
                          "mark; save it as UTF-8 text")
    if _decodes(src, "utf-8"):
        return "utf-8"
    encoding = "cp1252" if _decodes(src, "cp1252") else "latin-1"
    log.warning("%s is not valid UTF-8; read as %s. If the text looks garbled, save the file as UTF-8.",
                src.name, encoding)
    return encoding


def text_stream(src: Source, encoding: str) -> IO[str]:
    """A text stream over the source in that encoding, line ends kept as written."""
    # newline="" keeps line ends as written: csv needs that for quoted line breaks, and line
    # numbers then count the physical lines an editor shows.
    return io.TextIOWrapper(src.open(), encoding=encoding, newline="")
