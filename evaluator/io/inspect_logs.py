"""inspect_ai eval logs: the `.eval` zip archive (one samples/<id>_epoch_<n>.json per sample) and the `.json`
log (its "samples" list, read by json_rows). One sample per (id, epoch):

    input      the question as the dataset gave it: the text, or a message list's last user message.
               The prompt the solver built (passages pasted around the question by prompt_template)
               is in `messages`, never read as the question.
    output     the answer: output.completion, else the last assistant message
    metadata   the contexts, under the first of CONTEXT_KEYS it has (documents, context, ...); the rest
               kept as metadata
    target     the reference (a list of targets: the first; all kept in metadata)
    scores     each scorer's value as external_inspect_<scorer> ("C"/"I"/"P" as 1/0/0.5), its
               explanation as metadata
A sample that ended in an error is skipped, by name, in the note.
"""
from __future__ import annotations

import json
import zipfile
from contextlib import contextmanager
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple

from .experiments import CONTEXT_KEYS, regrouped
from .grades import grade_column, grades_of
from .readings import Reading, Tally
from .sources import Records, Rows, Source, Where

EVAL_FORMAT = "inspect_eval"  # the Source.format of a .eval archive
MAX_MEMBER_BYTES = 256 * 1024 * 1024  # one sample's JSON, unpacked: a zip bomb stops here, not in memory
_USED = ("id", "epoch", "input", "target", "messages", "output", "scores", "metadata", "events", "store",
         "attachments", "events_data", "model_usage", "role_usage", "error", "error_retries", "uuid")
_DROPPED = ("events", "store", "attachments", "events_data", "messages")  # the transcript: large, not a sample


def detect(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
           ) -> Optional[Reading]:
    if not {"input", "epoch"} <= set(by_key) or not {"target", "scores", "output"} & set(by_key):
        return None
    return regrouped("inspect_ai eval log", "samples",
                     "inspect_ai log: the sample's input is the question (not the prompt the solver built), "
                     "output.completion the answer, contexts from the sample's metadata, target the reference; "
                     "each scorer's value kept as external_inspect_<scorer>.", _sample)


