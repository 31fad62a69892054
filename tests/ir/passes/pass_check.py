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

__all__ = ["check_pass", "assert_same_outputs", "kinds"]


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


def kinds(graph: Graph) -> list[str]:
    """Node kinds in program order, nested ones included."""
    return [node.kind() for node in graph.all_nodes()]
