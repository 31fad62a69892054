"""Example inputs for a graph: random arrays of its inputs' complete tensor types.

What runs a graph without inputs of its own: a loaded target (:mod:`gradview.loaders.targets`)
and a compiled graph's ``r``, ``b`` and ``G`` (:mod:`gradview.runtime.checks`). The
inputs together take at most :data:`MAX_EXAMPLE_BYTES`: a typo in a shape must not take
the machine down.
"""

from __future__ import annotations

from typing import Any

import numpy

from gradview.ir import Graph, TensorType

__all__ = [
    "MAX_EXAMPLE_BYTES", "ExampleInputsTooLarge", "example_inputs_for", "example_size_problem", "random_array",
]

_SCALAR_TYPES = {
    "Half": numpy.float16, "Float": numpy.float32, "Double": numpy.float64, "Int": numpy.int32,
    "Long": numpy.int64, "Bool": numpy.bool_, "Short": numpy.int16, "Char": numpy.int8, "Byte": numpy.uint8,
}


class ExampleInputsTooLarge(ValueError):
    """The example inputs would take more than :data:`MAX_EXAMPLE_BYTES`; the message names the input."""


# The most memory all example inputs together may take: a picture of a graph does
# not need more, and a typo (100000x100000x100000) must not take the machine down.
MAX_EXAMPLE_BYTES = 1 << 30


def example_size_problem(shape: tuple[int, ...], dtype: Any, budget: int = MAX_EXAMPLE_BYTES) -> str | None:
    """Why an example input of ``shape`` cannot be made (too many bytes), or None."""
    count = 1
    for size in shape:
        count *= size
    needed = count * numpy.dtype(dtype).itemsize
    if needed <= budget:
        return None
    return (
        f"a {'x'.join(map(str, shape)) or '0-d'} {numpy.dtype(dtype).name} tensor needs {_bytes(needed)}; "
        f"example inputs may take {_bytes(MAX_EXAMPLE_BYTES)} in all"
    )


def _bytes(count: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if count < 1024 or unit == "EiB":
            return f"{count:.3g} {unit}" if unit != "B" else f"{count} B"
        count /= 1024  # type: ignore[assignment]
    return f"{count} B"


def random_array(rng: numpy.random.Generator, shape: tuple[int, ...], dtype: Any) -> numpy.ndarray:
    """An example input: normal floats, small integers, random bools."""
    if numpy.dtype(dtype) == numpy.bool_:
        return rng.integers(0, 2, shape).astype(numpy.bool_)
    if numpy.issubdtype(dtype, numpy.integer):
        return rng.integers(0, 5, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def example_inputs_for(graph: Graph, seed: int = 0) -> list[Any] | None:
    """Random inputs from complete tensor types (sizes and dtype known); None if any is open."""
    rng = numpy.random.default_rng(seed)
    values = []
    left = MAX_EXAMPLE_BYTES
    for value in graph.inputs():
        type_ = value.type()
        if not isinstance(type_, TensorType) or type_.sizes is None or any(s is None for s in type_.sizes):
            return None
        dtype = _SCALAR_TYPES.get(type_.scalar_type or "")
        if dtype is None:
            return None
        too_big = example_size_problem(tuple(type_.sizes), dtype, left)
        if too_big is not None:
            raise ExampleInputsTooLarge(f"input %{value.debug_name()} of type {type_}: {too_big}; give smaller --inputs")
        values.append(random_array(rng, tuple(type_.sizes), dtype))
        left -= values[-1].nbytes
    return values
