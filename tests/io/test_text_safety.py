"""Text is made safe where it enters: NULs and lone surrogates replaced, the row kept, the repair noted."""
import json

import pytest

from datafiles import csv_text, load_error, write
from evaluator.io.datasets import inspect_dataset, load_dataset

SURROGATE_JSONL = '{"question": "Q?", "answer": "broken \\ud800 text", "contexts": ["ok", "bad \\udfff"]}\n'


def test_a_lone_surrogate_in_a_jsonl_cell_is_replaced_and_noted(tmp_path):
    (sample,) = load_dataset(write(tmp_path, "d.jsonl", SURROGATE_JSONL))
    assert sample.answer == "broken \ufffd text" and sample.contexts == ["ok", "bad \ufffd"]
    assert sample.metadata["text_repairs"] == ["answer: 1 lone surrogate replaced with U+FFFD",
                                               "contexts: 1 lone surrogate replaced with U+FFFD"]
    json.dumps(sample.answer).encode("utf-8")  # storable: SQLite, exports


def test_a_surrogate_pair_written_as_two_escapes_is_joined(tmp_path):
    path = write(tmp_path, "d.csv", csv_text([["question", "answer"], ["Q?", "ok"]]))
    line = '{"question": "Q?", "answer": "ok", "contexts": "[\'smile \\\\ud83d\\\\ude00\']"}\n'
    (sample,) = load_dataset(write(tmp_path, "p.jsonl", line))
    assert sample.contexts == ["smile \U0001F600"] and "text_repairs" not in sample.metadata
    assert load_dataset(path)[0].answer == "ok"


def test_a_nul_past_the_first_64_kib_of_a_csv_is_replaced_and_noted(tmp_path):
    filler = [["Q%d?" % i, "a" * 100, "ctx"] for i in range(800)]  # ~80 KiB before the NUL
    rows = [["question", "answer", "contexts"], *filler, ["last?", "has \x00 nul", "ctx"]]
    samples = load_dataset(write(tmp_path, "d.csv", csv_text(rows)))
    assert len(samples) == 801
    assert samples[-1].answer == "has \ufffd nul"
    assert samples[-1].metadata["text_repairs"] == ["answer: 1 NUL character replaced with U+FFFD"]


def test_a_nul_at_the_start_still_means_a_binary_file(tmp_path):
    path = write(tmp_path, "d.csv", "question,answer\n".encode("utf-16-le"))
    assert "NUL" in str(load_error(path))


def test_the_preview_of_an_upload_shows_replaced_text(tmp_path):
    preview = inspect_dataset(write(tmp_path, "d.jsonl", SURROGATE_JSONL))
    assert preview.rows[0]["answer"] == "broken \ufffd text"
    assert preview.rows[0]["contexts"] == ["ok", "bad \ufffd"]


def test_a_damaged_parquet_row_group_names_the_file(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    path = tmp_path / "d.parquet"
    table = pa.table({"question": [f"Q{i}?" for i in range(2000)], "answer": [f"answer {i} " * 20 for i in range(2000)]})
    pq.write_table(table, path, row_group_size=1000, compression="snappy")
    meta = pq.ParquetFile(path).metadata
    column = meta.row_group(1).column(1)  # the second row group's answers
    data = bytearray(path.read_bytes())
    start = column.dictionary_page_offset if column.has_dictionary_page else column.data_page_offset
    data[start:start + 64] = b"\xff" * 64  # the page header
    path.write_bytes(bytes(data))
    err = load_error(path)
    assert str(err).startswith(str(path)) and "is damaged after row" in str(err) and "export it again" in str(err)
