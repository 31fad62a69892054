"""View, join and split kernels (kernels/views.py, kernels/concat_split.py) against
PyTorch: every overload of the core shape ops on seeded random inputs, and the errors.

Each case runs one aten overload through gradview's interpreter (a one-node
graph, ``run_graph``) and through ``torch.ops.aten`` on the same arguments,
and compares values (1e-6 relative), dtypes and shapes. Bad inputs must be
refused by PyTorch and by gradview, whose GraphRuntimeError names the node
and the shapes of its inputs. The helpers are in shape_kernel_oracle.py; the
overload coverage test also counts test_casts.py's cases.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from gradview.ir import TensorType, parse_ir
from gradview.ir.types import ScalarTypeType
from gradview.kernels import KernelError
from gradview.ops import KERNELS
from gradview.runtime import GraphRuntimeError
from tests.kernels.oracle import check_op, functional_overloads, torch_call
from tests.kernels.shape_kernel_oracle import (
    BOOL,
    F32,
    I64,
    SEEDS,
    Case,
    Typed,
    build,
    call_kernel,
    check,
    compare,
    plain_args,
    rand,
    run,
)
from tests.kernels.test_casts import CASES as CAST_CASES

TORCH_ERRORS = (RuntimeError, IndexError, ValueError, NotImplementedError)


# -- the cases: (id, overload, seeded argument builder) ---------------------------------
def _dtype(number: int) -> Typed:
    return Typed(number, ScalarTypeType())


CASES: list[Case] = [
    # view, reshape, _unsafe_view
    ("view-flat", "aten::view", lambda r: [rand(r, (2, 3, 4)), [-1]]),
    ("view-infer-middle", "aten::view", lambda r: [rand(r, (2, 3, 4)), [4, -1, 2]]),
    ("view-int64", "aten::view", lambda r: [rand(r, (2, 6), I64), [3, 4]]),
    ("view-bool-size1", "aten::view", lambda r: [rand(r, (4,), BOOL), [2, 1, 2]]),
    ("view-scalar-up", "aten::view", lambda r: [rand(r, ()), [1, 1]]),
    ("view-to-scalar", "aten::view", lambda r: [rand(r, (1, 1)), []]),
    ("view-empty", "aten::view", lambda r: [rand(r, (0, 3)), [3, 0, 1]]),
    ("reshape-transposed", "aten::reshape", lambda r: [rand(r, (3, 4)).T, [-1]]),
    ("reshape-3d", "aten::reshape", lambda r: [rand(r, (2, 3, 4), F32), [4, -1]]),
    ("reshape-empty-infer", "aten::reshape", lambda r: [rand(r, (2, 0, 3)), [3, -1, 2]]),
    ("unsafe_view", "aten::_unsafe_view", lambda r: [rand(r, (2, 3, 4), I64), [6, -1]]),
    # view.dtype (the dtype is a ScalarType constant)
    ("view.dtype-f64-i64", "aten::view.dtype", lambda r: [rand(r, (2, 3)), _dtype(4)]),
    ("view.dtype-f32-f64", "aten::view.dtype", lambda r: [rand(r, (2, 4), F32), _dtype(7)]),
    ("view.dtype-f64-f32", "aten::view.dtype", lambda r: [rand(r, (3,)), _dtype(6)]),
    ("view.dtype-i8-u8", "aten::view.dtype", lambda r: [rand(r, (2, 2), "int8"), _dtype(0)]),
    ("view.dtype-i32-i16", "aten::view.dtype", lambda r: [rand(r, (2, 2), "int32"), _dtype(2)]),
    ("view.dtype-u8-bool", "aten::view.dtype", lambda r: [rand(r, (2, 3), BOOL).astype("uint8"), _dtype(11)]),
    ("view.dtype-transposed", "aten::view.dtype", lambda r: [rand(r, (2, 3), F32).T, _dtype(3)]),
    # expand, expand_as, broadcast_tensors
    ("expand-new-dim", "aten::expand", lambda r: [rand(r, (3,)), [2, 3], False]),
    ("expand-minus1", "aten::expand", lambda r: [rand(r, (1, 3)), [4, -1], False]),
    ("expand-middle", "aten::expand", lambda r: [rand(r, (2, 1, 3), I64), [-1, 4, 3], False]),
    ("expand-two-new", "aten::expand", lambda r: [rand(r, (3, 1), BOOL), [2, 3, 5], True]),
    ("expand-scalar", "aten::expand", lambda r: [rand(r, ()), [2, 2], False]),
    ("expand-to-zero", "aten::expand", lambda r: [rand(r, (1,)), [0], False]),
    ("expand-same", "aten::expand", lambda r: [rand(r, (2, 3), F32), [2, 3], False]),
    ("expand_as", "aten::expand_as", lambda r: [rand(r, (1, 3)), rand(r, (2, 4, 3), I64)]),
    ("expand_as-scalar", "aten::expand_as", lambda r: [rand(r, (), I64), rand(r, (2,))]),
    ("broadcast_tensors", "aten::broadcast_tensors",
     lambda r: [[rand(r, (3, 1)), rand(r, (1, 4)), rand(r, (2, 1, 1))]]),
    ("broadcast_tensors-dtypes", "aten::broadcast_tensors", lambda r: [[rand(r, (1, 3)), rand(r, (2, 1), I64)]]),
    ("broadcast_tensors-scalar", "aten::broadcast_tensors", lambda r: [[rand(r, ()), rand(r, (2,), BOOL)]]),
    ("broadcast_tensors-one", "aten::broadcast_tensors", lambda r: [[rand(r, (2, 3))]]),
    # squeeze, unsqueeze, flatten
    ("squeeze", "aten::squeeze", lambda r: [rand(r, (1, 3, 1, 2))]),
    ("squeeze-scalar", "aten::squeeze", lambda r: [rand(r, ())]),
    ("squeeze-to-scalar", "aten::squeeze", lambda r: [rand(r, (1, 1), I64)]),
    ("squeeze-none", "aten::squeeze", lambda r: [rand(r, (2, 3))]),
    ("squeeze.dim-neg", "aten::squeeze.dim", lambda r: [rand(r, (1, 3, 1)), -1]),
    ("squeeze.dim-not-1", "aten::squeeze.dim", lambda r: [rand(r, (1, 3, 1)), 1]),
    ("squeeze.dim-scalar", "aten::squeeze.dim", lambda r: [rand(r, ()), -1]),
    ("squeeze.dim-1d", "aten::squeeze.dim", lambda r: [rand(r, (1,), BOOL), 0]),
    ("squeeze.dims", "aten::squeeze.dims", lambda r: [rand(r, (1, 3, 1, 2)), [0, -2]]),
    ("squeeze.dims-mixed", "aten::squeeze.dims", lambda r: [rand(r, (1, 3, 1, 2), I64), [1, 2, -4]]),
    ("squeeze.dims-scalar", "aten::squeeze.dims", lambda r: [rand(r, ()), [0]]),
    ("unsqueeze-0", "aten::unsqueeze", lambda r: [rand(r, (2, 3)), 0]),
    ("unsqueeze-end", "aten::unsqueeze", lambda r: [rand(r, (2, 3)), 2]),
    ("unsqueeze-neg", "aten::unsqueeze", lambda r: [rand(r, (2, 3), I64), -1]),
    ("unsqueeze-neg-first", "aten::unsqueeze", lambda r: [rand(r, (2, 3)), -3]),
    ("unsqueeze-scalar", "aten::unsqueeze", lambda r: [rand(r, ()), -1]),
    ("flatten-all", "aten::flatten.using_ints", lambda r: [rand(r, (2, 3, 4, 5)), 0, -1]),
    ("flatten-middle", "aten::flatten.using_ints", lambda r: [rand(r, (2, 3, 4, 5)), 1, 2]),
    ("flatten-neg", "aten::flatten.using_ints", lambda r: [rand(r, (2, 3, 4, 5), I64), -3, -2]),
    ("flatten-one-dim", "aten::flatten.using_ints", lambda r: [rand(r, (2, 3, 4)), 2, 2]),
    ("flatten-scalar", "aten::flatten.using_ints", lambda r: [rand(r, ()), 0, -1]),
    ("flatten-empty", "aten::flatten.using_ints", lambda r: [rand(r, (2, 0, 3)), 0, 1]),
    # cat, stack
    ("cat-dim0", "aten::cat", lambda r: [[rand(r, (2, 3)), rand(r, (4, 3))], 0]),
    ("cat-neg", "aten::cat", lambda r: [[rand(r, (2, 3)), rand(r, (2, 1)), rand(r, (2, 2))], -1]),
    ("cat-promote", "aten::cat", lambda r: [[rand(r, (2, 3), F32), rand(r, (2, 3), I64)], 1]),
    ("cat-bool-int", "aten::cat", lambda r: [[rand(r, (2,), BOOL), rand(r, (3,), "int32")], 0]),
    ("cat-skip-empty", "aten::cat", lambda r: [[rand(r, (2, 3)), rand(r, (0,))], -1]),
    ("cat-skip-empty-promote", "aten::cat", lambda r: [[rand(r, (2, 3), F32), rand(r, (0,))], 1]),
    ("cat-all-empty", "aten::cat", lambda r: [[rand(r, (0,), F32), rand(r, (0,))], 0]),
    ("cat-zero-size", "aten::cat", lambda r: [[rand(r, (2, 0, 3)), rand(r, (2, 2, 3))], 1]),
    ("cat-one", "aten::cat", lambda r: [[rand(r, (2, 3), I64)], 0]),
    ("stack-0", "aten::stack", lambda r: [[rand(r, (2, 3)), rand(r, (2, 3)), rand(r, (2, 3))], 0]),
    ("stack-neg", "aten::stack", lambda r: [[rand(r, (2, 3)), rand(r, (2, 3))], -1]),
    ("stack-middle", "aten::stack", lambda r: [[rand(r, (2, 3), I64), rand(r, (2, 3), I64)], 1]),
    ("stack-scalars", "aten::stack", lambda r: [[rand(r, ()), rand(r, ())], 0]),
    ("stack-promote", "aten::stack", lambda r: [[rand(r, (2,), F32), rand(r, (2,), BOOL)], 0]),
    # chunk, split, unbind
    ("chunk-uneven", "aten::chunk", lambda r: [rand(r, (5, 4)), 3, 0]),
    ("chunk-fewer", "aten::chunk", lambda r: [rand(r, (6,), I64), 4, 0]),
    ("chunk-more-than-size", "aten::chunk", lambda r: [rand(r, (5,)), 10, 0]),
    ("chunk-empty", "aten::chunk", lambda r: [rand(r, (0,)), 3, 0]),
    ("chunk-neg-dim", "aten::chunk", lambda r: [rand(r, (2, 7)), 3, -1]),
    ("split-even", "aten::split.Tensor", lambda r: [rand(r, (6, 2)), 3, 0]),
    ("split-uneven", "aten::split.Tensor", lambda r: [rand(r, (5, 4)), 2, 0]),
    ("split-neg-dim", "aten::split.Tensor", lambda r: [rand(r, (2, 7), BOOL), 3, -1]),
    ("split-empty", "aten::split.Tensor", lambda r: [rand(r, (0,)), 0, 0]),
    ("split-bigger", "aten::split.Tensor", lambda r: [rand(r, (5,)), 10, 0]),
    ("split.sizes", "aten::split.sizes", lambda r: [rand(r, (5, 4)), [2, 3], 0]),
    ("split.sizes-zero", "aten::split.sizes", lambda r: [rand(r, (2, 7), I64), [0, 3, 4], -1]),
    ("split.sizes-none", "aten::split.sizes", lambda r: [rand(r, (0,)), [], 0]),
    ("unbind-0", "aten::unbind.int", lambda r: [rand(r, (3, 4)), 0]),
    ("unbind-neg", "aten::unbind.int", lambda r: [rand(r, (3, 4), I64), -1]),
    ("unbind-empty", "aten::unbind.int", lambda r: [rand(r, (2, 0)), 1]),
    ("unbind-to-scalars", "aten::unbind.int", lambda r: [rand(r, (2,)), 0]),
    # select, slice
    ("select-neg-index", "aten::select.int", lambda r: [rand(r, (3, 4)), 0, -1]),
    ("select-dim1", "aten::select.int", lambda r: [rand(r, (3, 4), I64), 1, 2]),
    ("select-to-scalar", "aten::select.int", lambda r: [rand(r, (5,)), 0, 0]),
    ("select-neg-dim", "aten::select.int", lambda r: [rand(r, (2, 3, 4)), -2, -3]),
    ("slice-all", "aten::slice.Tensor", lambda r: [rand(r, (10, 3)), 0, None, None, 1]),
    ("slice-step", "aten::slice.Tensor", lambda r: [rand(r, (10, 3)), 0, 2, 8, 3]),
    ("slice-neg-start", "aten::slice.Tensor", lambda r: [rand(r, (10, 3), I64), 0, -3, None, 1]),
    ("slice-neg-end", "aten::slice.Tensor", lambda r: [rand(r, (10, 3)), 0, None, -2, 2]),
    ("slice-clamped", "aten::slice.Tensor", lambda r: [rand(r, (10, 3)), 0, -100, 100, 1]),
    ("slice-reversed-empty", "aten::slice.Tensor", lambda r: [rand(r, (10, 3)), 0, 5, 2, 1]),
    ("slice-beyond-empty", "aten::slice.Tensor", lambda r: [rand(r, (10, 3)), 0, 20, 30, 1]),
    ("slice-neg-dim", "aten::slice.Tensor", lambda r: [rand(r, (3, 5), BOOL), -1, 1, None, 2]),
    ("slice-size1", "aten::slice.Tensor", lambda r: [rand(r, (1, 3)), 0, 0, 1, 5]),
    # size, numel, dim
    ("size", "aten::size", lambda r: [rand(r, (2, 3, 4))]),
    ("size-scalar", "aten::size", lambda r: [rand(r, ())]),
    ("size.int-neg", "aten::size.int", lambda r: [rand(r, (2, 3, 4)), -1]),
    ("size.int-0", "aten::size.int", lambda r: [rand(r, (2, 3, 4), I64), 0]),
    ("numel", "aten::numel", lambda r: [rand(r, (2, 3, 4))]),
    ("numel-scalar", "aten::numel", lambda r: [rand(r, ())]),
    ("numel-empty", "aten::numel", lambda r: [rand(r, (0, 3))]),
    ("dim", "aten::dim", lambda r: [rand(r, (2, 3, 4))]),
    ("dim-scalar", "aten::dim", lambda r: [rand(r, (), BOOL)]),
    # t, transpose, permute
    ("t-2d", "aten::t", lambda r: [rand(r, (2, 3))]),
    ("t-1d", "aten::t", lambda r: [rand(r, (3,), I64)]),
    ("t-scalar", "aten::t", lambda r: [rand(r, ())]),
    ("transpose-ends", "aten::transpose.int", lambda r: [rand(r, (2, 3, 4)), 0, -1]),
    ("transpose-neg", "aten::transpose.int", lambda r: [rand(r, (2, 3, 4), I64), -2, -1]),
    ("transpose-same", "aten::transpose.int", lambda r: [rand(r, (2, 3, 4)), 1, 1]),
    ("transpose-scalar", "aten::transpose.int", lambda r: [rand(r, ()), 0, -1]),
    ("permute", "aten::permute", lambda r: [rand(r, (2, 3, 4)), [2, 0, 1]]),
    ("permute-neg", "aten::permute", lambda r: [rand(r, (2, 3, 4), BOOL), [-1, -3, -2]]),
    ("permute-scalar", "aten::permute", lambda r: [rand(r, ()), []]),
    # narrow, split_with_sizes, repeat, view_as, is_floating_point
    ("narrow", "aten::narrow", lambda r: [rand(r, (3, 5)), 1, 1, 3]),
    ("narrow-neg", "aten::narrow", lambda r: [rand(r, (3, 5), I64), -1, -2, 2]),
    ("narrow-empty", "aten::narrow", lambda r: [rand(r, (3, 5)), 0, 3, 0]),
    ("narrow-whole", "aten::narrow", lambda r: [rand(r, (4,), BOOL), 0, 0, 4]),
    ("narrow-neg-dim-3d", "aten::narrow", lambda r: [rand(r, (2, 3, 4), F32), -2, -3, 1]),
    ("narrow.Tensor", "aten::narrow.Tensor", lambda r: [rand(r, (3, 5)), 1, np.array(2), 2]),
    ("narrow.Tensor-neg", "aten::narrow.Tensor", lambda r: [rand(r, (6,), I64), 0, np.array(-3, "int32"), 3]),
    ("split_with_sizes", "aten::split_with_sizes", lambda r: [rand(r, (5, 4)), [2, 3], 0]),
    ("split_with_sizes-neg-dim", "aten::split_with_sizes", lambda r: [rand(r, (2, 7), I64), [0, 3, 4], -1]),
    ("split_with_sizes-one", "aten::split_with_sizes", lambda r: [rand(r, (3, 2), BOOL), [2], -1]),
    ("repeat", "aten::repeat", lambda r: [rand(r, (2, 3)), [2, 1]]),
    ("repeat-new-dims", "aten::repeat", lambda r: [rand(r, (2, 3), I64), [2, 1, 3]]),
    ("repeat-zero", "aten::repeat", lambda r: [rand(r, (2, 3)), [2, 0]]),
    ("repeat-scalar", "aten::repeat", lambda r: [rand(r, ()), [3, 2]]),
    ("repeat-scalar-none", "aten::repeat", lambda r: [rand(r, ()), []]),
    ("repeat-bool", "aten::repeat", lambda r: [rand(r, (3,), BOOL), [1, 2]]),
    ("view_as", "aten::view_as", lambda r: [rand(r, (2, 3)), rand(r, (3, 2), I64)]),
    ("view_as-flat", "aten::view_as", lambda r: [rand(r, (2, 3, 2), F32), rand(r, (12,))]),
    ("view_as-scalar", "aten::view_as", lambda r: [rand(r, (1, 1)), rand(r, ())]),
    ("is_floating_point-f64", "aten::is_floating_point", lambda r: [rand(r, (2,))]),
    ("is_floating_point-f32", "aten::is_floating_point", lambda r: [rand(r, (), F32)]),
    ("is_floating_point-f16", "aten::is_floating_point", lambda r: [rand(r, (2,), "float16")]),
    ("is_floating_point-i64", "aten::is_floating_point", lambda r: [rand(r, (2,), I64)]),
    ("is_floating_point-bool", "aten::is_floating_point", lambda r: [rand(r, (2,), BOOL)]),
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("qualified", "make"), [pytest.param(q, m, id=i) for i, q, m in CASES])
def test_matches_pytorch(qualified: str, make: Callable[[np.random.Generator], list[Any]], seed: int) -> None:
    check(qualified, make(np.random.default_rng(seed)))


def test_every_overload_has_a_kernel_and_a_case() -> None:
    tested = {q for _, q, _ in CASES + CAST_CASES} | {"aten::empty_like", "aten::split"}
    for name in sorted({q.partition(".")[0] for q in tested}):
        for schema in functional_overloads(name):
            if any(isinstance(a.type, TensorType) for a in schema.arguments[:1]) or name in (
                "aten::cat", "aten::stack", "aten::broadcast_tensors",
            ):
                assert schema.qualified_name in KERNELS, schema.qualified_name
                assert schema.qualified_name in tested, schema.qualified_name


@pytest.mark.parametrize("seed", SEEDS)
def test_split_with_int_list_overload(seed: int) -> None:
    # ``aten::split(Tensor, int[], int)`` is shadowed by split.sizes in overload
    # resolution; it shares its kernel, checked here directly against torch.
    assert KERNELS["aten::split"] is KERNELS["aten::split.sizes"]
    x = rand(np.random.default_rng(seed), (3, 6))
    ours = call_kernel("aten::split", x, [1, 0, 5], -1)
    theirs = torch.ops.aten.split.default(torch.from_numpy(x), [1, 0, 5], -1)
    compare(ours, list(theirs), "aten::split")


def test_view_with_an_int_is_view_dtype() -> None:
    # TorchScript writes x.view(torch.float64) as aten::view(%x, %int); the int is a dtype.
    graph = parse_ir(
        """graph(%x : Float(2, 4)):
  %dt : int = prim::Constant[value=7]()
  %y : Tensor = aten::view(%x, %dt)
  return (%y)
