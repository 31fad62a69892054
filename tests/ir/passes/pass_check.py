"""Shared check for pass tests: run a pass and prove it kept the graph's meaning.

``check_pass(pass_fn, text, inputs, changes=True)`` parses ``text``, runs the
graph on ``inputs``, applies the pass to a copy, lints the result, checks the
pass's return value against ``changes`` (a pass must report exactly whether
it changed the graph), runs the new graph on the same inputs and compares
every output. It returns the transformed graph for text checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradview.ir import Graph, parse_ir
from gradview.runtime import run_graph

__all__ = ["check_pass", "assert_same_outputs", "assert_in_order", "kinds", "long_chain"]


def assert_same_outputs(before: Sequence[Any], after: Sequence[Any]) -> None:
    assert len(before) == len(after), f"{len(before)} outputs before the pass, {len(after)} after"
    for index, (a, b) in enumerate(zip(before, after, strict=True)):
        if isinstance(a, list | tuple):
            assert isinstance(b, list | tuple) and len(a) == len(b), f"output {index}: {a!r} vs {b!r}"
            assert_same_outputs(a, b)
        elif a is None or isinstance(a, bool | int | float | str):
            assert a == b, f"output {index}: {a!r} before, {b!r} after"
        else:
            a_arr, b_arr = np.asarray(a), np.asarray(b)
            assert a_arr.dtype == b_arr.dtype and a_arr.shape == b_arr.shape, f"output {index}"
            np.testing.assert_allclose(b_arr, a_arr, rtol=1e-12, atol=0, equal_nan=True)


def check_pass(
    pass_fn: Callable[[Graph], bool],
    text: str,
    inputs: Sequence[Any],
    changes: bool,
) -> Graph:
    graph = parse_ir(text)
    graph.lint()
    before = run_graph(graph, list(inputs))
    transformed = graph.copy()
    printed_before = str(transformed)
    changed = pass_fn(transformed)
    transformed.lint()
    assert changed == changes, f"the pass reported changed={changed}, expected {changes}:\n{transformed}"
    if not changes:
        assert str(transformed) == printed_before, "the pass said 'unchanged' but the text changed"
    after = run_graph(transformed, list(inputs))
    assert_same_outputs(before, after)
    return transformed


def assert_in_order(text: str, pieces: list[str]) -> None:
    """FileCheck-like: each piece occurs in ``text`` after the previous one."""
    position = 0
    for piece in pieces:
        found = text.find(piece, position)
        assert found >= 0, f"{piece!r} not found after offset {position} in:\n{text}"
        position = found + len(piece)


def kinds(graph: Graph) -> list[str]:
    """Node kinds in program order, nested ones included."""
    return [node.kind() for node in graph.all_nodes()]


def long_chain(input_type: str, value_type: str, length: int = 5000) -> str:
    """IR text of a straight chain for scaling tests: ``%v1`` to ``%v<length>``
    (typed ``value_type``) alternate ``aten::tanh`` and ``aten::add(v, v, 1)``
    from the input ``%v0 : input_type``; the graph returns the last one."""
    lines = [f"graph(%v0 : {input_type}):", "  %one : int = prim::Constant[value=1]()"]
    for i in range(1, length + 1):
        op = "aten::tanh(%v{0})" if i % 2 else "aten::add(%v{0}, %v{0}, %one)"
        lines.append(f"  %v{i} : {value_type} = {op.format(i - 1)}")
    lines.append(f"  return (%v{length})")
    return "\n".join(lines)
