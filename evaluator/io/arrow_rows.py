"""Arrow rows: Parquet files and Hugging Face `datasets` folders written by `save_to_disk`.

Both are read with pyarrow, batch by batch, so a large file is never held whole; the `datasets`
package is not needed (a saved dataset is Arrow IPC stream files listed in its state.json). Rows
are numbered from 1 (`Where.item`), as Arrow files have no lines. pyarrow ships with the dashboard
extra; without it these formats raise a DatasetError saying what to install.
"""
from __future__ import annotations

from pathlib import Path
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, List, Tuple

from ..errors import DatasetError
from .decoded import Budget, batch_size, check_metadata, string_columns
from .sources import Records, Rows, Source, Where, folder_json

_SAVE_AGAIN = "save the dataset again with save_to_disk"

_BATCH = 1024


@contextmanager
def read_parquet(src: Source) -> Iterator[Rows]:
    """The reader of .parquet (io/filetypes.py)."""
    columns, records = parquet_records(src)
    yield Rows("binary", columns, Where(src.name), records)


@contextmanager
def read_saved_dataset(src: Source) -> Iterator[Rows]:
    """The reader of a `save_to_disk` folder (sources.SAVED_DATASET: found by its files, not an extension)."""
    columns, records = saved_dataset_records(src)
    yield Rows("binary", columns, Where(src.name), records)


def parquet_records(src: Source) -> Tuple[List[str], Records]:
    """The columns of a Parquet file and its rows; DatasetError when it decodes to more than
    `src.max_decoded` bytes, found from its metadata or batch by batch before rows are built (io.decoded)."""
    parquet = _pyarrow(src.name, "pyarrow.parquet")
    budget = Budget(src.name, src.max_decoded)
    try:
        metadata = parquet.ParquetFile(src.open()).metadata
        # Strings stay dictionaries until a batch is known to fit: a repeated value is not copied per row.
        handle = parquet.ParquetFile(src.open(), read_dictionary=string_columns(metadata))
        columns = list(handle.schema_arrow.names)
    except Exception as exc:  # pyarrow raises ArrowInvalid/OSError subclasses for a damaged file
        raise DatasetError(f"is not a readable Parquet file ({exc}); export it again", file=src.name) from None
    check_metadata(handle.metadata, budget)
    return columns, _numbered(src.name, handle.iter_batches(batch_size=_BATCH), budget)


def saved_dataset_records(src: Source) -> Tuple[List[str], Records]:
    """The columns and rows of a `save_to_disk` folder (its Arrow files in their order)."""
    assert src.folder is not None
    files = _arrow_files(src.folder, src.name)
    columns = list(_open_stream(files[0], src.name).schema.names)
    return columns, _numbered(src.name, _batches(files, src.name), Budget(src.name, src.max_decoded))


def _arrow_files(folder: Path, name: str) -> List[Path]:
    splits_file = folder / "dataset_dict.json"
    if splits_file.is_file():
        splits = folder_json(splits_file, name, dict, _SAVE_AGAIN).get("splits") or []
        if len(splits) != 1:
            raise DatasetError(f"is a DatasetDict with splits {', '.join(map(str, splits)) or '(none)'}; "
                               f"pass one split's folder, e.g. {folder / str(splits[0] if splits else 'test')}",
                               file=name)
        return _arrow_files(folder / str(splits[0]), name)
    state = folder_json(folder / "state.json", name, dict, _SAVE_AGAIN)
    files = [folder / str(entry.get("filename", "")) for entry in state.get("_data_files") or []]
    missing = [f.name for f in files if not f.is_file()]
    if not files or missing:
        what = "no data files" if not files else "missing files: " + ", ".join(missing)
        raise DatasetError(f"state.json lists {what}; save the dataset again with save_to_disk", file=name)
    return files


def _open_stream(path: Path, name: str) -> Any:
    ipc = _pyarrow(name, "pyarrow.ipc")
    try:
        return ipc.open_stream(path.open("rb"))
    except Exception as exc:  # ArrowInvalid for a file that is not an Arrow stream
        raise DatasetError(f"holds {path.name}, which is not an Arrow stream file ({exc}); save the dataset "
                           "again with save_to_disk", file=name) from None


def _batches(files: List[Path], name: str) -> Iterator[Any]:
    for path in files:
        yield from _open_stream(path, name)


def _numbered(name: str, batches: Iterable[Any], budget: Budget) -> Records:
    number = 0
    iterator = iter(batches)
    while True:
        try:  # a damaged row group or stream surfaces only when its batch is read
            batch = next(iterator, None)
        except DatasetError:
            raise
        except Exception as exc:  # pyarrow's ArrowInvalid / OSError, or a codec's error
            raise DatasetError(f"is damaged after row {number:,}: pyarrow could not read the next rows "
                               f"({type(exc).__name__}: {_short(exc)}); export it again", file=name) from None
        if batch is None:
            return
        budget.spend(batch_size(batch), f"by row {number + batch.num_rows:,}")  # before any row is built
        for row in batch.to_pylist():
            number += 1
            yield Where(name, item=number), row


def _short(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[:limit] + "…"


def _pyarrow(name: str, module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise DatasetError("needs pyarrow to be read (Parquet and saved Hugging Face datasets): "
                           "pip install pyarrow, or pip install 'ragmeter[dashboard]'", file=name) from None
