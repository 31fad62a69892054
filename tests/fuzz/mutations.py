"""Seeded mutations of gradview's inputs, as bytes: what a truncated download, a bad
edit, a hostile file or a typo makes of a real fixture.

Each mutator takes a ``numpy.random.Generator`` and the seed's bytes and returns
the mutant's bytes; :func:`mutate` applies one to three of them. ``scale`` sizes
the expensive ones (nesting depth, the length of a long line): small in CI, large
in ``scripts/fuzz.py`` runs.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

import numpy

__all__ = ["Mutator", "TEXT_MUTATORS", "IR_MUTATORS", "mutate", "mutate_json", "mutate_spec", "recompute_md5s", "mutate_payloads"]

Mutator = Callable[[numpy.random.Generator, bytes, int], bytes]

_ALPHABET = list(b"()[]{}%:=,-<>\"'\\#\t\n .0123456789aZ_*?") + [0xFF, 0x00, 0x80, 0xC3]
_SIZES = [
    b"0", b"-1", b"1099511627776", b"9223372036854775808", b"99999999999999999999", b"2147483648", b"1e999",
    b"1", b"2", b"3", b"5",  # small ones keep the text valid and the shapes wrong
]
# Operators that take the same inputs: swapping them keeps the graph valid and changes what it computes.
_FAMILIES = [
    [b"aten::sin", b"aten::cos", b"aten::relu", b"aten::exp", b"aten::tanh", b"aten::sigmoid", b"aten::neg",
     b"aten::log", b"aten::sqrt", b"aten::t", b"aten::abs"],
    [b"aten::mul", b"aten::div", b"aten::matmul", b"aten::mm", b"aten::pow", b"aten::maximum", b"aten::eq"],
    [b"aten::add", b"aten::sub", b"aten::rsub"],
    [b"aten::sum", b"aten::mean", b"aten::max", b"aten::softmax", b"aten::log_softmax", b"aten::size"],
]
_OPS = [
    b"aten::mm", b"aten::add", b"aten::sum", b"aten::cat", b"aten::_grad_sum_to_size", b"aten::nonexistent_op",
    b"prim::DifferentiableGraph", b"prim::If", b"prim::Loop", b"prim::Constant", b"prim::TupleUnpack",
    b"prim::GradOf", b"prim::ListConstruct", b"prim::FallbackGraph", b"mylib::frobnicate",
]
_METHODS = [b".relu(", b".sum(", b".t(", b".view(", b".frobnicate(", b".sin(", b".matmul(", b".size("]


def _pick(rng: numpy.random.Generator, items: list[Any]) -> Any:
    return items[int(rng.integers(len(items)))]


def _at(rng: numpy.random.Generator, data: bytes) -> int:
    return int(rng.integers(len(data) + 1))


def truncate(rng: numpy.random.Generator, data: bytes, scale: int) -> bytes:
    return data[: _at(rng, data)]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def delete_line(rng: numpy.random.Generator, data: bytes, scale: int) -> bytes:
    lines = _lines(data)
    del lines[int(rng.integers(len(lines)))]
    return b"\n".join(lines)


def duplicate_line(rng: numpy.random.Generator, data: bytes, scale: int) -> bytes:
    lines = _lines(data)
    line = lines[int(rng.integers(len(lines)))]
    lines.insert(int(rng.integers(len(lines) + 1)), line)
    return b"\n".join(lines)


def swap_lines(rng: numpy.random.Generator, data: bytes, scale: int) -> bytes:
    lines = _lines(data)
    a, b = int(rng.integers(len(lines))), int(rng.integers(len(lines)))
    lines[a], lines[b] = lines[b], lines[a]
    return b"\n".join(lines)


def flip_chars(rng: numpy.random.Generator, data: bytes, scale: int) -> bytes:
    out = bytearray(data)
    for _ in range(int(rng.integers(1, 6))):
        if out:
            out[int(rng.integers(len(out)))] = _pick(rng, _ALPHABET)
    return bytes(out)


def _replace_match(rng: numpy.random.Generator, data: bytes, pattern: re.Pattern[bytes], choices: list[bytes]) -> bytes:
    found = list(pattern.finditer(data))
    if not found:
        return flip_chars(rng, data, 1)
    match = _pick(rng, found)
    return data[: match.start()] + _pick(rng, choices) + data[match.end():]


_INTEGER = re.compile(rb"(?<![\w.])\d+(?![\w.])")
_OP_NAME = re.compile(rb"\b(?:aten|prim)::\w+")
_METHOD = re.compile(rb"\.\w+\(")


def set_size(rng: numpy.random.Generator, data: bytes, scale: int) -> bytes:
    return _replace_match(rng, data, _INTEGER, _SIZES)


def change_op(rng: numpy.random.Generator, data: bytes, scale: int) -> bytes:
    pattern = _OP_NAME if _OP_NAME.search(data) else _METHOD
    if pattern is _OP_NAME and rng.integers(2):
        found = [m for m in pattern.finditer(data) if any(m.group() in family for family in _FAMILIES)]
        if found:
            match = _pick(rng, found)
            family = next(f for f in _FAMILIES if match.group() in f)
            return data[: match.start()] + _pick(rng, family) + data[match.end():]
    return _replace_match(rng, data, pattern, _OPS if pattern is _OP_NAME else _METHODS)


def nest_deep(rng: numpy.random.Generator, data: bytes, scale: int) -> bytes:
    depth = 200 * scale
    opener, closer = _pick(rng, [(b"[", b"]"), (b"(", b")"), (b"{\"a\": ", b"}")])
    balanced = bool(rng.integers(2))
    piece = opener * depth + (closer * depth if balanced else b"")
    at = _at(rng, data)
    return data[:at] + piece + data[at:]


def nest_blocks(rng: numpy.random.Generator, data: bytes, scale: int) -> bytes:
    """IR: ifs nested around the start of the graph's body (valid IR, as deep as the parser allows, or deeper)."""
    header = data.find(b"):\n")
    if header < 0:
        return nest_deep(rng, data, scale)
    depth = int(_pick(rng, [20, 60, 99, 100, 101, 150 * scale]))
    lines = [b"  %fz_c : bool = prim::Constant[value=1]()", b"  %fz_t : Tensor = prim::Uninitialized()"]
    for d in range(depth):
        lines += [b"  %%fz%d : Tensor = prim::If(%%fz_c)" % d, b"    block0():"]
    lines.append(b"  %%fz%d : Tensor = prim::Uninitialized()" % depth)
    for d in reversed(range(depth)):
        lines += [b"    -> (%%fz%d)" % (d + 1), b"    block1():", b"    -> (%fz_t)"]
    at = header + 3
    return data[:at] + b"\n".join(lines) + b"\n" + data[at:]


