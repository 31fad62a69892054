"""``prim::TupleSlice`` (kernels/containers.py), run through parsed graphs.

TupleSlice has no schema: the interpreter finds its kernel by kind and passes
the ``beg``/``end`` attributes as keyword arguments (or the bounds as two int
inputs). The result must be the Python slice of the tuple, as a tuple, with
its elements unchanged (arrays with their values, numbers with their types).
"""

from __future__ import annotations

import numpy as np
import pytest

from gradview.ir import parse_ir
from gradview.kernels import KernelError
from gradview.ops import KERNELS
from gradview.runtime import run_graph

from . import oracle

X, Y = np.linspace(-1.0, 1.0, 4), np.arange(6).reshape(2, 3)

SLICE_TEXT = """graph(%x : Tensor, %y : Tensor, %n : int, %f : float):
  %t : (Tensor, int, Tensor, float) = prim::TupleConstruct(%x, %n, %y, %f)
  %s : {type} = prim::TupleSlice[beg={beg}, end={end}](%t)
  return (%s)
"""
TYPES = ["Tensor", "int", "Tensor", "float"]


@pytest.mark.parametrize(("beg", "end"), [(0, 4), (1, 3), (0, 2), (2, 4), (3, 4), (2, 2), (0, 0)])
def test_slice_with_attributes(beg: int, end: int) -> None:
    type_ = "(" + ", ".join(TYPES[beg:end]) + ")"
    graph = parse_ir(SLICE_TEXT.format(type=type_, beg=beg, end=end))
    (result,) = run_graph(graph, [X, Y, 7, 2.5], backend=oracle.BACKEND)
    expected = (X, 7, Y, 2.5)[beg:end]
    assert isinstance(result, tuple) and len(result) == len(expected)
    for ours, theirs in zip(result, expected, strict=True):
        if isinstance(theirs, np.ndarray):
            np.testing.assert_array_equal(ours, theirs)
        else:
            assert type(ours) is type(theirs) and ours == theirs


def test_slice_then_unpack_feeds_other_ops() -> None:
    graph = parse_ir("""graph(%x : Tensor, %y : Tensor, %z : Tensor):
  %t : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%x, %y, %z)
  %s : (Tensor, Tensor) = prim::TupleSlice[beg=1, end=3](%t)
  %a : Tensor, %b : Tensor = prim::TupleUnpack(%s)
  %m : Tensor = aten::mul(%a, %b)
  return (%m, %s)
""")
    z = np.linspace(3.0, -3.0, 4)
    m, s = run_graph(graph, [X, X * 2, z], backend=oracle.BACKEND)
    np.testing.assert_allclose(m, X * 2 * z)
    assert len(s) == 2
    np.testing.assert_array_equal(s[1], z)


def test_slice_with_bounds_as_inputs() -> None:
    # The kernel also takes the bounds as two int inputs (the other form lower_simple_tuples reads).
    fn = KERNELS["prim::TupleSlice"]
    assert fn(np, (1, 2, 3, 4), 1, 3) == (2, 3)
    assert fn(np, (1, 2, 3), beg=0, end=1) == (1,)
    assert fn(np, (1, 2, 3), 1, 10) == (2, 3)  # Python's slice rules


def test_bad_bounds_are_refused() -> None:
    fn = KERNELS["prim::TupleSlice"]
    with pytest.raises(KernelError, match="beg must be an int"):
        fn(np, (1, 2), beg=0.5, end=1)
    with pytest.raises(KernelError, match="two int inputs"):
        fn(np, (1, 2), 0, beg=0, end=1)
