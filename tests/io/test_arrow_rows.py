"""Parquet files and Hugging Face save_to_disk folders read like CSV and JSON Lines."""
import io
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from datafiles import load_error
from evaluator.io.datasets import inspect_dataset, load_dataset

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_parquet_and_saved_dataset_read_like_jsonl():
    """ragas_v0.* were all written by Hugging Face datasets from one Dataset (fixtures/README.md)."""
    from_jsonl = load_dataset(FIXTURES / "ragas_v0.jsonl")
    assert load_dataset(FIXTURES / "ragas_v0.parquet") == from_jsonl
    assert load_dataset(FIXTURES / "ragas_v0_saved") == from_jsonl
    assert from_jsonl[1].contexts == ["Payments: we take Visa and Mastercard.", "Cash is refused at the counter."]


def test_inspect_arrow_formats():
    for path, fmt in ((FIXTURES / "ragas_v0.parquet", "parquet"), (FIXTURES / "ragas_v0_saved", "saved")):
        preview = inspect_dataset(path)
        assert (preview.format, preview.encoding, preview.row_count) == (fmt, "binary", 2)
        assert preview.columns == ["question", "answer", "contexts", "ground_truths"]
        assert preview.mapping["ground_truth"] == "ground_truths" and preview.missing == []


def test_uploaded_parquet_bytes(tmp_path):
    data = (FIXTURES / "ragas_v0.parquet").read_bytes()
    assert len(load_dataset(io.BytesIO(data), name="upload.parquet")) == 2


def _parquet(path: Path, table: dict) -> Path:
    pq.write_table(pa.table(table), path)
    return path


def test_parquet_errors_name_row_and_column(tmp_path):
    path = _parquet(tmp_path / "bad.parquet", {"question": ["q1", "q2", "q3"], "answer": ["a", "a", "a"],
                                                "contexts": [["c"], ["c"], [None]]})
    err = load_error(path)
    assert (err.item, err.column) == (3, "contexts") and "not a JSON null" in str(err)
    err = load_error(_parquet(tmp_path / "nq.parquet", {"prompt": ["q"], "answer": ["a"]}))
    assert "no question column" in str(err) and "prompt, answer" in str(err)


def test_parquet_metadata_of_any_arrow_type_is_kept(tmp_path):
    import datetime

    path = _parquet(tmp_path / "m.parquet", {"question": ["q"], "answer": ["a"],
                                             "at": [datetime.datetime(2026, 1, 2, 3, 4)], "n": [7]})
    [s] = load_dataset(path)
    assert s.metadata == {"at": '"2026-01-02 03:04:00"', "n": "7"}


def test_damaged_parquet_and_not_a_dataset_folder(tmp_path):
    (tmp_path / "x.parquet").write_bytes(b"PAR1 not really")
    assert "not a readable Parquet file" in str(load_error(tmp_path / "x.parquet"))
    folder = tmp_path / "plain"
    folder.mkdir()
    assert "is a folder holding no file ragmeter reads" in str(load_error(folder))


def test_dataset_dict_folders_need_one_split(tmp_path):
    root = tmp_path / "dd"
    for split in ("train", "test"):
        shutil.copytree(FIXTURES / "ragas_v0_saved", root / split)
    (root / "dataset_dict.json").write_text(json.dumps({"splits": ["train", "test"]}))
    err = load_error(root)
    assert "splits train, test" in str(err) and str(root / "train") in str(err)
    assert len(load_dataset(root / "test")) == 2
    (root / "dataset_dict.json").write_text(json.dumps({"splits": ["test"]}))
    assert len(load_dataset(root)) == 2


def test_saved_dataset_with_a_missing_arrow_file(tmp_path):
    folder = shutil.copytree(FIXTURES / "ragas_v0_saved", tmp_path / "saved")
    next(folder.glob("*.arrow")).unlink()
    assert "missing files: data-00000-of-00001.arrow" in str(load_error(folder))


def test_max_bytes_counts_a_saved_dataset_s_arrow_files():
    err = load_error(FIXTURES / "ragas_v0_saved", max_bytes=100)
    assert "more than the limit of 100 bytes" in str(err)


@pytest.mark.parametrize("name", ["ragas_v0.parquet", "ragas_v0_saved"])
def test_max_rows_in_arrow_formats(name):
    assert "more than 1 rows" in str(load_error(FIXTURES / name, max_rows=1))


# --- decoded size: a small file that unpacks into gigabytes is refused before it is unpacked -----
def _bomb(rows: int = 400, cell: int = 1 << 20) -> bytes:
    """A few kB of Parquet: one `cell`-byte answer and context, dictionary-encoded, on every row."""
    big = pa.array(["x" * cell]).dictionary_encode()
    indices = pa.array([0] * rows, pa.int32())
    answers = pa.DictionaryArray.from_arrays(indices, big.dictionary)
    table = pa.table({"question": [f"q{i}?" for i in range(rows)], "answer": answers,
                      "contexts": pa.ListArray.from_arrays(pa.array(range(rows + 1), pa.int32()), answers)})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def test_a_parquet_bomb_is_refused_by_its_decoded_size_with_the_file_named():
    data = _bomb()
    assert len(data) < 100_000  # 0.1 MB that would decode to 800 MB
    with pytest.raises(Exception) as caught:
        load_dataset(io.BytesIO(data), name="bomb.parquet", max_bytes=50_000_000)
    message = str(caught.value)
    assert message.startswith("bomb.parquet: decodes to more than 50.0 MB") and "split the file" in message
    with pytest.raises(Exception, match="decodes to more than"):
        inspect_dataset(io.BytesIO(data), name="bomb.parquet", max_bytes=50_000_000)


def test_plain_text_compressed_away_is_refused_from_the_metadata(tmp_path):
    path = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"question": ["q?"] * 40, "answer": ["y" * 1_000_000 + str(i) for i in range(40)]}),
                   path, compression="zstd", use_dictionary=False)
    assert path.stat().st_size < 200_000
    with pytest.raises(Exception, match=r"plain.parquet: decodes to more than 10.0 MB \(its columns hold"):
        load_dataset(path, max_bytes=10_000_000)


def test_a_file_within_its_decoded_size_reads_as_before():
    rows = load_dataset(io.BytesIO(_bomb(rows=5, cell=1000)), name="small.parquet", max_bytes=1_000_000)
    assert len(rows) == 5 and rows[4].answer == "x" * 1000 and rows[4].contexts == ["x" * 1000]


def test_list_columns_across_several_row_groups_read_like_jsonl(tmp_path):
    """pandas and Spark write a file of many row groups; a list column (contexts) spans them."""
    rows = [{"question": f"Which desk handles case {i}?", "answer": f"Desk {i}.",
             "contexts": [f"Case {i} goes to desk {i}.", "Desks open at nine."], "ground_truth": f"Desk {i}."}
            for i in range(20)]
    path = tmp_path / "many_groups.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=6)
    assert pq.ParquetFile(path).metadata.num_row_groups == 4
    samples = load_dataset(path)
    assert [s.contexts for s in samples] == [r["contexts"] for r in rows]
    assert [s.ground_truth for s in samples] == [r["ground_truth"] for r in rows]
