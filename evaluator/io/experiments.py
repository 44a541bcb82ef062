"""Experiments and datasets from other evaluation tools (filled below)."""
from __future__ import annotations

from typing import Tuple

from .readings import Detector

DETECTORS: Tuple[Detector, ...] = ()
