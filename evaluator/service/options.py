"""What a door's options may name, read from the registries and the one settings resolver: the file formats
ragmeter reads and writes, the judge kinds, metrics and heuristic sets, a run's settings (RunConfig) and each
setting's value with its origin (team/settings.py: flag > environment > team file > default). The command
line's --help lists and checks come from here, as the pages' choices come from service.choices."""
from __future__ import annotations

from ..analysis.judging import MAX_FALLBACK_RATE
from ..io.filetypes import DATASET, DOCUMENTS, FILE_TYPES, LABELS, TESTSET, file_type, formats_for, readable_formats
from ..judges.registry import get_judge, judge_kinds
from ..metrics.combined import AUTO as AUTO_JUDGE_MODE, JUDGE_MODES, MODE_WORDS as JUDGE_MODE_WORDS
from ..metrics.heuristic_sets import DEFAULT_HEURISTICS, HEURISTIC_SETS
from ..metrics.registry import known_metrics
from ..metrics.retrieval import canonical
from ..metrics.rubric import load_rubrics
from ..runs.ab import DEFAULT_METRIC as AB_METRIC
from ..runs.run import OFFLINE, OPENAI, RunConfig
from ..team.settings import Flags, input_limits, judge, judge_cache, judge_max_tokens, run_setting

__all__ = [
    "AB_METRIC", "AUTO_JUDGE_MODE", "DATASET", "DEFAULT_HEURISTICS", "DOCUMENTS", "FILE_TYPES", "Flags", "HEURISTIC_SETS", "JUDGE_MODES", "JUDGE_MODE_WORDS",
    "LABELS",
    "MAX_FALLBACK_RATE", "OFFLINE", "OPENAI", "RunConfig", "TESTSET", "canonical", "file_type", "formats_for",
    "get_judge", "input_limits", "judge", "judge_cache", "judge_kinds", "judge_max_tokens", "known_metrics", "load_rubrics",
    "readable_formats", "run_setting",
]
