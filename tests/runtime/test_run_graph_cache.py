"""run_graph keeps its compiled function on the graph and recompiles only after an edit.

Every edit of a graph through the IR's API bumps ``Graph.version``; the
function compiled by ``run_graph`` remembers the version of the graph and of
every subgraph compiled into it, and is rebuilt when one of them changed.
Results are compared with torch (eager) on the same inputs.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.ir.passes import eliminate_dead_code, propagate_input_shapes, unroll_constant_loops
from gradview.ir.types import TensorType
from gradview.runtime import GraphRuntimeError, interpreter, run_graph

X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
Y = np.linspace(0.5, 2.0, 6).reshape(2, 3)
TX, TY = torch.from_numpy(X), torch.from_numpy(Y)

MUL = """graph(%x : Tensor, %y : Tensor):
  %z : Tensor = aten::mul(%x, %y)
  %two : int = prim::Constant[value=2]()
  %w : Tensor = aten::mul(%z, %two)
  return (%w)
"""


def _double(*sizes: int) -> TensorType:
    """A complete contiguous Double type, as shape propagation would print it."""
    strides = tuple(int(np.prod(sizes[i + 1:])) for i in range(len(sizes)))
    return TensorType("Double", tuple(sizes), strides, False, "cpu")


@pytest.fixture
def compilations(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """The graphs compiled (top level and subgraphs) while the test runs."""
    compiled: list[object] = []
    original = interpreter.CompiledGraph

    class Counting(original):  # type: ignore[misc, valid-type]
        def __init__(self, graph, *args, **kwargs) -> None:
            compiled.append(graph)
            super().__init__(graph, *args, **kwargs)

    monkeypatch.setattr(interpreter, "CompiledGraph", Counting)
    yield compiled


def test_unchanged_graph_is_compiled_once(compilations: list[object]) -> None:
    graph = parse_ir(MUL)
    for _ in range(5):
        (out,) = run_graph(graph, [X, Y])
        np.testing.assert_allclose(out, (TX * TY * 2).numpy(), rtol=1e-7)
    assert len(compilations) == 1
    # Another backend object is another entry; the same backend name is the same one.
    run_graph(graph, [X, Y], "numpy")
    assert len(compilations) == 1


def test_edit_through_the_api_recompiles_and_changes_the_result(compilations: list[object]) -> None:
    graph = parse_ir(MUL)
    np.testing.assert_allclose(run_graph(graph, [X, Y])[0], (TX * TY * 2).numpy(), rtol=1e-7)
    version = graph.version
    # Replace x * y by x + y (alpha 1), as a pass would: insert, reroute the uses, destroy.
    mul = next(n for n in graph.nodes() if n.kind() == "aten::mul")
    x, y = mul.inputs()
    with graph.insert_point(mul):
        added = graph.insert("aten::add", [x, y, 1])
    mul.output().replace_all_uses_with(added)
    mul.destroy()
    assert graph.version > version
    np.testing.assert_allclose(run_graph(graph, [X, Y])[0], ((TX + TY) * 2).numpy(), rtol=1e-7)
    assert len(compilations) == 2
    run_graph(graph, [X, Y])
    assert len(compilations) == 2


def test_attribute_change_recompiles(compilations: list[object]) -> None:
    graph = parse_ir(MUL)
    run_graph(graph, [X, Y])
    constant = next(n for n in graph.nodes() if n.kind() == "prim::Constant")
    constant.i_("value", 3)
    np.testing.assert_allclose(run_graph(graph, [X, Y])[0], (TX * TY * 3).numpy(), rtol=1e-7)
    assert len(compilations) == 2


def test_input_added_and_erased_recompiles() -> None:
    graph = parse_ir(MUL)
    run_graph(graph, [X, Y])
    graph.add_input("unused")
    with pytest.raises(GraphRuntimeError, match="takes 3 inputs"):
        run_graph(graph, [X, Y])
    assert len(run_graph(graph, [X, Y, X])) == 1
    graph.erase_input(2)
    np.testing.assert_allclose(run_graph(graph, [X, Y])[0], (TX * TY * 2).numpy(), rtol=1e-7)


def test_type_change_recompiles_the_input_checks() -> None:
    graph = parse_ir(MUL)
    run_graph(graph, [X, Y])
    graph.inputs()[0].set_type(_double(3, 3))
    with pytest.raises(GraphRuntimeError, match=r"has shape \[2, 3\] but the graph expects \[3, 3\]"):
        run_graph(graph, [X, Y])


def test_setting_the_same_type_is_not_an_edit() -> None:
    graph = parse_ir(MUL)
    value = graph.inputs()[0]
    version = graph.version
    value.set_type(value.type())
    assert graph.version == version


def test_passes_editing_in_place_give_no_stale_results(compilations: list[object]) -> None:
    text = """graph(%x : Tensor, %y : Tensor):
  %three : int = prim::Constant[value=3]()
  %true : bool = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%three, %true, %x)
    block0(%i : int, %acc : Tensor):
      %next : Tensor = aten::mul(%acc, %y)
      -> (%true, %next)
  %dead : Tensor = aten::tanh(%x)
  return (%r)
