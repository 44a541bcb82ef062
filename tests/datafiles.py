"""Dataset files for the loader tests: written to tmp_path the way a user would have them."""
import csv
import io
import json
from pathlib import Path

import pytest

from evaluator.errors import DatasetError
from evaluator.io.datasets import load_dataset

ROOT = Path(__file__).resolve().parent.parent


SAMPLE = ROOT / "sample_data"


def write(tmp_path, name, text, encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return path


def csv_text(rows):
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def jsonl_text(objs):
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs)


def parquet_bomb(rows: int = 300, cell: int = 1 << 20) -> bytes:
    """A few kB of Parquet whose answer and context are one `cell`-byte string on every row: with the
    defaults, 600 MB decoded (the dashboard must refuse it; bench/parquet_bomb.py measures that)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    big = pa.array(["x" * cell]).dictionary_encode()
    answers = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), big.dictionary)
    table = pa.table({"question": [f"Question {i}?" for i in range(rows)], "answer": answers,
                      "contexts": pa.ListArray.from_arrays(pa.array(range(rows + 1), pa.int32()), answers)})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def load_error(path, **kwargs):
    with pytest.raises(DatasetError) as info:
        load_dataset(path, **kwargs)
    return info.value


class Upload(io.BytesIO):
    """What Streamlit's UploadedFile offers: .name, .size, .read(), .getvalue()."""

    def __init__(self, data, name):
        super().__init__(data)
        self.name = name
        self.size = len(data)
