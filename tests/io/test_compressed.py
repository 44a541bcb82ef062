"""Compressed datasets (io/compressed.py): .gz and .zip of any readable format, read as the file inside, and a
decompression bomb refused at the byte cap, before it is unpacked whole."""
import gzip
import io
import zipfile
from pathlib import Path

import pytest

from evaluator.errors import DatasetError
from evaluator.io.compressed import CHUNK, read_gzip
from evaluator.io.datasets import inspect_dataset, load_dataset
from evaluator.io.sources import Source
from evaluator.io.uploads import load_upload

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
UPLOAD_LIMIT = 200_000_000  # the dashboard's default upload limit ([server].max_upload_mb = 200)


def _fields(samples):
    return [(s.sample_id, s.question, s.answer, s.contexts, s.ground_truth) for s in samples]


@pytest.mark.parametrize("packed, plain, note", [
    ("sample.jsonl.gz", "sample_data/sample.jsonl", "gzip file: unpacked to "),
    ("sample.csv.zip", "sample_data/sample.csv", "zip archive: 'sample.csv' read as .csv."),
])
def test_a_compressed_file_reads_as_the_file_inside(packed, plain, note):
    notes = []
    samples = load_dataset(FIXTURES / packed, notes=notes)
    assert _fields(samples) == _fields(load_dataset(ROOT / plain))
    assert len(samples) == 28 and samples[0].contexts  # the file holds contexts: they are read
    assert notes[0].startswith(note), notes


def test_an_upload_of_a_gzip_previews_as_jsonl():
    data = (FIXTURES / "sample.jsonl.gz").read_bytes()
    preview = inspect_dataset(io.BytesIO(data), name="sample.jsonl.gz")
    assert (preview.format, preview.row_count) == ("gzip", 28)
    assert {"question", "answer", "contexts"} <= set(preview.mapping)


LINES = b'{"question": "q", "answer": "a"}\n' * 32_768
MEMBER = gzip.compress(LINES, compresslevel=9, mtime=0)
RATIO = len(LINES) / len(MEMBER)  # unpacked bytes per packed byte (several hundred)


def _bomb(size: int = 5_000_000) -> bytes:
    """About `size` bytes of gzip (members one after another, as `cat a.gz b.gz` makes) that unpack RATIO times larger."""
    return MEMBER * (size // len(MEMBER) + 1)


class CountingBytes(io.BytesIO):
    """The packed file's bytes, counting how many a reader took."""

    taken = 0

    def read(self, n=-1):
        chunk = super().read(n)
        CountingBytes.taken += len(chunk)
        return chunk


def test_a_gzip_that_unpacks_past_the_upload_limit_is_refused_before_it_is_unpacked_whole():
    bomb = _bomb()
    assert 5_000_000 <= len(bomb) < 5_100_000
    assert len(bomb) * RATIO > 2 * UPLOAD_LIMIT  # whole, it would unpack to more than twice the limit
    CountingBytes.taken = 0
    # the upload as the dashboard reads it (io/uploads.py), its bytes counted as the reader takes them
    src = Source("logs.jsonl.gz", "gzip", ",", lambda: CountingBytes(bomb), max_decoded=UPLOAD_LIMIT)
    with pytest.raises(DatasetError) as caught:
        with read_gzip(src):
            pass
    message = str(caught.value)
    assert message.startswith("logs.jsonl.gz: unpacks to more than 200.0 MB, the most a dataset may hold here")
    assert "decompression bomb" in message and "Split the data into smaller files" in message
    # unpacked up to the cap and one chunk past it, no further: a small part of the packed file was read
    assert CountingBytes.taken < (UPLOAD_LIMIT + CHUNK) / RATIO + 1_000_000 < len(bomb) * 0.8


def test_an_upload_past_the_limit_once_unpacked_is_refused_in_the_uploads_words():
    with pytest.raises(DatasetError) as caught:
        load_upload(_bomb(50_000), "logs.jsonl.gz", max_bytes=1_000_000)
    assert str(caught.value).startswith("logs.jsonl.gz: unpacks to more than 1.0 MB")


def test_a_zip_that_declares_more_than_the_limit_is_refused_from_its_directory(tmp_path):
    path = tmp_path / "big.csv.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("big.csv", b"question,answer\n" + b"q,a\n" * 300_000)  # 1.2 MB unpacked
    with pytest.raises(DatasetError) as caught:
        load_dataset(path, max_bytes=100_000)
    assert "unpacks to more than 0.1 MB" in str(caught.value) and "'big.csv' declares 1.2 MB" in str(caught.value)


@pytest.mark.parametrize("name, data, said", [
    ("data.jsonl.gz", b'{"question": "q", "answer": "a"}\n',
     "data.jsonl.gz: is named .gz but is not a gzip file (it does not start with gzip's signature); it looks like an "
     "uncompressed file: remove .gz from its name"),
    ("data.csv.zip", gzip.compress(b"question,answer\nq,a\n", mtime=0),
     "is named .zip but is not a zip file (it does not start with zip's signature); it is gzip-compressed: name it .gz"),
    ("data.jsonl.gz", gzip.compress(b'{"question": "q"}\n' * 100, mtime=0)[:40],
     "data.jsonl.gz: is a damaged gzip file (EOFError"),
    ("data.gz", gzip.compress(b"question,answer\nq,a\n", mtime=0),
     "is a gzip file whose name does not say what it holds; name it after the file inside and add .gz"),
    ("data.docx.gz", gzip.compress(b"x", mtime=0), "data.docx.gz: holds 'data.docx': unknown file type '.docx'"),
    ("data.jsonl", gzip.compress(b'{"question": "q"}\n', mtime=0),
     "data.jsonl: is gzip-compressed, not a text file; give it its .gz name (data.jsonl.gz: ragmeter unpacks it)"),
])
def test_a_file_that_is_not_what_its_name_says_is_refused_with_what_to_do(name, data, said):
    with pytest.raises(DatasetError) as caught:
        load_dataset(io.BytesIO(data), name=name)
    assert said in str(caught.value)


def test_a_zip_of_several_files_names_them(tmp_path):
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a.csv", "question,answer\nq,a\n")
        archive.writestr("b.csv", "question,answer\nq,a\n")
        archive.writestr("__MACOSX/._a.csv", "junk")
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    assert "holds 2 files ('a.csv', 'b.csv'); ragmeter reads a zip holding one dataset file" in str(caught.value)


def test_a_row_error_inside_a_zip_names_the_archive_and_the_file(tmp_path):
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("rows.csv", "question,answer\n,empty question\n")
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    assert str(caught.value).startswith(f"{path}, file 'rows.csv', line 2, column 'question': the question is empty")
