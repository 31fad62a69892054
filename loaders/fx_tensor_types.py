"""The tensor annotations of an FX graph printed by PyTorch (``print_readable``).

AOTAutograd's graphs in a TORCH_TRACE log annotate every value with its
dtype, sizes, strides and device in one string, ``"f32[8, 16][16, 1]cpu"``:
``f32`` is ``torch.float32`` in FX's short names, the first brackets the
sizes, the second the strides, then the device (``cpu``, ``cuda:0``). Under
dynamic shapes a size or stride may be a symbol (``f32[s77, 16][16, 1]cpu``)
and a plain symbolic integer is ``Sym(s77)``. This module reads those
strings without PyTorch, and says how many bytes a tensor holds (elements
times the element's size), which is what ``gradview saved`` adds up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gradview.runtime.tensor_sizes import ELEMENT_SIZES, Dim

__all__ = ["TensorAnnotation", "SymbolAnnotation", "parse_annotation", "DTYPES", "AnnotationError"]

# FX's short dtype names (torch.fx.graph.dtype_abbrs) -> (torch dtype name, bytes per element);
# the bytes are the runtime's table (None for sub-byte and bit dtypes).
_TORCH_NAMES = {
    "u8": "uint8", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u16": "uint16",
    "u32": "uint32", "u64": "uint64", "f16": "float16", "bf16": "bfloat16", "f32": "float32",
    "f64": "float64", "c32": "complex32", "c64": "complex64", "c128": "complex128", "b8": "bool",
    "f8e5m2": "float8_e5m2", "f8e4m3fn": "float8_e4m3fn", "f8e5m2fnuz": "float8_e5m2fnuz",
    "f8e4m3fnuz": "float8_e4m3fnuz", "f8e8m0fnu": "float8_e8m0fnu",
    "f4e2m1fnx2": "float4_e2m1fn_x2", "b1x8": "bits1x8", "b2x4": "bits2x4", "b4x2": "bits4x2",
    "b8x1": "bits8", "b16x1": "bits16",
}
DTYPES: dict[str, tuple[str, int | None]] = {short: (name, ELEMENT_SIZES[name]) for short, name in _TORCH_NAMES.items()}

_TENSOR = re.compile(r"^(?P<dtype>[a-z][a-z0-9]*)\[(?P<sizes>[^\]]*)\]\[(?P<strides>[^\]]*)\](?P<device>[a-z][a-z0-9_]*(?::\d+)?)$")

class AnnotationError(ValueError):
    """A string that is not an FX value annotation (the message quotes it)."""


@dataclass(frozen=True)
class TensorAnnotation:
    dtype: str  # torch's name: "float32"
    sizes: tuple[Dim, ...]
    strides: tuple[Dim, ...]
    device: str  # "cpu", "cuda:0"

    @property
    def element_size(self) -> int | None:
        return ELEMENT_SIZES.get(self.dtype)

    @property
    def numel(self) -> int | None:
        """Elements; None where a size is symbolic."""
        count = 1
        for size in self.sizes:
            if not isinstance(size, int):
                return None
            count *= size
        return count

    @property
    def nbytes(self) -> int | None:
        """Elements times the element's size (None where either is unknown)."""
        numel, size = self.numel, self.element_size
        return None if numel is None or size is None else numel * size


@dataclass(frozen=True)
class SymbolAnnotation:
    expr: str  # "s77", "s77*s0"


def parse_annotation(text: str) -> TensorAnnotation | SymbolAnnotation:
    """``"f32[8, 16][16, 1]cpu"`` or ``"Sym(s77)"`` (quotes around it allowed)."""
    body = text.strip().strip("\"'")
    if body.startswith("Sym(") and body.endswith(")") and _balanced(body[4:-1]):
        return SymbolAnnotation(body[4:-1].strip())
    match = _TENSOR.match(body)
    if match is None:
        raise AnnotationError(f"not a tensor annotation like 'f32[8, 16][16, 1]cpu' or 'Sym(s0)': {text!r}")
    short = match.group("dtype")
    if short not in DTYPES:
        raise AnnotationError(f"unknown dtype {short!r} in {text!r} (known: {', '.join(DTYPES)})")
    sizes, strides = _dims(match.group("sizes"), text), _dims(match.group("strides"), text, whole_is_strides=True)
    if len(sizes) != len(strides):
        raise AnnotationError(f"{len(sizes)} sizes but {len(strides)} strides in {text!r}")
    return TensorAnnotation(DTYPES[short][0], sizes, strides, match.group("device"))


def _balanced(text: str) -> bool:
    """Do the parentheses of a size expression (``((s77//2)) + 1``) pair up?"""
    depth = 0
    for char in text:
        depth += (char == "(") - (char == ")")
        if depth < 0:
            return False
    return depth == 0


def _top_level_parts(text: str) -> list[str]:
    """``"2*s77, Max(1, s0)"`` -> ``["2*s77", " Max(1, s0)"]``: commas inside parentheses stay."""
    parts, depth, start = [], 0, 0
    for position, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(text[start:position])
            start = position + 1
    parts.append(text[start:])
    return parts


_INT64_MAX = 2**63 - 1  # torch's sizes and strides are int64


def _dims(text: str, whole: str, whole_is_strides: bool = False) -> tuple[Dim, ...]:
    if not text.strip():
        return ()
    dims: list[Dim] = []
    for part in _top_level_parts(text):
        item = part.strip()
        if not item:
            raise AnnotationError(f"an empty size or stride in {whole!r}")
        if item.lstrip("-").isdigit() and int(item) < 0 and not whole_is_strides:
            raise AnnotationError(f"a negative size {item} in {whole!r}")
        if item.lstrip("-").isdigit() and abs(int(item)) > _INT64_MAX:  # as the IR parser refuses it
            raise AnnotationError(f"a size or stride beyond int64 ({item[:30]}) in {whole[:80]!r}")
        dims.append(int(item) if item.lstrip("-").isdigit() else item)
    return tuple(dims)