def _sample(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
    row = _resolved(row, _dict(row.get("attachments")))
    sid = f"{row.get('id')}" if row.get("epoch") in (None, 1) else f"{row.get('id')} (epoch {row['epoch']})"
    if row.get("error"):
        message = row["error"].get("message") if isinstance(row["error"], dict) else row["error"]
        tally.skip(f"sample {sid}", f"it ended in an error ({str(message)[:80]})")
        return None
    meta = _dict(row.get("metadata"))
    key = next((k for k in CONTEXT_KEYS if meta.get(k)), None)
    target = row.get("target")
    targets = target if isinstance(target, list) else [target]
    scores = _dict(row.get("scores"))
    out: Dict[str, Any] = {
        "sample_id": sid, "question": _question(row.get("input")), "answer": _answer(row),
        "contexts": meta.get(key) if key else None, "ground_truth": targets[0] if targets else None,
        **grades_of("inspect", _score_pairs(scores)),
        **{f"{grade_column('inspect', n)}_explanation": s.get("explanation") for n, s in scores.items()
           if isinstance(s, dict)},
        **{f"metadata.{k}": v for k, v in meta.items() if k != key},
    }
    if len(targets) > 1:
        out["targets"] = targets
    tally.count("with contexts", 1 if key else 0)
    rest = {k: v for k, v in row.items() if k not in _USED and k not in _DROPPED}
    return {**rest, **out}


_ATTACHMENT = "attachment://"


def _resolved(value: Any, attachments: Mapping[str, Any]) -> Any:
    """inspect_ai moves long texts into the sample's attachments, leaving "attachment://<hash>": put them back."""
    if isinstance(value, str) and value.startswith(_ATTACHMENT):
        return attachments.get(value[len(_ATTACHMENT):], value)
    if isinstance(value, dict):
        return {k: v if k in _DROPPED else _resolved(v, attachments) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolved(v, attachments) for v in value]
    return value


def _dict(value: Any) -> Dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _score_pairs(scores: Mapping[str, Any]) -> Iterable[Tuple[str, Any]]:
    for name, score in scores.items():
        value = score.get("value") if isinstance(score, dict) else score
        if isinstance(value, dict):  # a scorer of several values: one grade each
            yield from ((f"{name}_{k}", v) for k, v in value.items())
        elif not isinstance(value, list):
            yield name, value


def _question(value: Any) -> Any:
    if isinstance(value, list):  # chat messages: the user's own words, not the system prompt
        users = [m for m in value if isinstance(m, dict) and m.get("role") == "user"]
        return _content(users[-1]) if users else None
    return value


def _answer(row: Dict[str, Any]) -> Any:
    output = _dict(row.get("output"))
    if output.get("completion"):
        return output["completion"]
    for choice in output.get("choices") or []:
        text = _content((choice or {}).get("message") or {})
        if text:
            return text
    replies = [m for m in row.get("messages") or [] if isinstance(m, dict) and m.get("role") == "assistant"]
    return _content(replies[-1]) if replies else None


def _content(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    texts = [p.get("text") for p in content or [] if isinstance(p, dict) and p.get("type") == "text"]
    return "\n".join(t for t in texts if isinstance(t, str))


# --- the .eval archive ------------------------------------------------------------------------------

@contextmanager
def read_eval(src: Source) -> Iterator[Rows]:
    """The reader of .eval (io/filetypes.py): a zip of JSON samples."""
    yield Rows("binary", [], None, eval_records(src))


def eval_records(src: Source) -> Records:
    """The samples of a .eval archive in the archive's order, each with its 1-based item."""
    try:
        archive = zipfile.ZipFile(src.open())
    except zipfile.BadZipFile:
        raise Where(src.name).error("is not an inspect_ai .eval archive (not a zip file); write the log again "
                                    "with inspect eval --log-format eval, or load its .json log") from None
    with archive:
        members = _sample_members(archive, src.name)
        for number, info in enumerate(members, 1):
            here = Where(src.name, item=number)
            if info.file_size > MAX_MEMBER_BYTES:
                raise here.error(f"{info.filename} unpacks to {info.file_size:,} bytes, more than "
                                 f"{MAX_MEMBER_BYTES:,}; load a smaller log")
            try:
                sample = json.loads(_member(archive, info, src).decode("utf-8"))
            except (ValueError, UnicodeError) as exc:
                raise here.error(f"{info.filename} is not valid JSON ({exc}); the archive may be cut short") from None
            yield here, sample


_ZSTD = 93  # the zip method number inspect_ai writes with (Python's zipfile reads it only from 3.14)
_LOCAL_HEADER = 30  # bytes before a member's name in its local header


def _member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, src: Source) -> bytes:
    """A member's bytes, Zstandard members included (zstandard package, the `formats` extra)."""
    if info.compress_type != _ZSTD:
        with archive.open(info) as member:
            return _capped(member.read(MAX_MEMBER_BYTES + 1), info, src)
    try:
        import zstandard
    except ImportError:
        raise Where(src.name).error("is an inspect_ai .eval archive compressed with Zstandard; install it with "
                                    "pip install 'ragmeter[formats]' (the zstandard package), or load the "
                                    "log's .json form (inspect log convert --to json)") from None
    with src.open() as raw:
        raw.seek(info.header_offset)
        header = raw.read(_LOCAL_HEADER)
        skip = int.from_bytes(header[26:28], "little") + int.from_bytes(header[28:30], "little")
        raw.seek(info.header_offset + _LOCAL_HEADER + skip)
        packed = raw.read(info.compress_size)
    reader = zstandard.ZstdDecompressor().stream_reader(packed)
    return _capped(reader.read(MAX_MEMBER_BYTES + 1), info, src)


def _capped(data: bytes, info: zipfile.ZipInfo, src: Source) -> bytes:
    """The member's bytes, refused past the cap (the size in the zip's directory could lie: the cap is on
    what actually unpacks, read at most one byte past it)."""
    if len(data) > MAX_MEMBER_BYTES:
        raise Where(src.name).error(f"{info.filename} unpacks to more than {MAX_MEMBER_BYTES:,} bytes; load a "
                                    "smaller log")
    return bytes(data)


def _sample_members(archive: zipfile.ZipFile, name: str) -> List[zipfile.ZipInfo]:
    members = [i for i in archive.infolist() if i.filename.startswith("samples/") and i.filename.endswith(".json")]
    if not members:
        if "header.json" in archive.namelist() or "_journal/start.json" in archive.namelist():
            raise Where(name).error("is an inspect_ai log without samples (written with --no-log-samples, or an "
                                    "eval that is still running); run the eval with samples logged and load its log")
        raise Where(name).error("is a zip archive without inspect_ai samples; ragmeter reads .eval logs written "
                                "by inspect_ai")
    return members