"""
    )
    x = rand(np.random.default_rng(0), (2, 4), F32)
    (ours,) = run(graph, [x])
    np.testing.assert_array_equal(ours, torch.from_numpy(x).view(torch.float64).numpy())


def test_results_are_arrays_and_ints() -> None:
    x = rand(np.random.default_rng(0), (3,))
    (items,) = check("aten::unbind.int", [x, 0])
    assert all(isinstance(i, np.ndarray) and i.shape == () for i in items)
    (sizes,) = check("aten::size", [x])
    assert sizes == [3] and all(type(s) is int for s in sizes)
    (picked,) = check_op("aten::select.int", [x, 0, 1])
    assert isinstance(picked, np.ndarray)


# -- errors: PyTorch refuses these, and so must gradview, naming the node -----------------
ERRORS: list[tuple[str, str, Callable[[np.random.Generator], list[Any]], str]] = [
    ("transpose-range", "aten::transpose.int", lambda r: [rand(r, (2, 3)), 3, 0], "dim 3 is out of range"),
    ("transpose-neg-range", "aten::transpose.int", lambda r: [rand(r, (2, 3)), 0, -3], "dim -3"),
    ("view-size", "aten::view", lambda r: [rand(r, (2, 3)), [4, -1]], "[4, -1]"),
    ("view-numel", "aten::view", lambda r: [rand(r, (2, 3)), [7]], "6 elements"),
    ("view-two-infer", "aten::view", lambda r: [rand(r, (2, 3)), [-1, -1]], "only one dimension"),
    ("view-ambiguous", "aten::view", lambda r: [rand(r, (0, 3)), [0, -1]], "ambiguous"),
    ("view-negative", "aten::view", lambda r: [rand(r, (2, 3)), [-2, -3]], "invalid shape dimension -2"),
    ("reshape-size", "aten::reshape", lambda r: [rand(r, (2, 3)), [5]], "reshape"),
    ("view.dtype-scalar", "aten::view.dtype", lambda r: [rand(r, (), F32), _dtype(7)], "0-d"),
    ("view.dtype-divisible", "aten::view.dtype", lambda r: [rand(r, (3,), F32), _dtype(7)], "last dim"),
    ("expand-mismatch", "aten::expand", lambda r: [rand(r, (3,)), [2, 4], False], "existing size 3"),
    ("expand-fewer", "aten::expand", lambda r: [rand(r, (3,)), [], False], "number of sizes"),
    ("expand-new-minus1", "aten::expand", lambda r: [rand(r, (3,)), [-1, 3], False], "new leading dim"),
    ("expand_as", "aten::expand_as", lambda r: [rand(r, (2, 3)), rand(r, (3, 2))], "expand"),
    ("broadcast", "aten::broadcast_tensors", lambda r: [[rand(r, (2, 3)), rand(r, (4, 1, 4))]], "broadcast"),
    ("squeeze.dim-range", "aten::squeeze.dim", lambda r: [rand(r, (1, 2)), 2], "dim 2"),
    ("squeeze.dims-repeat", "aten::squeeze.dims", lambda r: [rand(r, (1, 2)), [0, -2]], "more than once"),
    ("unsqueeze-range", "aten::unsqueeze", lambda r: [rand(r, (2,)), -3], "dim -3"),
    ("flatten-order", "aten::flatten.using_ints", lambda r: [rand(r, (2, 3, 4)), 2, 1], "start_dim"),
    ("flatten-range", "aten::flatten.using_ints", lambda r: [rand(r, (2, 3)), 0, 2], "dim 2"),
    ("cat-sizes", "aten::cat", lambda r: [[rand(r, (2, 3)), rand(r, (2, 4))], 0], "dim 1 differs"),
    ("cat-rank", "aten::cat", lambda r: [[rand(r, (2, 3)), rand(r, (2, 3, 4))], 0], "same rank"),
    ("cat-scalar", "aten::cat", lambda r: [[rand(r, ()), rand(r, ())], 0], "zero-dimensional"),
    ("cat-dim", "aten::cat", lambda r: [[rand(r, (2, 3))], 2], "dim 2"),
    ("stack-shapes", "aten::stack", lambda r: [[rand(r, (2, 3)), rand(r, (2, 4))], 0], "equal shape"),
    ("stack-dim", "aten::stack", lambda r: [[rand(r, (2, 3))], -4], "dim -4"),
    ("chunk-scalar", "aten::chunk", lambda r: [rand(r, ()), 2, 0], "0-d"),
    ("chunk-zero", "aten::chunk", lambda r: [rand(r, (3,)), 0, 0], "greater than 0"),
    ("split-negative", "aten::split.Tensor", lambda r: [rand(r, (3,)), -1, 0], "non-negative"),
    ("split-zero", "aten::split.Tensor", lambda r: [rand(r, (3,)), 0, 0], "size 3"),
    ("split-scalar", "aten::split.Tensor", lambda r: [rand(r, ()), 1, 0], "0-d"),
    ("split.sizes-sum", "aten::split.sizes", lambda r: [rand(r, (5,)), [2, 2], 0], "sum exactly to 5"),
    ("split.sizes-negative", "aten::split.sizes", lambda r: [rand(r, (5,)), [6, -1], 0], "non-negative"),
    ("unbind-scalar", "aten::unbind.int", lambda r: [rand(r, ()), 0], "rank 0"),
    ("select-index", "aten::select.int", lambda r: [rand(r, (3, 4)), 0, 5], "index 5"),
    ("select-neg-index", "aten::select.int", lambda r: [rand(r, (3, 4)), 1, -5], "index -5"),
    ("select-scalar", "aten::select.int", lambda r: [rand(r, ()), 0, 0], "0-d"),
    ("slice-step", "aten::slice.Tensor", lambda r: [rand(r, (5,)), 0, None, None, 0], "step"),
    ("slice-scalar", "aten::slice.Tensor", lambda r: [rand(r, ()), 0, None, None, 1], "0-d"),
    ("slice-dim", "aten::slice.Tensor", lambda r: [rand(r, (5,)), 1, None, None, 1], "dim 1"),
    ("size.int-range", "aten::size.int", lambda r: [rand(r, (2, 3)), 2], "dim 2"),
    ("size.int-scalar", "aten::size.int", lambda r: [rand(r, ()), 0], "rank 0"),
    ("t-3d", "aten::t", lambda r: [rand(r, (2, 3, 4))], "rank <= 2"),
    ("permute-length", "aten::permute", lambda r: [rand(r, (2, 3)), [0]], "number of dims"),
    ("permute-duplicate", "aten::permute", lambda r: [rand(r, (2, 3)), [0, -2]], "duplicate"),
    ("permute-range", "aten::permute", lambda r: [rand(r, (2, 3)), [0, 2]], "dim 2"),
    ("narrow-scalar", "aten::narrow", lambda r: [rand(r, ()), 0, 0, 0], "0-d"),
    ("narrow-start", "aten::narrow", lambda r: [rand(r, (5,)), 0, 6, 0], "start 6"),
    ("narrow-neg-start", "aten::narrow", lambda r: [rand(r, (5,)), 0, -6, 1], "start -6"),
    ("narrow-length", "aten::narrow", lambda r: [rand(r, (5,)), 0, 3, 3], "exceeds"),
    ("narrow-neg-length", "aten::narrow", lambda r: [rand(r, (5,)), 0, 0, -1], "non-negative"),
    ("narrow-dim", "aten::narrow", lambda r: [rand(r, (5,)), 1, 0, 1], "dim 1"),
    ("narrow.Tensor-float", "aten::narrow.Tensor", lambda r: [rand(r, (5,)), 0, np.array(1.0), 1], "integral"),
    ("narrow.Tensor-1d", "aten::narrow.Tensor", lambda r: [rand(r, (5,)), 0, np.array([1]), 1], "0-d"),
    ("split_with_sizes-sum", "aten::split_with_sizes", lambda r: [rand(r, (5,)), [2, 2], 0], "sum exactly"),
    ("repeat-fewer", "aten::repeat", lambda r: [rand(r, (2, 3)), [2]], "cannot be smaller"),
    ("repeat-negative", "aten::repeat", lambda r: [rand(r, (3,)), [-1]], "non-negative"),
    ("view_as-numel", "aten::view_as", lambda r: [rand(r, (2, 3)), rand(r, (4,))], "6 elements"),
]


def _input_description(array: np.ndarray) -> str:
    return f"{array.dtype}{list(array.shape)}"


@pytest.mark.parametrize(("qualified", "make", "fragment"), [pytest.param(q, m, f, id=i) for i, q, m, f in ERRORS])
def test_bad_inputs_raise(qualified: str, make: Callable[[np.random.Generator], list[Any]], fragment: str) -> None:
    args = make(np.random.default_rng(0))
    with pytest.raises(TORCH_ERRORS):
        torch_call(qualified, plain_args(args))
    graph, inputs = build(qualified, args)
    with pytest.raises(GraphRuntimeError) as info:
        run(graph, inputs)
    message = str(info.value)
    op = qualified.split("::")[1].split(".")[0]
    node = graph.outputs()[0].node
    assert info.value.node is node
    assert f"aten::{op}(" in message, message
    assert fragment in message, message
    assert _input_description(inputs[0]) in message, message


def test_error_message_names_node_and_shapes() -> None:
    graph = parse_ir(
        """graph(%x : Double(2, 3)):
  %a : int = prim::Constant[value=3]()
  %b : int = prim::Constant[value=0]()
  %y : Tensor = aten::transpose(%x, %a, %b)
  return (%y)
