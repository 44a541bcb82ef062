"""How much a columnar file decodes to, known before it is decoded into Python objects.

A 0.1 MB Parquet file can hold one 1 MB string a thousand times (dictionary encoding stores it
once): decoded, that is 1 GB of text and seconds of CPU for a server that read "0.1 MB". So an
Arrow reader here checks two things against a budget of decoded bytes (`Budget`):
- before any page is decoded, the file's metadata: the uncompressed size of every column chunk
  (what plain-encoded, highly compressed text will take);
- before each batch becomes Python rows, the batch's decoded size, counted from its arrays.
  String columns are read as dictionaries (pyarrow's `read_dictionary`), so a batch of repeated
  strings costs its dictionary and indices, and its decoded size is the dictionary's lengths
  taken by the indices: counted in Arrow, never expanded.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

from ..errors import DatasetError

DEFAULT_MAX_DECODED = 2 * 1024 ** 3  # a library or CLI read without a byte limit: 2 GiB of decoded cells


def mb(size: int) -> str:
    return f"{size / 1_000_000:,.1f} MB"


def sizes(size: int, limit: int) -> Tuple[str, str]:
    """`size` and the `limit` it exceeds, in MB, or in bytes where MB would print the same number twice
    (issue 49: "2,147.5 MB ... more than the 2,147.5 MB")."""
    if mb(size) != mb(limit):
        return mb(size), mb(limit)
    return f"{size:,} bytes", f"{limit:,} bytes"


@dataclass
class Budget:
    """Decoded bytes a file may still take; `spend` raises a DatasetError naming the file when exceeded."""

    name: str
    limit: int
    used: int = 0

    def spend(self, size: int, where: str) -> None:
        self.used += size
        if self.used > self.limit:
            limit = sizes(self.used, self.limit)[1]
            raise DatasetError(f"decodes to more than {limit} ({where}), the most a dataset may hold "
                               "here however it is compressed; split the file, or drop columns ragmeter does "
                               "not read", file=self.name)


def check_metadata(metadata: Any, budget: Budget) -> None:
    """Refuse a Parquet file whose column chunks, uncompressed, already exceed the budget."""
    total = sum(metadata.row_group(i).column(j).total_uncompressed_size
                for i in range(metadata.num_row_groups) for j in range(metadata.num_columns))
    if total > budget.limit:
        budget.spend(total, f"its columns hold {sizes(total, budget.limit)[0]} uncompressed")


def string_columns(metadata: Any) -> List[str]:
    """The top-level string and binary columns of a Parquet file, for `read_dictionary`.

    Only top-level ones: pyarrow cannot read a nested column (a list of contexts) as a dictionary
    ("Nested data conversions not implemented"); those are decoded plainly and counted per batch."""
    schema = metadata.schema
    return [schema.column(j).path for j in range(metadata.num_columns)
            if schema.column(j).physical_type == "BYTE_ARRAY" and "." not in schema.column(j).path]


def decoded_size(array: Any) -> int:
    """The bytes `array`'s cells take once decoded (strings by their length), without decoding them."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if pa.types.is_dictionary(kind):
        lengths = _lengths(array.dictionary)
        if lengths is None:
            return int(array.nbytes)
        return int(pc.sum(pc.take(lengths, array.indices)).as_py() or 0) + 8 * len(array)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return decoded_size(array.flatten()) + 8 * len(array)
    if pa.types.is_struct(kind):
        return sum(decoded_size(array.field(i)) for i in range(kind.num_fields))
    lengths = _lengths(array)
    return int(array.nbytes) if lengths is None else int(pc.sum(lengths).as_py() or 0) + 8 * len(array)


def _lengths(array: Any) -> Optional[Any]:
    """Each cell's length in bytes for a string or binary array; None for any other type."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind) or \
            pa.types.is_large_binary(kind):
        return pc.binary_length(array)
    return None


def batch_size(batch: Any) -> int:
    """The decoded bytes of a record batch, column by column."""
    return sum(decoded_size(column) for column in batch.columns)
