"""The ops of gradient graphs (kernels/gradient_helpers.py): sum_to_size and
_grad_sum_to_size, _size_if_not_equal against PyTorch, and the schema-less prims
(AutogradAdd, of tensors and of gradient lists, AutogradAnyNonZero/AllZero/AllNonZero,
BroadcastSizes, ChunkSizes, and concat_split's ConstantChunk) in graphs parsed from IR
text, against torch equivalents.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.ir import Graph, node_summary, parse_ir
from gradview.ops import KERNELS
from gradview.runtime import GraphRuntimeError
from gradview.runtime import run_graph as _run_graph
from tests.kernels import oracle
from tests.kernels.oracle import backend_xp, check_op, op_graph, random_array, to_host

SEEDS = range(6)


def run_graph(graph: Graph, inputs: list) -> list:
    """Run on the backend tests/kernels/conftest.py picked for this test."""
    return _run_graph(graph, inputs, backend=getattr(oracle, "BACKEND", "numpy"))


def _rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    return random_array(rng, shape, dtype, -5, 6)


def _target(rng: np.random.Generator, shape: tuple[int, ...]) -> list[int]:
    """A size ``shape`` broadcasts from: some leading dims dropped, some dims set to 1."""
    drop = int(rng.integers(0, len(shape) + 1))
    return [1 if rng.random() < 0.5 else s for s in shape[drop:]]


# -- sum_to_size -----------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.bool_])
@pytest.mark.parametrize("seed", SEEDS)
def test_sum_to_size(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    shape = [(), (4,), (3, 4), (2, 3, 4), (2, 1, 3, 4), (3, 1)][seed]
    x = _rand(rng, shape, dtype)
    rtol = 1e-5 if dtype is np.float32 else 1e-6
    for size in (_target(rng, shape), _target(rng, shape), list(shape), []):
        check_op("aten::sum_to_size", [x, size], rtol=rtol)
        check_op("aten::_grad_sum_to_size", [x, size], rtol=rtol)
    check_op("aten::_grad_sum_to_size", [x, None])


def test_sum_to_size_keeps_untouched_tensors_as_they_are() -> None:
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    (same,) = run_graph(*op_graph("aten::sum_to_size", [x, [2, 3]]))
    assert same.dtype == np.int32  # no reduction: no promotion to int64, as PyTorch
    (summed,) = run_graph(*op_graph("aten::sum_to_size", [x, [1, 3]]))
    assert summed.dtype == np.int64


@pytest.mark.parametrize("size", [[2, 1, 1, 4], [5, 4], [4, 3]])
def test_sum_to_size_rejects_sizes_it_cannot_reach(size: list[int]) -> None:
    x = np.ones((2, 3, 4))
    for op in ("aten::sum_to_size", "aten::_grad_sum_to_size"):
        graph, inputs = op_graph(op, [x, size])
        with pytest.raises(GraphRuntimeError, match="not expandable") as info:
            run_graph(graph, inputs)
        assert node_summary(list(graph.nodes())[-1]) in str(info.value)
        with pytest.raises(RuntimeError):
            torch.ops.aten.sum_to_size(torch.ones(2, 3, 4), size)


@pytest.mark.parametrize(
    ("a", "b"), [([2, 3], [2, 3]), ([2, 3], [3]), ([], []), ([1], []), ([4, 1], [4, 2])]
)
def test_size_if_not_equal(a: list[int], b: list[int]) -> None:
    # check_op would read a returned int list as several outputs: compare directly.
    (ours,) = run_graph(*op_graph("aten::_size_if_not_equal", [a, b]))
    theirs = torch.ops.aten._size_if_not_equal(a, b)
    assert ours == theirs and type(ours) is type(theirs)


# -- AutogradAdd and the definedness tests -----------------------------------------
ADD = """graph(%a : Tensor?, %b : Tensor?):
  %c : Tensor = prim::AutogradAdd(%a, %b)
  return (%c)
"""


@pytest.mark.parametrize("seed", SEEDS)
def test_autograd_add(seed: int) -> None:
    rng = np.random.default_rng(seed)
    graph = parse_ir(ADD)
    dtypes = [np.float64, np.float32, np.int64, np.bool_]
    a_shape, b_shape = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 2))][seed % 4]
    a = _rand(rng, a_shape, dtypes[seed % 4])
    b = _rand(rng, b_shape, dtypes[(seed + 1) % 4])
    (out,) = run_graph(graph, [a, b])
    expected = (torch.from_numpy(a) + torch.from_numpy(b)).numpy()  # broadcasts and promotes
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    for left, right, want in ((a, None, a), (None, b, b)):
        (out,) = run_graph(graph, [left, right])
        np.testing.assert_array_equal(out, want)
        assert out.dtype == want.dtype
    assert run_graph(graph, [None, None]) == [None]


DEFINEDNESS = """graph(%a : Tensor?, %b : Tensor?, %c : Tensor?):
  %l : Tensor[] = prim::ListConstruct(%b, %c)
  %any : bool = prim::AutogradAnyNonZero(%a, %l)
  %all_zero : bool = prim::AutogradAllZero(%a, %b, %c)
  %all_nonzero : bool = prim::AutogradAllNonZero(%a, %b, %c)
  %any2 : bool = prim::AutogradAnyNonZero(%a, %b)
  return (%any, %all_zero, %all_nonzero, %any2)
