"""Sources: extensions, missing files, uploads, size limits."""
import io


from datafiles import load_error, SAMPLE, Upload, write
from evaluator.io.datasets import load_dataset


def test_unknown_extension_and_missing_file(tmp_path):
    err = load_error(write(tmp_path, "d.numbers", b"x"))  # .xlsx is read since issue 39, .ods since 48
    assert "'.numbers'" in str(err) and ".csv, .tsv, .jsonl, .ndjson, .json, .parquet, .eval" in str(err)
    assert "save_to_disk" in str(err)
    err = load_error(tmp_path / "nowhere.csv")
    assert "does not exist" in str(err)
    err = load_error(tmp_path)
    assert "is a folder holding no file ragmeter reads" in str(err)  # d.ods is not one


def test_uploaded_file_like_object():
    data = (SAMPLE / "sample.csv").read_bytes()
    upload = Upload(data, "my upload.csv")
    upload.read()  # Streamlit may have read it already: getvalue() still returns everything
    assert load_dataset(upload) == load_dataset(SAMPLE / "sample.csv")


def test_plain_bytesio_with_name_and_name_override():
    buf = io.BytesIO(b'{"question": "q", "answer": "a"}\n')
    [s] = load_dataset(buf, name="upload.jsonl")
    assert s.question == "q"
    err = load_error(io.BytesIO(b"x"))
    assert "pass name=" in str(err)


def test_max_bytes_is_checked_before_reading(tmp_path):
    path = write(tmp_path, "big.csv", "question,answer\n" + "q,a\n" * 100)
    err = load_error(path, max_bytes=100)
    assert "more than the limit of 100 bytes" in str(err) and "split the file" in str(err)
    err = load_error(Upload(path.read_bytes(), "big.csv"), max_bytes=100)
    assert "big.csv" in str(err) and "max_bytes" in str(err)
    assert len(load_dataset(path, max_bytes=10_000)) == 100