"""
    graph = parse_ir(text)
    expected = (TX * TY * TY * TY).numpy()
    np.testing.assert_allclose(run_graph(graph, [X, Y])[0], expected, rtol=1e-7)
    assert eliminate_dead_code(graph)
    assert unroll_constant_loops(graph)
    assert not any(n.kind() == "prim::Loop" for n in graph.all_nodes())
    np.testing.assert_allclose(run_graph(graph, [X, Y])[0], expected, rtol=1e-7)
    assert len(compilations) == 2
    source = next(iter(graph.derived.values())).source
    assert "while" not in source and "tanh" not in source  # the unrolled, pruned graph ran
    # Shapes propagated from complete input types: a pass that only sets types.
    for value, array in zip(graph.inputs(), (X, Y), strict=True):
        value.set_type(_double(*array.shape))
    propagate_input_shapes(graph)
    np.testing.assert_allclose(run_graph(graph, [X, Y])[0], expected, rtol=1e-7)
    with pytest.raises(GraphRuntimeError, match="has shape"):
        run_graph(graph, [X[:1], Y[:1]])


def test_edit_inside_a_subgraph_recompiles_the_graph_calling_it(compilations: list[object]) -> None:
    sub = parse_ir(MUL)
    graph = parse_ir("graph(%x : Tensor, %y : Tensor):\n  return (%x)\n")
    node = graph.create("prim::DifferentiableGraph", list(graph.inputs()), 1)
    node.g_("Subgraph", sub)
    graph.append_node(node)
    graph.return_node().replace_input(0, node.output())
    np.testing.assert_allclose(run_graph(graph, [X, Y])[0], (TX * TY * 2).numpy(), rtol=1e-7)
    assert len(compilations) == 2  # the graph and its subgraph
    constant = next(n for n in sub.nodes() if n.kind() == "prim::Constant")
    constant.i_("value", 5)
    np.testing.assert_allclose(run_graph(graph, [X, Y])[0], (TX * TY * 5).numpy(), rtol=1e-7)
    assert len(compilations) == 4


def test_failed_compilation_is_not_kept() -> None:
    graph = parse_ir("graph(%x : Tensor):\n  %y : Tensor = aten::frobnicate(%x)\n  return (%y)\n")
    for _ in range(2):
        with pytest.raises(Exception, match="frobnicate"):
            run_graph(graph, [X])
    assert not graph.derived


def test_copies_do_not_share_the_compiled_function() -> None:
    graph = parse_ir(MUL)
    run_graph(graph, [X, Y])
    copy = graph.copy()
    assert not copy.derived
    constant = next(n for n in copy.nodes() if n.kind() == "prim::Constant")
    constant.i_("value", 7)
    np.testing.assert_allclose(run_graph(copy, [X, Y])[0], (TX * TY * 7).numpy(), rtol=1e-7)
    np.testing.assert_allclose(run_graph(graph, [X, Y])[0], (TX * TY * 2).numpy(), rtol=1e-7)
