"""index.Tensor (advanced indexing), nonzero, _dim_arange and TorchScript's list/str ``index``
against ``torch.ops.aten``; gradview::index_backward against torch.autograd."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.ir import Graph, ListType, OptionalType, StringType, TensorType
from gradview.ops import KERNELS
from gradview.runtime import GraphRuntimeError, run_graph
from tests.kernels import oracle
from tests.kernels.oracle import Typed, check_op, random_array, tensor_type

RNG = np.random.default_rng(11)
X = random_array(RNG, (2, 3, 4), np.float64)
LONG = np.int64

INDICES = [
    [None, np.array([0, 2, 1])],
    [np.array([1, 0]), None, np.array([3, 1])],
    [None, None, np.array([[1], [3]])],
    [X[:, :, 0] > 0],
    [None, np.array([True, False, True])],
    [np.array([1, 0])],
    [np.array(1)],
    [np.array([1, 0], dtype=np.uint8)],
    [np.array([-1]), None, np.array([-2], dtype=np.int32)],
    [np.array([1, 1, 0]), np.array([2, 2, 2])],
    [np.zeros((0,), dtype=LONG)],
]


def _index_graph(qualified: str, self: np.ndarray, indices: list) -> tuple[Graph, list]:
    """``qualified(self, [indices...])`` with None entries as constants in a Tensor?[] list."""
    graph = Graph()
    inputs = [self]
    items = [graph.add_input(type_=tensor_type(self))]
    listed = []
    for index in indices:
        if index is None:
            listed.append(graph.insert_constant(None))
        else:
            listed.append(graph.add_input(type_=tensor_type(np.asarray(index))))
            inputs.append(np.asarray(index))
    node = graph.create("prim::ListConstruct", listed)
    node.output().set_type(ListType(OptionalType(TensorType())))
    graph.insert_node(node)
    call = graph.create("aten::index", [items[0], node.output()], 0)
    call.add_output(TensorType())
    graph.insert_node(call)
    assert call.maybe_schema().qualified_name == qualified
    graph.register_output(call.output())
    return graph, inputs


def _torch_indices(indices: list) -> list:
    return [None if i is None else torch.from_numpy(np.asarray(i)) for i in indices]


@pytest.mark.parametrize("indices", INDICES, ids=range(len(INDICES)))
def test_index(indices: list) -> None:
    graph, inputs = _index_graph("aten::index.Tensor", X, indices)
    (ours,) = run_graph(graph, inputs, backend=oracle.BACKEND)
    theirs = torch.ops.aten.index.Tensor(torch.from_numpy(X), _torch_indices(indices)).numpy()
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("indices", [i for i in INDICES if all(j is not None for j in i)], ids=str)
def test_index_hacked_twin(indices: list) -> None:
    """Called directly: gradview's overload resolution lets a Tensor[] list match
    index.Tensor's Tensor?[] first (TorchScript's lists are invariant, so torch picks
    the twin)."""
    ours = KERNELS["aten::index.Tensor_hacked_twin"](np, X, [np.asarray(i) for i in indices])
    theirs = torch.ops.aten.index.Tensor_hacked_twin(torch.from_numpy(X), _torch_indices(indices)).numpy()
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize(
    ("indices", "match"),
    [([np.array([5])], "out of bounds"), ([np.array([0.5])], "long, int, byte or bool"), ([], "at least one"),
     ([np.array([True, False, True])], "mask")],
)
def test_index_errors(indices: list, match: str) -> None:
    graph, inputs = _index_graph("aten::index.Tensor", X, indices)
    with pytest.raises(GraphRuntimeError, match=match):
        run_graph(graph, inputs)
    with pytest.raises((RuntimeError, IndexError)):
        torch.ops.aten.index.Tensor(torch.from_numpy(X), _torch_indices(indices))


@pytest.mark.parametrize("indices", INDICES, ids=range(len(INDICES)))
def test_index_backward(indices: list) -> None:
    x = torch.tensor(X, requires_grad=True)
    y = torch.ops.aten.index.Tensor(x, _torch_indices(indices))
    grad = torch.randn(y.shape, dtype=torch.float64)
    (expected,) = torch.autograd.grad(y, x, grad)
    ours = KERNELS["gradview::index_backward"](np, grad.numpy(), list(X.shape), indices)
    np.testing.assert_allclose(ours, expected.numpy(), rtol=1e-12)  # repeated indices add up


@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4)])
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.bool_])
def test_nonzero(shape: tuple[int, ...], dtype: type) -> None:
    check_op("aten::nonzero", [random_array(RNG, shape, dtype, 0, 2)])
    check_op("aten::nonzero", [np.zeros(shape, dtype=dtype)])


@pytest.mark.parametrize(
    ("overload", "items", "item"),
    [("list_int", [1, 2, 3], 3), ("list_float", [1.0, -0.0], 0.0), ("list_bool", [True, False], False),
     ("list_str", ["a", "b", "b"], "b")],
)
def test_list_index(overload: str, items: list, item: object) -> None:
    check_op(f"aten::index.{overload}", [items, item])


def test_list_index_of_tensors_and_misses() -> None:
    check_op("aten::index.list_Tensor", [[np.array([1.0]), np.array(3.0)], np.array(3.0)])
    graph, inputs = oracle.op_graph("aten::index.list_Tensor", [[np.array([1.0, 2.0]), np.array(3.0)], np.array(3.0)])
    with pytest.raises(GraphRuntimeError, match="ambiguous"):
        run_graph(graph, inputs)
    with pytest.raises(RuntimeError, match="ambiguous"):
        torch.ops.aten.index.list_Tensor([torch.ones(2), torch.tensor(3.0)], torch.tensor(3.0))
    for overload, items, item in [("list_int", [1, 2], 5), ("list_str", ["a"], "b")]:
        graph, inputs = oracle.op_graph(f"aten::index.{overload}", [items, item])
        with pytest.raises(GraphRuntimeError, match="not in list"):
            run_graph(graph, inputs)


@pytest.mark.parametrize(
    ("text", "substr", "start", "end"),
    [("abcabc", "c", 0, -1), ("abcabc", "c", 0, 3), ("abcabc", "c", -3, -1), ("abcabc", "bc", -2, 10),
     ("abc", "", 0, -1), ("abcabc", "c", 0, -2), ("abcabc", "b", 0, -4)],
)
def test_str_index(text: str, substr: str, start: int, end: int) -> None:
    check_op("aten::index.str", [text, substr, start, end])


@pytest.mark.parametrize(("start", "end"), [(0, 2), (4, -2)])
def test_str_index_not_found(start: int, end: int) -> None:
    graph, inputs = oracle.op_graph("aten::index.str", [Typed("abcabc", StringType()), "c", start, end])
    with pytest.raises(GraphRuntimeError, match="substring not found"):
        run_graph(graph, inputs)
    with pytest.raises(RuntimeError, match="substring not found"):
        torch.ops.aten.index.str("abcabc", "c", start, end)


# -- segment_reduce's backward: ATen's quirks, bit for bit ---------------------------------------
@pytest.mark.parametrize("reduce", ["max", "min"])
def test_segment_reduce_backward_divides_only_positive_gradients_among_ties(reduce: str) -> None:
    """Where 2 or more elements equal the segment's max (min), ATen divides the gradient by
    their count only where it is positive: a negative gradient reaches every tie whole."""
    data = np.array([[2.0, 5.0], [2.0, 5.0], [1.0, 5.0], [4.0, 4.0]])
    lengths = np.array([3, 1])
    output = KERNELS["aten::segment_reduce"](np, data, reduce, lengths)
    grad = np.array([[1.5, -2.0], [-1.0, 3.0]])
    ours = KERNELS["aten::_segment_reduce_backward"](np, grad, output, data, reduce, lengths)
    theirs = torch.ops.aten._segment_reduce_backward(
        torch.from_numpy(grad), torch.from_numpy(output), torch.from_numpy(data), reduce,
        lengths=torch.from_numpy(lengths),
    ).numpy()
    np.testing.assert_array_equal(ours, theirs)
    assert list(ours[:3, 1]) == [-2.0, -2.0, -2.0]  # three ties, a negative gradient: undivided


def test_as_strided_scatter_refuses_a_view_whose_storage_is_its_base() -> None:
    """PyTorch writes into the clone of the *whole* storage of a view's base (its
    clone_preserve_strides); gradview keeps no base storage, so it refuses in one line."""
    from gradview.ir import parse_ir

    graph = parse_ir(
        "graph(%x : Double(3, 4), %s : Double(2, 2)):\n"
        "  %t : Double(4, 3) = aten::t(%x)\n"
        "  %size : int[] = prim::Constant[value=[2, 2]]()\n"
        "  %stride : int[] = prim::Constant[value=[1, 2]]()\n"
        "  %offset : int = prim::Constant[value=1]()\n"
        "  %y : Double(4, 3) = aten::as_strided_scatter(%t, %s, %size, %stride, %offset)\n"
        "  return (%y)\n"
    )
    with pytest.raises(GraphRuntimeError, match=r"as_strided_scatter.*view of another tensor"):
        run_graph(graph, [np.arange(12.0).reshape(3, 4), np.ones((2, 2))])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_dim_arange_counts_along_the_dim(dim: int) -> None:
    check_op("aten::_dim_arange", [X, dim])
