"""Compressed datasets (.gz, .zip): unpacked with a byte cap, then read by the reader of the file inside.

`data.jsonl.gz` is a gzip of a .jsonl file, `data.csv.zip` a zip holding one readable file (a .csv, .jsonl,
.xlsx, ...): the name inside picks the reader, as the extension does for any other file (io/filetypes.py).

A few megabytes of gzip can unpack to gigabytes (a decompression bomb), and gzip does not say how big its
content is. So the file is unpacked in chunks into a temporary file, counting every byte written, and
refused the moment the count passes the source's decoded budget (`Source.max_decoded`: the upload's byte
limit when one is given): nothing past the cap is ever unpacked, and nothing is held in memory whole. The
inner reader then opens the unpacked file as often as it needs (encoding detection reads it more than once,
a workbook seeks). A zip's members are checked first against the sizes its directory declares, then
unpacked under the same cap.
"""
from __future__ import annotations

import gzip
import shutil
import tempfile
import zipfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, Iterator, List

from ..errors import DatasetError
from .decoded import mb
from .filetypes import DATASET, FileType, file_type, reader_for
from .sources import Rows, Source, Where

GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"
CHUNK = 1 << 20  # bytes unpacked at a time: the most the count can run past the cap before it is checked


BOMB = ("unpacks to more than {limit}, the most a dataset may hold here; it may be a decompression bomb. Split the "
        "data into smaller files, or drop columns ragmeter does not read")


@dataclass
class Unpacked:
    """How many bytes were unpacked so far (a test reads it: the refusal comes at the cap, not after)."""

    limit: int
    written: int = 0


class TooBig(Exception):
    """The cap was passed while unpacking (turned into a DatasetError naming the file)."""


def unpack(packed: Any, out: IO[bytes], count: Unpacked) -> None:
    """Copy `packed` (a decompressing stream) to `out` in chunks, raising TooBig once the count passes the cap."""
    while chunk := packed.read(CHUNK):
        count.written += len(chunk)
        if count.written > count.limit:
            raise TooBig()
        out.write(chunk)


def inner_type(inner_name: str, where: Where, outer: str) -> FileType:
    """The file type of the file inside (`data.jsonl` in `data.jsonl.gz`), or what to do when it has none."""
    if not Path(inner_name).suffix:
        raise where.error(f"is a {outer} file whose name does not say what it holds; name it after the file inside "
                          f"and add {'.gz' if outer == 'gzip' else '.zip'} (data.jsonl.gz, data.csv.zip)")
    try:
        kind = file_type(inner_name, DATASET)
    except DatasetError as exc:
        raise where.error(f"holds '{inner_name}': {exc.reason}") from None
    if kind.format in ("gzip", "zip"):
        raise where.error(f"holds another compressed file ('{inner_name}'); unpack it and compress the dataset file "
                          "alone (data.jsonl.gz, data.csv.zip)")
    return kind


@contextmanager
def read_gzip(src: Source) -> Iterator[Rows]:
    """The reader of .gz (io/filetypes.py): unpacked under the cap, then read as the name without .gz says."""
    where = Where(src.name)
    _check_magic(src, GZIP_MAGIC, "gzip", where)
    inner = Path(src.name).name[: -len(Path(src.name).suffix)]
    kind = inner_type(inner, where, "gzip")
    with tempfile.TemporaryDirectory(prefix="ragmeter-gz-") as folder:
        path = Path(folder) / "data"
        _gunzip(src, path, where)
        note = f"gzip file: unpacked to {path.stat().st_size:,} bytes and read as {kind.suffix}."
        with _inner_rows(src, kind, path, note) as rows:
            yield rows


def _gunzip(src: Source, path: Path, where: Where) -> Unpacked:
    count = Unpacked(src.max_decoded)
    try:
        with src.open() as raw, gzip.GzipFile(fileobj=raw) as packed, path.open("wb") as out:
            unpack(packed, out, count)
    except TooBig:
        raise where.error(BOMB.format(limit=mb(count.limit))) from None
    except (OSError, EOFError, zlib.error) as exc:
        raise where.error(f"is a damaged gzip file ({type(exc).__name__}: {exc}); compress the file again "
                          "(gzip data.jsonl) or upload it uncompressed") from None
    return count