def non_utf8(rng: numpy.random.Generator, data: bytes, scale: int) -> bytes:
    at = _at(rng, data)
    return data[:at] + _pick(rng, [b"\xff\xfe", b"\x80", b"\xc3(", b"\xed\xa0\x80", b"\x00"]) + data[at:]


def long_line(rng: numpy.random.Generator, data: bytes, scale: int) -> bytes:
    lines = _lines(data)
    at = int(rng.integers(len(lines) + 1))
    filler = _pick(rng, [b"a", b"9", b"(", b"%x", b" "])
    lines.insert(at, filler * (50_000 * scale // len(filler)))
    return b"\n".join(lines)


TEXT_MUTATORS: list[Mutator] = [
    truncate, delete_line, duplicate_line, swap_lines, flip_chars, set_size, change_op, nest_deep, non_utf8, long_line,
]


IR_MUTATORS: list[Mutator] = [*TEXT_MUTATORS, nest_blocks]

# Mutations that keep most of the text readable are drawn more often, so that
# mutants get past the parser into the passes, the executor and the exporters.
_WEIGHTS = {set_size: 4, change_op: 4, delete_line: 3, duplicate_line: 3, swap_lines: 2}


def mutate(rng: numpy.random.Generator, data: bytes, scale: int = 1, mutators: list[Mutator] | None = None) -> bytes:
    """One mutation of ``data`` (sometimes two or three)."""
    chosen = mutators or TEXT_MUTATORS
    weights = numpy.array([_WEIGHTS.get(m, 1) for m in chosen], dtype=float)
    for _ in range(int(rng.choice([1, 2, 3], p=[0.6, 0.3, 0.1]))):
        data = chosen[int(rng.choice(len(chosen), p=weights / weights.sum()))](rng, data, scale)
    return data


# -- JSON (saved traces) -----------------------------------------------------------------
_DEEP = "\x00DEEP\x00"
_JSON_VALUES: list[Any] = [None, -1, 0, 2**40, 2**64, 1e308, "x", [], {}, True, "aten::mm", [1e999], _DEEP, "n", "b"]


def mutate_json(rng: numpy.random.Generator, data: bytes, scale: int = 1) -> bytes:
    """A structural mutation of a JSON document: one value replaced, deleted or duplicated."""
    try:
        document = json.loads(data)
    except ValueError:
        return mutate(rng, data, scale)
    slots: list[tuple[Any, Any]] = []
    pending = [document]
    while pending:  # every (container, key), without recursion
        item = pending.pop()
        keys = list(item) if isinstance(item, dict) else range(len(item)) if isinstance(item, list) else []
        for key in keys:
            slots.append((item, key))
            if isinstance(item[key], dict | list):
                pending.append(item[key])
    if not slots:
        return mutate(rng, data, scale)
    container, key = _pick(rng, slots)
    action = int(rng.integers(3))
    if action == 0:
        del container[key]
    elif action == 1 and isinstance(container, list):
        container.insert(key, container[key])
    else:
        container[key] = _pick(rng, _JSON_VALUES)
    text = json.dumps(document)
    depth = 200 * scale
    return text.replace(json.dumps(_DEEP), "[" * depth + "]" * depth).encode()


# -- TORCH_TRACE logs with their MD5s kept right ------------------------------------------
_ENVELOPE = re.compile(rb"^(?P<prefix>[IWEVD]\d{4} [^\]]*\] )(?P<json>\{.*\})\s*$")


def _entries(data: bytes) -> list[list[bytes]]:
    """The log's lines grouped: each envelope with the tab-indented payload lines after it."""
    groups: list[list[bytes]] = []
    for line in data.split(b"\n"):
        if line.startswith(b"\t") and groups:
            groups[-1].append(line)
        else:
            groups.append([line])
    return groups


def recompute_md5s(data: bytes) -> bytes:
    """Each envelope's ``has_payload`` set to its payload's MD5, as PyTorch writes it."""
    out = []
    for group in _entries(data):
        head, payload = group[0], group[1:]
        match = _ENVELOPE.match(head)
        if match is not None and payload:
            try:
                envelope = json.loads(match.group("json"))
            except ValueError:
                envelope = None
            if isinstance(envelope, dict) and "has_payload" in envelope:
                body = b"\n".join(line[1:] for line in payload)
                envelope["has_payload"] = hashlib.md5(body).hexdigest()  # PyTorch's checksum
                head = match.group("prefix") + json.dumps(envelope).encode()
        out.append(b"\n".join([head, *payload]))
    return b"\n".join(out)


def mutate_payloads(rng: numpy.random.Generator, data: bytes, scale: int = 1) -> bytes:
    """A mutation inside one entry's payload (or envelope JSON), then every MD5 recomputed,
    so the reader gets past its checksum to the graph text."""
    groups = _entries(data)
    with_payload = [i for i, g in enumerate(groups) if len(g) > 1]
    if with_payload:
        index = _pick(rng, with_payload)
        body = b"\n".join(line[1:] for line in groups[index][1:])
        mutated = mutate(rng, body, scale, [m for m in TEXT_MUTATORS if m is not non_utf8])
        groups[index] = [groups[index][0], *(b"\t" + line for line in mutated.split(b"\n"))]
    else:
        index = int(rng.integers(len(groups)))
        groups[index] = [mutate_json(rng, groups[index][0], scale), *groups[index][1:]]
    return recompute_md5s(b"\n".join(b"\n".join(g) for g in groups))


# -- --inputs specs ---------------------------------------------------------------------
_DTYPES = ["", ":f32", ":i64", ":bool", ":f16", ":xyz", ":nograd", ":f32:nograd", ":", "::"]
_NUMBERS = ["0", "-1", "1099511627776", "99999999999999999999", "100000", "1.5", "", "()", "x", "3e4"]


def mutate_spec(rng: numpy.random.Generator, spec: str, scale: int = 1) -> str:
    """A mutated ``--inputs`` spec: entries deleted, duplicated or swapped, sizes and
    dtypes changed, names added, characters flipped."""
    entries = spec.split(",")
    for _ in range(int(rng.integers(1, 4))):
        action = int(rng.integers(8))
        at = int(rng.integers(len(entries))) if entries else 0
        if action == 0 and entries:
            del entries[at]
        elif action == 1 and entries:
            entries.insert(at, entries[at])
        elif action == 2 and len(entries) > 1:
            other = int(rng.integers(len(entries)))
            entries[at], entries[other] = entries[other], entries[at]
        elif action == 3 and entries:
            dims = entries[at].split(":")[0].split("x")
            dims[int(rng.integers(len(dims)))] = _pick(rng, _NUMBERS)
            entries[at] = "x".join(dims)
        elif action == 4 and entries:
            entries[at] = entries[at].split(":")[0] + _pick(rng, _DTYPES)
        elif action == 5 and entries:
            entries[at] = _pick(rng, ["x=", "q=", "%x=", "=", "w1="]) + entries[at]
        elif action == 6:
            text = ",".join(entries)
            entries = flip_chars(rng, text.encode(), scale).decode("utf-8", "replace").split(",")
        else:
            entries.insert(at, _pick(rng, ["none", "true", "(2,3)", "()", "8x4x", "x", " ", "2" * (20 * scale)]))
    return ",".join(entries)