"""


@pytest.mark.parametrize("mask", [(a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)])
def test_autograd_definedness(mask: tuple[int, int, int]) -> None:
    graph = parse_ir(DEFINEDNESS)
    inputs = [np.ones(2) if defined else None for defined in mask]
    results = run_graph(graph, inputs)
    assert results == [any(mask), not any(mask), all(mask), bool(mask[0] or mask[1])]
    assert all(type(r) is bool for r in results)


def test_autograd_any_non_zero_of_nothing_is_false() -> None:
    graph = parse_ir("""graph():
  %any : bool = prim::AutogradAnyNonZero()
  %all : bool = prim::AutogradAllNonZero()
  return (%any, %all)
""")
    assert run_graph(graph, []) == [False, True]


# -- BroadcastSizes ----------------------------------------------------------------
BROADCAST = """graph(%a : int[], %b : int[], %c : int[]):
  %s : int[] = prim::BroadcastSizes(%a, %b, %c)
  %t : int[] = prim::BroadcastSizes(%a, %b)
  return (%s, %t)
"""


@pytest.mark.parametrize("seed", SEEDS)
def test_broadcast_sizes(seed: int) -> None:
    rng = np.random.default_rng(seed)
    full = [int(s) for s in rng.integers(1, 5, int(rng.integers(0, 5)))]
    sizes = []
    for _ in range(3):
        shape = full[int(rng.integers(0, len(full) + 1)) :]
        sizes.append([1 if rng.random() < 0.4 else s for s in shape])
    graph = parse_ir(BROADCAST)
    three, two = run_graph(graph, sizes)
    assert three == list(torch.broadcast_shapes(*sizes))
    assert two == list(torch.broadcast_shapes(*sizes[:2]))


def test_broadcast_sizes_mismatch_names_the_node() -> None:
    graph = parse_ir(BROADCAST)
    with pytest.raises(GraphRuntimeError, match="do not broadcast") as info:
        run_graph(graph, [[2, 3], [4, 3], [3]])
    node = next(n for n in graph.nodes() if n.kind() == "prim::BroadcastSizes")
    assert node_summary(node) in str(info.value)
    with pytest.raises(RuntimeError):
        torch.broadcast_shapes([2, 3], [4, 3], [3])


# -- ConstantChunk, ChunkSizes -----------------------------------------------------
def _chunk_graph(chunks: int, dim: int) -> Graph:
    outs = ", ".join(f"%o{i} : Tensor" for i in range(chunks))
    names = ", ".join(f"%o{i}" for i in range(chunks))
    return parse_ir(
        f"graph(%x : Tensor, %s : int[]):\n"
        f"  {outs} = prim::ConstantChunk[chunks={chunks}, dim={dim}](%x)\n"
        f"  %r : int[], %l : int[] = prim::ChunkSizes[chunks={chunks}, dim={dim}](%s)\n"
        f"  return ({names}, %r, %l)\n"
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_constant_chunk_and_chunk_sizes(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 7, int(rng.integers(1, 4))))
    x = rng.standard_normal(shape)
    for _ in range(3):
        chunks = int(rng.integers(1, 5))
        dim = int(rng.integers(-len(shape), len(shape)))
        *pieces, regular, last = run_graph(_chunk_graph(chunks, dim), [x, list(shape)])
        expected = torch.chunk(torch.from_numpy(x), chunks, dim)
        assert len(pieces) == chunks
        for got, want in zip(pieces, expected, strict=False):
            np.testing.assert_array_equal(got, want.numpy())
        # torch.chunk can give fewer chunks; TorchScript leaves the rest undefined.
        assert pieces[len(expected) :] == [None] * (chunks - len(expected))
        assert regular == list(expected[0].shape)
        assert last == list(expected[-1].shape)


def test_constant_chunk_of_an_empty_dim() -> None:
    *pieces, regular, last = run_graph(_chunk_graph(3, 0), [np.zeros((0, 2)), [0, 2]])
    assert [p.shape for p in pieces] == [t.shape for t in torch.chunk(torch.zeros(0, 2), 3)]
    assert regular == last == [0, 2]


def test_constant_chunk_bad_dim_names_the_node() -> None:
    graph = _chunk_graph(2, 3)
    with pytest.raises(GraphRuntimeError, match="dim 3 is out of range") as info:
        run_graph(graph, [np.ones((4, 2)), [4, 2]])
    node = next(n for n in graph.nodes() if n.kind() == "prim::ConstantChunk")
    assert node_summary(node) in str(info.value)


def test_autograd_add_of_gradient_lists() -> None:
    xp = backend_xp()
    a = [xp.ones((2, 3)), None, xp.ones(4)]
    b = [None, xp.ones(1), xp.ones(4)]
    total = KERNELS["prim::AutogradAdd"](xp, a, b)
    assert isinstance(total, list) and len(total) == 3
    np.testing.assert_array_equal(to_host(total[0]), np.ones((2, 3)))
    np.testing.assert_array_equal(to_host(total[1]), np.ones(1))
    np.testing.assert_array_equal(to_host(total[2]), 2 * np.ones(4))
    assert isinstance(KERNELS["prim::AutogradAdd"](xp, (a[0],), (a[0],)), tuple)
