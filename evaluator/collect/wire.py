"""Counting an export request where it lies, before any span becomes a Python object.

    check_protobuf(raw, Caps(), BodyError, BodyTooLarge)   # walks the wire format, builds nothing
    check_json(raw, Caps(), BodyError, BodyTooLarge)       # counts containers and depth in C-speed passes

Why: a protobuf span can be two bytes on the wire (an empty `spans` entry) and a thousand in Python once
decoded into dicts; 4 MB of them cost gigabytes. The walk reads the field tags of the OTLP messages
that can repeat (resource spans, scope spans, spans, events, links, key-values, array and kvlist
values), counts spans and values as it goes, and stops at the first cap passed: the cost of a hostile
request is the cap, not the request. Nesting deeper than `max_depth` is refused with a 400 (a kvlist
inside a kvlist, a thousand deep, would otherwise exhaust Python's recursion on the way in).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Type

# The OTLP trace messages' fields that hold a message we descend into: {message: {field number: message}}.
# Everything else (ids, names, times, strings, numbers) is skipped by its length or width.
_SCHEMA: Dict[str, Dict[int, str]] = {
    "request": {1: "resource_spans"},
    "resource_spans": {1: "resource", 2: "scope_spans"},
    "resource": {1: "kv"},
    "scope_spans": {1: "scope", 2: "span"},
    "scope": {3: "kv"},
    "span": {9: "kv", 11: "event", 13: "link"},
    "event": {3: "kv"},
    "link": {4: "kv"},
    "kv": {2: "any"},
    "any": {5: "array", 6: "kvlist"},
    "array": {1: "any"},
    "kvlist": {1: "kv"},
}
_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)  # JSON strings, so brackets inside them do not count
_NOT = "the protobuf body is not an ExportTraceServiceRequest ("
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


@dataclass(frozen=True)
class Caps:
    """What one request may hold: spans, values (attributes, array and kvlist items, JSON containers), depth."""

    max_spans: int = 20_000
    max_values: int = 400_000
    max_depth: int = 64


class _Count:
    def __init__(self, caps: Caps, too_large: Type[Exception]) -> None:
        self.caps, self.too_large = caps, too_large
        self.spans = self.values = 0

    def enter(self, kind: str) -> None:
        if kind == "span":
            self.spans += 1
            if self.spans > self.caps.max_spans:
                raise self.too_large(f"the request holds more than {self.caps.max_spans:,} spans "
                                     "(the receiver's cap); send smaller batches")
        elif kind in ("kv", "any"):
            self.values += 1
            if self.values > self.caps.max_values:
                raise self.too_large(f"the request holds more than {self.caps.max_values:,} attribute values "
                                     "(the receiver's cap); send smaller batches")


def check_protobuf(raw: bytes, caps: Caps, bad: Type[Exception], too_large: Type[Exception]) -> int:
    """The number of spans in an ExportTraceServiceRequest, or `too_large`/`bad` raised at the first
    cap passed or malformed field; nothing is decoded."""
    count = _Count(caps, too_large)
    _walk(memoryview(raw), 0, len(raw), "request", 0, count, caps.max_depth, bad)
    return count.spans


def _walk(buf: memoryview, pos: int, end: int, kind: str, depth: int, count: _Count, max_depth: int,
          bad: Type[Exception]) -> None:
    if depth > max_depth:
        raise bad(f"the protobuf body nests deeper than {max_depth} levels (the receiver's limit)")
    inner = _SCHEMA[kind]
    while pos < end:
        key, pos = _varint(buf, pos, end, bad)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, pos = _varint(buf, pos, end, bad)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            length, pos = _varint(buf, pos, end, bad)
            stop = pos + length
            if stop > end:
                raise bad(_NOT + "a field runs past its message)")
            child = inner.get(number)
            if child is not None:
                count.enter(child)
                _walk(buf, pos, stop, child, depth + 1, count, max_depth, bad)
            pos = stop
        else:
            raise bad(_NOT + f"a field of wire type {wire}, which OTLP never sends)")
    if pos != end:
        raise bad(_NOT + "a fixed-width field runs past its message)")


def _varint(buf: memoryview, pos: int, end: int, bad: Type[Exception]) -> "tuple[int, int]":
    value = shift = 0
    while pos < end:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            break
    raise bad(_NOT + "cut short, or a malformed number)")


def check_json(raw: bytes, caps: Caps, bad: Type[Exception], too_large: Type[Exception]) -> None:
    """Refuse an OTLP/JSON body with more objects and arrays than `caps.max_values` allows (413) or nested
    deeper than `caps.max_depth` (400), counted outside strings in a few passes over bytes."""
    brackets = _STRINGS.sub(b'""', raw).translate(None, _NOT_BRACKETS)
    opened = brackets.count(b"{") + brackets.count(b"[")
    if opened > caps.max_values + caps.max_spans:
        raise too_large(f"the JSON body holds {opened:,} objects and arrays, more than the receiver's cap of "
                        f"{caps.max_values + caps.max_spans:,}; send smaller batches")
    depth = deepest = 0
    for byte in brackets:
        depth += 1 if byte in (0x7B, 0x5B) else -1
        if depth > deepest:
            deepest = depth
            if deepest > caps.max_depth:
                raise bad(f"the JSON body nests deeper than {caps.max_depth} levels (the receiver's limit)")
