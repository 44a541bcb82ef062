"""No silent drop: a column that looks like a reference, contexts or ids by its name but is not read.

A file's unread columns are kept as metadata, so a "Gold answer (v2)" column the aliases did not match would
leave answer_correctness N/A with nothing said. `lookalike_warnings` names each such column, the field it looks
like, what that field is read from instead (if anything) and the one line that reads it (in the surface's
words). The CLI prints these warnings on its last lines, the dashboard in a yellow box.

Looks like, by the words of its name (split at spaces, punctuation, underscores and camelCase):
    ground_truth   reference, expected, gold, golden, ground, truth, ideal, correct, target (with answer)
    contexts       context(s), passage(s), document(s), docs, chunk(s), retrieved, retrieval, evidence, sources
    sample_id      id, uuid, qid (alone or as the last word: "question id", "exampleId")
    retrieval_ids  ids, doc ids, document ids, passage ids, retrieved ids
"""
from __future__ import annotations

import re
from typing import Iterable, List, Mapping, Optional, Sequence, Tuple

from .dialects import is_label, squash
from .grades import is_external
from .surfaces import Surface

_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
LOOKS: Tuple[Tuple[str, str, Tuple[str, ...]], ...] = (
    # (field, in words, the words that make a column look like it); tried in this order, first match wins
    ("retrieval_ids", "retrieved document ids", ("ids",)),
    ("sample_id", "sample ids", ("id", "uuid", "qid")),
    ("ground_truth", "a reference answer", ("reference", "expected", "gold", "golden", "ground", "truth", "ideal",
                                            "correct", "groundtruth")),
    ("contexts", "retrieved contexts", ("context", "contexts", "passage", "passages", "document", "documents", "docs",
                                       "chunk", "chunks", "retrieved", "retrieval", "evidence", "sources")),
)


def words(column: str) -> List[str]:
    """A column name's words, lower case: "expectedAnswer" and "Expected answer" both give expected, answer."""
    return [w.casefold() for w in _WORDS.findall(column)]


def looks_like(column: str) -> Optional[Tuple[str, str]]:
    """(field, in words) when the name looks like a field ragmeter reads; None otherwise."""
    found = words(column)
    for name, said, marks in LOOKS:
        if name == "sample_id" and found and found[-1] not in marks:
            continue  # "id" must be the last word: "id of the product" is not a sample id
        if any(w in marks for w in found):
            return name, said
    return None


def lookalike_warnings(unread: Iterable[str], fields: Mapping[str, str], surface: Surface,
                       quiet: Sequence[str] = ()) -> List[str]:
    """A warning for each unread column that looks like a field: what it looks like and how to read it (none for
    the `quiet` columns, which a recognised format leaves unread on purpose and says so in its note)."""
    said = []
    for column in unread:
        column = str(column)
        found = looks_like(column)  # first: most columns look like nothing (a file of a million columns: seconds)
        if found is None or column in quiet or is_label(column) or is_external(column) \
                or squash(column) in ("metadata", "notes"):
            continue
        name, what = found
        now = fields.get(name)
        if name == "sample_id" and now:
            continue  # one id column is read: another "... id" column is most likely the product's or user's
        instead = f"{name} is read from '{now}'" if now else f"no column gives {name}"
        said.append(f"column '{column}' looks like {what} but is not read ({instead}); if it holds {what}, "
                    f"{_advice(surface, name, column)}.")
    return said


MAX_NAMED = 12  # unread columns named one by one; the rest counted


def unread_note(tool: Optional[str], unread: Iterable[str], surface: Surface, quiet: Sequence[str] = ()) -> List[str]:
    """For a recognised tool's file: one line naming every column no field reads (kept in each sample's
    metadata), beside the look-alike warnings, so nothing the tool wrote is dropped without a word. Labels,
    other tools' grades (read as such), look-alikes (warned on their own) and `quiet` columns are left out."""
    if not tool:  # before the columns are read: a file of a million columns is read in seconds per pass
        return []
    left = [str(c) for c in unread if str(c) not in quiet and not is_label(str(c)) and not is_external(str(c))
            and looks_like(str(c)) is None and squash(str(c)) not in ("metadata", "notes")]
    if not left:
        return []
    named = ", ".join(repr(c) for c in left[:MAX_NAMED]) + (f" and {len(left) - MAX_NAMED:,} more"
                                                            if len(left) > MAX_NAMED else "")
    how = ("pass --mapping FIELD=COLUMN" if surface.name == "cli"
           else surface.map_column.format(field="FIELD").replace("'FIELD'", "FIELD").replace("'<your column>'", "COLUMN"))
    return [f"{tool}: {len(left):,} column{'s' if len(left) > 1 else ''} not read as any field, kept as "
            f"metadata where filled: {named}; to score one as a field, {how}."]


def _advice(surface: Surface, name: str, column: str) -> str:
    if surface.name == "cli":
        return f"pass --mapping {name}='{column}'"
    return surface.map_column.format(field=name).replace("the column", f"'{column}'", 1).replace(
        "<your column>", column)


def unread_columns(columns: Sequence[str], used: Iterable[Optional[str]]) -> List[str]:
    """The columns no field reads, in the file's order."""
    taken = {str(u) for u in used if u}
    return [c for c in columns if c not in taken]