@contextmanager
def read_zip(src: Source) -> Iterator[Rows]:
    """The reader of .zip (io/filetypes.py): the one readable file inside, unpacked under the cap, then read."""
    where = Where(src.name)
    _check_magic(src, ZIP_MAGIC, "zip", where)
    with src.open() as raw:
        try:
            archive = zipfile.ZipFile(raw)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise where.error(f"is a damaged zip archive ({exc}); zip the file again, or upload it "
                              "uncompressed") from None
        with archive, tempfile.TemporaryDirectory(prefix="ragmeter-zip-") as folder:
            member = _member(archive, where)
            kind = inner_type(member.filename, where, "zip")
            path = Path(folder) / "data"
            _unzip(archive, member, path, src, where)
            inner = replace(src, name=f"{src.name}, file '{member.filename}'")
            with _inner_rows(inner, kind, path, f"zip archive: '{member.filename}' read as {kind.suffix}.") as rows:
                yield rows


def _member(archive: zipfile.ZipFile, where: Where) -> zipfile.ZipInfo:
    """The one data file in the archive (folders and macOS's __MACOSX copies left out)."""
    files = [i for i in archive.infolist() if not i.is_dir() and not i.filename.startswith("__MACOSX/")
             and not Path(i.filename).name.startswith(".")]
    if len(files) == 1:
        return files[0]
    names = {i.filename for i in files}
    for marker, suffix in (("xl/workbook.xml", ".xlsx"), ("content.xml", ".ods")):
        if marker in names:  # a workbook is itself a zip: renamed, it is not an archive of data files
            raise where.error(f"is a spreadsheet ({suffix}) named .zip; give it back its {suffix} name")
    if not files:
        raise where.error("is an empty zip archive; zip the dataset file itself (data.csv -> data.csv.zip)")
    shown: List[str] = [i.filename for i in files[:6]]
    more = ", ..." if len(files) > 6 else ""
    raise where.error(f"holds {len(files)} files ({', '.join(repr(n) for n in shown)}{more}); "
                      "ragmeter reads a zip holding one dataset file: zip that file alone, or unpack the archive "
                      "and give the file")


def _unzip(archive: zipfile.ZipFile, member: zipfile.ZipInfo, path: Path, src: Source, where: Where) -> None:
    refuse = BOMB.format(limit=mb(src.max_decoded))
    if member.file_size > src.max_decoded:  # the directory's own word, before a byte is unpacked
        raise where.error(f"{refuse} ('{member.filename}' declares {mb(member.file_size)})")
    try:
        with archive.open(member) as packed, path.open("wb") as out:
            unpack(packed, out, Unpacked(src.max_decoded))
    except TooBig:
        raise where.error(refuse) from None
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError, RuntimeError) as exc:
        raise where.error(f"cannot be unpacked ({type(exc).__name__}: {exc}); zip it again without a password "
                          "(deflate), or upload the file uncompressed") from None


@contextmanager
def _inner_rows(src: Source, kind: FileType, path: Path, note: str) -> Iterator[Rows]:
    inner = replace(src, format=kind.format, delimiter=kind.delimiter, open=lambda: path.open("rb"))
    with reader_for(kind.format)(inner) as rows:
        rows.notes.insert(0, note)
        yield rows


def _check_magic(src: Source, magic: bytes, what: str, where: Where) -> None:
    """Refuse a file named .gz/.zip that is not one, saying what it looks like instead."""
    with src.open() as f:
        head = f.read(8)
    if head.startswith(magic):
        return
    ext = ".gz" if what == "gzip" else ".zip"
    if head.startswith(GZIP_MAGIC):
        looks = "it is gzip-compressed: name it .gz (data.jsonl.gz)"
    elif head.startswith(ZIP_MAGIC):
        looks = "it is a zip archive: name it .zip"
    elif not head:
        looks = "it is empty"
    else:
        looks = f"it looks like an uncompressed file: remove {ext} from its name"
    raise where.error(f"is named {ext} but is not a {what} file (it does not start with {what}'s signature); {looks}")