"""
    )
    with pytest.raises(GraphRuntimeError) as info:
        run(graph, [np.zeros((2, 3))])
    message = str(info.value)
    assert message.startswith("%y : Tensor = aten::transpose(%x, %a, %b): ")
    assert "transpose: dim 3 is out of range for a tensor of rank 2" in message
    assert "%x: float64[2, 3]" in message


def test_view_error_in_a_longer_graph() -> None:
    graph = parse_ir(
        """graph(%x : Double(2, 3)):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::unsqueeze(%x, %one)
  %five : int = prim::Constant[value=5]()
  %m1 : int = prim::Constant[value=-1]()
  %shape : int[] = prim::ListConstruct(%five, %m1)
  %z : Tensor = aten::view(%y, %shape)
  return (%z)
"""
    )
    with pytest.raises(GraphRuntimeError) as info:
        run(graph, [np.zeros((2, 3))])
    message = str(info.value)
    assert "aten::view(%y, %shape)" in message
    assert "%y: float64[2, 1, 3]" in message and "%shape: list[int" in message
    assert "[5, -1] is invalid for an input of 6 elements" in message


def test_empty_lists_are_refused() -> None:
    with pytest.raises(KernelError, match="cat: expected a non-empty list"):
        call_kernel("aten::cat", [], 0)
    with pytest.raises(KernelError, match="stack: expected a non-empty list"):
        call_kernel("aten::stack", [], 0)
    with pytest.raises(ValueError, match="non-empty"):
        torch.cat([])
    assert call_kernel("aten::broadcast_tensors", []) == [] == list(torch.broadcast_tensors())
