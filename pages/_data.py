"""Datasets for the dashboard: uploads and bundled samples, parsed once per content.

The parsing is the service's (service.preview_upload, service.load_upload); this module decides where a parse
is kept. Small files are parsed into st.cache_data, shared by every session. A file over CACHE_MAX_BYTES is
parsed for its session alone and kept only as that session's dataset: the shared cache would hold
up to 8 large datasets for as long as the server runs, whoever uploaded them.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import streamlit as st

from evaluator import service
from evaluator.model import EvalSample
from evaluator.service import load_upload as load_dataset  # the one parse of a dataset upload (tests count it)

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_data"
DEFAULT_SAMPLE = "sample.jsonl"
SAMPLE_SUFFIXES = (".csv", ".jsonl", ".json")
DEFAULT_MAX_ROWS = 100_000
DEFAULT_MAX_MB = 200  # matches server.maxUploadSize in .streamlit/config.toml
CACHE_MAX_BYTES = 5_000_000  # uploads above this are never put in the shared parse cache


@dataclass
class LoadedDataset:
    """The dataset the Evaluate page will score."""

    name: str
    samples: List[EvalSample]
    token: str  # content + mapping digest: a new token means a new dataset



def bundled_files() -> List[str]:
    """The bundled sample files, the default first."""
    names = sorted(p.name for p in SAMPLE_DIR.glob("*") if p.suffix in SAMPLE_SUFFIXES)
    return sorted(names, key=lambda n: n != DEFAULT_SAMPLE)


@st.cache_data(max_entries=8, show_spinner=False)
def preview(data: bytes, name: str, max_bytes: Optional[int], sheet: Optional[str] = None) -> service.DatasetPreview:
    """Columns, first rows and detected mapping of an upload (of a workbook: `sheet`, else the one found; cached by
    content)."""
    return service.preview_upload(data, name, max_bytes, sheet)


def parse(data: bytes, name: str, mapping: Tuple[Tuple[str, Optional[str]], ...],
          max_rows: Optional[int], max_bytes: Optional[int], needs_answer: bool = True,
          sheet: Optional[str] = None) -> List[EvalSample]:
    """The samples of an upload under `mapping` (a workbook's `sheet`)."""
    return load_dataset(data, name, dict(mapping), max_rows=max_rows, max_bytes=max_bytes, needs_answer=needs_answer,
                        sheet=sheet)


cached_parse = st.cache_data(max_entries=8, show_spinner="Reading the dataset…")(parse)  # small files only


def load_bytes(data: bytes, name: str, mapping: Optional[Dict[str, Optional[str]]] = None, *,
               max_rows: Optional[int] = DEFAULT_MAX_ROWS,
               max_bytes: Optional[int] = DEFAULT_MAX_MB * 1_000_000, needs_answer: bool = True,
               held: Optional[LoadedDataset] = None, sheet: Optional[str] = None) -> LoadedDataset:
    """Parse uploaded bytes into a LoadedDataset; raises DatasetError with file/line/column.

    `needs_answer=False` reads files without answers (a target will answer each question). `held`
    is the session's dataset: when it is this very content and mapping it is returned as it is, so a
    large file (never in the shared cache) is not parsed again on every rerun.
    """
    items = tuple(sorted((mapping or {}).items()))
    token = service.upload_token(data, items, needs_answer, max_rows, max_bytes, *([sheet] if sheet else []))
    if held is not None and held.token == token:
        return held
    reader = cached_parse if len(data) <= CACHE_MAX_BYTES else parse
    return LoadedDataset(name, reader(data, name, items, max_rows, max_bytes, needs_answer, sheet), token)


def load_sample(name: str = DEFAULT_SAMPLE) -> LoadedDataset:
    """A bundled sample dataset."""
    return load_bytes((SAMPLE_DIR / name).read_bytes(), name)
