"""TorchScript's list, string, printing and prim ops (kernels/containers.py) against PyTorch.

Three kinds of checks, with the helpers of scalar_oracle.py:

* every overload PyTorch can call directly (strings, lists of scalars,
  ``prim::min``/``max``/``abs``) goes through a one-node graph and is
  compared with ``torch.ops.<namespace>.<op>.<overload>`` on edge-case
  values, where PyTorch raising means gradview must raise GraphRuntimeError
  naming the node;
* ops on generic lists (``t[]``), which ``torch.ops`` cannot type, prims on
  arrays, and ``format``/``print`` run inside functions compiled by
  ``torch.jit.script``: the printed graph is parsed, run with ``run_graph``
  and compared with calling the scripted function;
* a coverage test that every kernel containers.py and scalar_math.py register was
  exercised by this module's tests or test_scalar_math.py's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from gradview.ir import BoolType, FloatType, IntType, ListType, OptionalType, TensorType, parse_ir
from gradview.kernels import containers as lists_module
from gradview.kernels import scalar_math as scalar_math_module
from gradview.kernels.dtypes import scalar_type_index
from gradview.ops import KERNELS
from gradview.runtime import GraphRuntimeError

from .scalar_oracle import (
    INF,
    NAN,
    TORCH_DTYPES,
    Case,
    assert_node_raises,
    check_scripted,
    check_table,
    expected_device,
    graph_key,
    node_graph,
    on_numpy,
    run,
    run_node,
    scripted_keys,
)
from .test_scalar_math import CASES as SCALAR_MATH_CASES
from .test_scalar_math import SCRIPTED_CASES as SCALAR_MATH_SCRIPTED_CASES
from .test_scalar_math import int_arithmetic


# -- case tables ----------------------------------------------------------------------
def build_cases() -> dict[str, list[Case]]:
    cases: dict[str, list[Case]] = {}
    # lengths, strings, lists of scalars
    cases["aten::len.Tensor"] = [Case([np.zeros(s)]) for s in [(3,), (3, 2), (0, 4), (1, 1, 1)]] + [
        Case([np.array(1.0)], expect="raises")
    ]
    cases["aten::len.str"] = [Case([s]) for s in ["", "abc", "a b\tc"]]  # ASCII: see containers.py
    cases["aten::__getitem__.str"] = [Case(["abc", i]) for i in [0, 2, -1, -3]] + [
        Case(["abc", i], expect="raises") for i in [3, -4, 100]
    ]
    cases["aten::slice.str"] = [
        Case(["hello", a, b, c]) for a, b, c in [(1, 4, 1), (None, None, -1), (-100, 100, 2), (None, -1, 1),
                                                 (3, None, 1), (4, 0, -2), (None, None, 3), (2, 2, 1)]
    ] + [Case(["hello", 0, 5, 0], expect="raises")]
    cases["aten::list"] = [Case([s]) for s in ["", "abc"]]
    cases["aten::add.str"] = [Case([a, b]) for a, b in [("a", "b"), ("", "x"), ("ab", "")]]
    cases["aten::split.str"] = [
        Case(list(args)) for args in [("a b  c", None, -1), ("a,b,,c", ",", -1), ("a,b,c", ",", 1), ("a,b,c", ",", 0),
                                      (" a b c ", None, 1), ("", None, -1), ("", ",", -1), ("a--b--c", "--", -1),
                                      ("\ta\nb\r\n c\x0b", None, -1)]
    ] + [Case(["a,b", "", -1], expect="raises")]
    for name, elem, values in (("int", IntType(), [[1, 2, 3], [], [2**62, 2**62], [-5]]),
                               ("float", FloatType(), [[1.5, 2.0], [], [0.1] * 10, [INF, -INF]]),
                               ("bool", BoolType(), [[True, False, True], [], [False]])):
        cases[f"aten::sum.{name}"] = [Case([v], [ListType(elem)]) for v in values]
    cases["aten::__contains__.int_list"] = [Case([[1, 2], 2]), Case([[1, 2], 3]), Case([[], 0])]
    cases["aten::__contains__.str_list"] = [Case([["a"], "a"]), Case([["a"], "b"])]
    cases["aten::__contains__.float_list"] = [Case([[1.0, 2.5], 2.5]), Case([[1.0], 1.5]), Case([[NAN], NAN]), Case([[0.0], -0.0])]
    cases["aten::__range_length"] = [
        Case([lo, hi, st]) for lo, hi, st in [(0, 10, 3), (10, 0, -3), (0, 10, -1), (5, 5, 1), (-7, 8, 2), (0, 1, 100), (3, -9, -4)]
    ] + [Case([0, 10, 0], expect="raises")]
    cases["aten::__derive_index"] = [Case([i, s, t]) for i, s, t in [(2, 5, 3), (0, 0, 1), (4, -3, -2), (7, 10, 0)]]

    # prims with torch.ops.prim overloads (gradview keys them by kind)
    nums = [(1, 2), (2, 1), (-3, -3)]
    fl = [(1.5, 2.5), (NAN, 1.0), (1.0, NAN), (-0.0, 0.0), (0.0, -0.0)]
    mixed = [(1, 2.5), (3, -1.0), (2, NAN)]
    for op in ("min", "max"):
        key = f"prim::{op}"
        cases[f"{key}.int"] = [Case([a, b]) for a, b in nums]
        cases[f"{key}.float"] = [Case([a, b]) for a, b in fl]
        cases[f"{key}.int_float"] = [Case([a, b]) for a, b in mixed]
        cases[f"{key}.float_int"] = [Case([b, a]) for a, b in mixed]
        cases[f"{key}.self_int"] = [Case([v]) for v in ([3, 1, 2], [5], [-1, -1])] + [Case([[]], [ListType(IntType())], "raises")]
        cases[f"{key}.self_float"] = [Case([v]) for v in ([NAN, 1.0, 2.0], [1.0, NAN, 0.5], [2.5])]
        cases[f"{key}.int_list"] = [Case([a, b]) for a, b in (([1, 2], [1, 3]), ([1, 2, 3], [1, 2]), ([2], [1, 9]), ([], [0]), ([4], [4]))]
    cases["prim::abs.int"] = [Case([a]) for a in (3, -3, 0, -(2**63))]
    cases["prim::abs.float"] = [Case([a]) for a in (2.5, -2.5, -0.0, -INF, NAN)]
    return cases


CASES = build_cases()


@pytest.mark.parametrize("qualified", sorted(CASES))
def test_against_torch_ops(qualified: str) -> None:
    check_table(qualified, CASES[qualified])


# -- generic lists and prims by graph ------------------------------------------------------
def test_generic_list_ops_by_graph() -> None:
    """t[] ops that torch.ops cannot type, on lists of ints, floats, strings and arrays."""
    arrays = [np.ones(2), np.zeros((1, 3))]
    tensor_list = ListType(TensorType())
    for index in (0, 1, -1, -2):
        assert run_node("aten::__getitem__.t", [[10, 20], index]) == [[10, 20][index]]
        assert run_node("aten::select.t", [["a", "b"], index]) == [["a", "b"][index]]
        (got,) = run(node_graph("aten::__getitem__.t", [arrays, index], [tensor_list, IntType()]), [arrays, index])
        assert got is arrays[index] if on_numpy() else np.array_equal(got, arrays[index])
    assert_node_raises("aten::select.t", [[1], -2], match="out of range")
    assert run_node("aten::len.t", [[1.5, 2.5, 3.5]]) == [3]
    assert run_node("aten::list.t", [[1, 2]]) == [[1, 2]]
    assert run_node("aten::add.t", [[1], [2, 3]]) == [[1, 2, 3]]
    assert run_node("aten::mul.left_t", [["a", "b"], 2]) == [["a", "b", "a", "b"]]
    assert run_node("aten::mul.left_t", [[1], -1]) == [[]]
    assert run_node("aten::mul.right_", [3, [1.5]]) == [[1.5, 1.5, 1.5]]
    lst = list(range(10))
    for start, end, step in [(None, None, 1), (1, None, 2), (None, -1, 1), (-100, 100, 3), (None, None, -1),
                             (8, 2, -2), (5, 5, 1), (-3, None, 1)]:
        types = [ListType(IntType()), OptionalType(IntType()), OptionalType(IntType()), IntType()]
        graph = node_graph("aten::slice.t", [lst, start, end, step], types)
        assert run(graph, [lst, start, end, step]) == [lst[start:end:step]]
    assert_node_raises("aten::slice.t", [[1, 2], 0, 2, 0], match="non-zero step")


def test_list_copies_and_in_place_mutation() -> None:
    """list() and add copy; append mutates the list other values hold and returns it."""
    graph = parse_ir(
        """graph(%l : int[], %x : int):
  %copy : int[] = aten::list(%l)
  %same : int[] = aten::append(%l, %x)
  %n : int = aten::len(%l)
  %m : int = aten::len(%copy)
  return (%l, %same, %copy, %n, %m)
"""
    )
    source = [1, 2]
    out_l, same, copied, n, m = run(graph, [source, 3])
    assert out_l == same == [1, 2, 3] and copied == [1, 2] and (n, m) == (3, 2)
    if on_numpy():  # other backends copy the input list onto the device
        assert source == [1, 2, 3]  # the caller's list was appended to


def test_prims_on_arrays() -> None:
    x = np.ones((2, 3), dtype=np.float32)
    tensor = TensorType()
    assert run(node_graph("prim::device", [x], [tensor]), [x]) == [expected_device()]
    assert run(node_graph("prim::is_cuda", [x], [tensor]), [x]) == [not on_numpy()]
    for dtype in (np.float32, np.float64, np.int64, np.int32, np.bool_, np.uint8, np.float16):
        y = np.zeros(2, dtype=dtype)
        assert run(node_graph("prim::dtype", [y], [tensor]), [y]) == [scalar_type_index(dtype)]
    assert scalar_type_index(np.float32) == TORCH_DTYPES[torch.float32]
    assert run(node_graph("prim::requires_grad", [x], [tensor]), [x]) == [False]
    assert run(node_graph("prim::shape", [x], [tensor]), [x]) == [[2, 3]]
    assert run(node_graph("prim::shape", [np.array(1.0)], [tensor]), [np.array(1.0)]) == [[]]
    for value, dtype in [(3, np.int64), (2.5, np.float64), (True, np.bool_), (-(2**62), np.int64)]:
        (out,) = run(node_graph("prim::NumToTensor", [value]), [value])
        assert out.shape == () and out.dtype == dtype and out == value
    for array, expected in [(np.array(3), 3), (np.array([2.5]), 2.5), (np.array(True), True)]:
        (out,) = run(node_graph("prim::ImplicitTensorToNum", [array], [tensor]), [array])
        assert type(out) is type(expected) and out == expected
    assert run(node_graph("prim::abs", [x * -2], [tensor]), [x * -2])[0].tolist() == (x * 2).tolist()
    graph = parse_ir("graph():\n  %u : int = prim::Uninitialized()\n  return (%u)\n")
    assert run(graph, []) == [None]


def test_num_to_tensor_matches_torch() -> None:
    for value in (3, 2.5, True):
        expected = torch.ops.prim.NumToTensor(value)
        (ours,) = run(node_graph("prim::NumToTensor", [value]), [value])
        assert ours.dtype == expected.numpy().dtype and ours == expected.item()


# -- scripted functions ---------------------------------------------------------------------
@torch.jit.script
def list_building(n: int, k: int):
    values: list[int] = []
    for i in range(n):
        values.append(i * i - k)
    last = values[-1] if len(values) > 0 else 0
    copied = list(values)
    copied.append(99)
    return (values, last, len(values), values[1:3], values[::-2], sum(values), 3 in values,
            values + [7], values * 2, 2 * values, copied, min(values), max(values))


@torch.jit.script
def list_methods(values: list[int], i: int, words: list[str]):
    values[i] = 5
    values.extend([1, 2])
    popped = values.pop()
    values.insert(0, 9)
    first = values.pop(0)
    values.reverse()
    copied = values.copy()
    joined = ", ".join(words)
    text = str(i) + str(copied) + str(1.0) + str(words)
    values.clear()
    return popped, first, copied, values, joined, text, len(words), words[i]


@torch.jit.script
def formatting(a: float, b: int, s: str, floats: list[float], words: list[str], flag: bool, o: int | None):
    # TorchScript's format: only "{}" is a placeholder, extra arguments are ignored.
    return (
        "{}|{}|{}|{}|{}|{}|{}|{0}|{x}|{}".format(a, b, s, floats, words, flag, o, (b, s), "unused"),  # noqa: F523, F524, F525
        "n={} done".format(b),  # noqa: UP032 - aten::format is under test
        "{}".format([[1], [2, 3]]),  # noqa: UP032
    )


@torch.jit.script
def tensor_scalars(x: torch.Tensor, one: torch.Tensor):
    return x.device, x.dtype, x.requires_grad, int(one), float(one), bool(one), len(x)


@torch.jit.script
def string_ops(s: str, i: int):
    parts = s.split(",")
    return len(s), s[i], s[1:], parts, list(s), s + "!", "x" in parts, s.split()


@torch.jit.script
def uses_size(x: torch.Tensor):
    n = x.size(0)
    return [n * 2, x.dim()]


SCRIPTED_CASES = [
    (list_building, [(5, 0), (1, 3), (8, -2)]),
    (list_methods, [([1, 2, 3], 1, ["a", "b"]), ([4, 5], -1, ["x", "y", "z"])]),
    (formatting, [(1.0, -3, "x'y", [1.0, 0.5], ["a", "b'"], True, None),
                  (1.0 / 3.0, 7, "", [], [], False, 5),
                  (1e20, 0, "s", [1e16, NAN, -0.0, INF], ["c"], True, -2)]),
    (tensor_scalars, [(torch.ones(3, 2), torch.tensor(2.5)), (torch.zeros(4, dtype=torch.int64), torch.tensor([0])),
                      (torch.ones(1, dtype=torch.bool), torch.tensor(True))]),
    (string_ops, [("a,b,,c", 0), ("hello world,x", -1), (" a b ", 2)]),
    (uses_size, [(torch.ones(3, 2),), (torch.zeros(1, 4, 2),)]),
]


@pytest.mark.parametrize(("fn", "inputs"), [(fn, args) for fn, cases in SCRIPTED_CASES for args in cases],
                         ids=lambda v: v.name if hasattr(v, "name") else None)
def test_scripted_function(fn: Any, inputs: tuple[Any, ...]) -> None:
    check_scripted(fn, *inputs)


def test_scripted_errors_raise_graph_runtime_error() -> None:
    graph = parse_ir(str(list_methods.graph))
    with pytest.raises(RuntimeError):
        list_methods([1, 2], 7, ["a"])
    with pytest.raises(GraphRuntimeError, match="_set_item"):
        run(graph, [[1, 2], 7, ["a"]])
    # int(nan) is undefined behaviour in PyTorch's C++ (it returns INT64_MIN); we refuse.
    graph = parse_ir(str(int_arithmetic.graph))
    with pytest.raises(GraphRuntimeError, match="aten::Int"):
        run(graph, [7, 0, NAN])


@torch.jit.script
def printing(a: int, x: float, words: list[str]):
    print("values:", a, x, words, (a, "t"), None, True)
    return a


def test_print_matches_torchscript(capfd: pytest.CaptureFixture[str]) -> None:
    printing(3, 1.0, ["a", "b"])
    theirs = capfd.readouterr().out
    graph = parse_ir(str(printing.graph))
    assert run(graph, [3, 1.0, ["a", "b"]]) == [3]
    ours = capfd.readouterr().out
    assert ours == theirs == "values: 3 1. [a, b] (3, t) None True\n"


def test_format_value_of_arrays() -> None:
    text = lists_module.format_value(np.array([1.5, 2.0], dtype=np.float32))
    assert text.endswith("\n[ CPUFloatType{2} ]")
    assert lists_module.format_value(np.float64(2.0)) == "2."


# -- coverage --------------------------------------------------------------------------------
# Checked by the graph tests here and in test_scalar_math.py (__is__/__isnot__,
# pop's error) rather than against torch.ops.
BY_GRAPH_TESTS = {
    "aten::__is__", "aten::__isnot__", "aten::__getitem__.t", "aten::select.t", "aten::len.t",
    "aten::list.t", "aten::add.t", "aten::mul.left_t", "aten::mul.right_", "aten::slice.t",
    "prim::device", "prim::is_cuda", "prim::dtype", "prim::requires_grad", "prim::shape",
    "prim::NumToTensor", "prim::ImplicitTensorToNum", "prim::Uninitialized", "prim::abs",
    "prim::Print", "aten::pop.t", "aten::append.t",
    # Called directly by test_scalar_math.py (the resolver prefers an earlier overload).
    "aten::Float.int", "aten::len.any", "aten::pow.int_to_int",
    # By graph in tests/kernels/test_tuples.py.
    "prim::TupleSlice",
    # Against eager torch on every op_db sample, scripted (tests/ops/test_op_db.py).
    "aten::item", "aten::equal", "aten::allclose",
}
def test_every_scalar_kernel_is_checked() -> None:
    modules = {lists_module.__name__, scalar_math_module.__name__}
    registered = {key for key, fn in KERNELS.items() if fn.__module__ in modules}
    scripted = [fn for fn, _ in SCRIPTED_CASES + SCALAR_MATH_SCRIPTED_CASES] + [printing]
    covered = {graph_key(q) for q in CASES | SCALAR_MATH_CASES} | BY_GRAPH_TESTS | scripted_keys(scripted)
    assert registered - covered == set()
