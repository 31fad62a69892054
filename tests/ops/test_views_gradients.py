"""Acceptance 2 for the view, join/split and container formulas: each graph
is checked against torch (check_gradient; torch's Gradient lists only where
torch 2.13 differentiates the op) and against finite differences in float64.
Dims are negative where the op allows it; some pieces of a split go unused
(their gradient is undefined and must count as zeros)."""

from __future__ import annotations

import numpy as np
import pytest

from gradview.autodiff import differentiate
from gradview.ir import parse_ir
from tests.autodiff.finite_differences import check_finite_differences
from tests.autodiff.formula_case_tools import check_formula, tensor_type

T34 = tensor_type(3, 4)


def const(name: str, kind: str, value: str | None = None) -> str:
    text = f"[value={value}]" if value is not None else ""
    return f"  %{name} : {kind} = prim::Constant{text}()\n"


def unary(expr: str, shape: tuple, out: tuple, consts: str = "") -> str:
    return (
        f"graph(%x : {tensor_type(*shape)}):\n{consts}"
        f"  %y : {tensor_type(*out)} = {expr}\n  return (%y)\n"
    )


# -- reshapes ----------------------------------------------------------------------------------
RESHAPES = {
    "view": ("aten::view(%x, %s)", (3, 4), (2, 6), const("s", "int[]", "[2, -1]"), True),
    "reshape": ("aten::reshape(%x, %s)", (3, 4), (4, 3), const("s", "int[]", "[4, 3]"), True),
    "reshape_0d": ("aten::reshape(%x, %s)", (1, 1), (), "  %s : int[] = prim::ListConstruct()\n", True),
    "_unsafe_view": ("aten::_unsafe_view(%x, %s)", (3, 4), (12,), const("s", "int[]", "[12]"), False),
    "flatten": ("aten::flatten(%x, %a, %b)", (2, 3, 2), (2, 6),
                const("a", "int", "1") + const("b", "int", "-1"), False),
    "squeeze": ("aten::squeeze(%x)", (3, 1, 4, 1), (3, 4), "", True),
    "squeeze_dim": ("aten::squeeze(%x, %d)", (3, 1, 4), (3, 4), const("d", "int", "-2"), True),
    "squeeze_dims": ("aten::squeeze(%x, %d)", (3, 1, 4, 1), (3, 4), const("d", "int[]", "[1, -1]"), False),
}


@pytest.mark.parametrize("case", RESHAPES)
def test_reshapes(case: str) -> None:
    expr, shape, out, consts, torch_lists = RESHAPES[case]
    grad = check_formula(unary(expr, shape, out, consts), torch_lists=torch_lists)
    assert grad.captured_count == 0  # the input's size is a constant


def test_view_with_unknown_sizes_captures_the_size() -> None:
    text = "graph(%x : Tensor):\n" + const("s", "int[]", "[2, -1]") + "  %y : Tensor = aten::view(%x, %s)\n  return (%y)\n"
    x = np.random.default_rng(0).uniform(0.5, 1.5, (3, 4))
    grad = check_formula(text, inputs=[x], torch_lists=False)
    assert not _no_size_computed(grad)  # size(x) is taken in the forward and captured, not x


# -- broadcasts --------------------------------------------------------------------------------
EXPANDS = {
    "new_dims": ((4, 1), "[2, 4, 3]", (2, 4, 3), "0"),
    "minus_one": ((1, 3), "[2, 4, -1]", (2, 4, 3), "0"),
    "same": ((3, 4), "[3, 4]", (3, 4), "0"),
}


@pytest.mark.parametrize("case", EXPANDS)
def test_expand(case: str) -> None:
    shape, size, out, implicit = EXPANDS[case]
    consts = const("s", "int[]", size) + const("i", "bool", implicit)
    grad = check_formula(unary("aten::expand(%x, %s, %i)", shape, out, consts))
    assert grad.captured_count == 0


def test_expand_implicit() -> None:
    """torch's executor drops implicit expands (RemoveExpands), so only finite differences here."""
    consts = const("s", "int[]", "[2, 4, -1]") + const("i", "bool", "1")
    text = unary("aten::expand(%x, %s, %i)", (1, 3), (2, 4, 3), consts)
    check_finite_differences(text, [np.random.default_rng(0).uniform(0.5, 1.5, (1, 3))])


def test_expand_with_list_construct_size() -> None:
    consts = const("a", "int", "2") + const("b", "int", "-1") + const("i", "bool", "0")
    consts += "  %s : int[] = prim::ListConstruct(%a, %b)\n"
    check_formula(unary("aten::expand(%x, %s, %i)", (3,), (2, 3), consts), torch_lists=False)


def test_expand_as() -> None:
    text = (
        f"graph(%x : {tensor_type(4, 1)}, %o : {tensor_type(2, 4, 3, grad=False)}):\n"
        f"  %y : {tensor_type(2, 4, 3)} = aten::expand_as(%x, %o)\n  return (%y)\n"
    )
    grad = check_formula(text)
    assert grad.df_output_vjps == [0]


# -- dim moves ---------------------------------------------------------------------------------
DIM_MOVES = {
    "unsqueeze_last": ("aten::unsqueeze(%x, %d)", (3, 4), (3, 4, 1), const("d", "int", "-1"), True),
    "unsqueeze_first": ("aten::unsqueeze(%x, %d)", (3, 4), (1, 3, 4), const("d", "int", "0"), True),
    "t": ("aten::t(%x)", (3, 4), (4, 3), "", True),
    "t_1d": ("aten::t(%x)", (4,), (4,), "", True),
    "transpose": ("aten::transpose(%x, %a, %b)", (2, 3, 4), (4, 3, 2),
                  const("a", "int", "-1") + const("b", "int", "0"), True),
    "permute": ("aten::permute(%x, %p)", (2, 3, 4), (4, 2, 3), const("p", "int[]", "[2, 0, -2]"), True),
}


@pytest.mark.parametrize("case", DIM_MOVES)
def test_dim_moves(case: str) -> None:
    expr, shape, out, consts, torch_lists = DIM_MOVES[case]
    grad = check_formula(unary(expr, shape, out, consts), torch_lists=torch_lists)
    assert grad.captured_count == 0


def test_permute_with_runtime_dims() -> None:
    consts = const("a", "int", "-1") + const("b", "int", "0") + const("c", "int", "1")
    consts += "  %p : int[] = prim::ListConstruct(%a, %b, %c)\n"
    grad = check_formula(unary("aten::permute(%x, %p)", (2, 3, 4), (4, 2, 3), consts), torch_lists=False)
    assert grad.df is not None
    assert any(n.kind() == "gradview::invert_permutation" for n in grad.df.all_nodes())


# -- reads of a part ---------------------------------------------------------------------------
PARTS = {
    "select": ("aten::select(%x, %d, %i)", (3, 4), (4,), const("d", "int", "0") + const("i", "int", "1")),
    "select_negative": ("aten::select(%x, %d, %i)", (3, 4), (3,), const("d", "int", "-1") + const("i", "int", "-2")),
    "slice_step": ("aten::slice(%x, %d, %a, %b, %s)", (5, 4), (2, 4),
                   const("d", "int", "0") + const("a", "int", "1") + const("b", "NoneType") + const("s", "int", "2")),
    "slice_negative": ("aten::slice(%x, %d, %a, %b, %s)", (3, 5), (3, 2),
                       const("d", "int", "-1") + const("a", "int", "-3") + const("b", "int", "-1")
                       + const("s", "int", "1")),
    "slice_all": ("aten::slice(%x, %d, %a, %b, %s)", (3, 4), (3, 4),
                  const("d", "int", "1") + const("a", "NoneType") + const("b", "int", "9223372036854775807")
                  + const("s", "int", "1")),
}


@pytest.mark.parametrize("case", PARTS)
def test_reads_of_a_part(case: str) -> None:
    expr, shape, out, consts = PARTS[case]
    grad = check_formula(unary(expr, shape, out, consts), torch_lists=False)
    assert grad.captured_count == 0


def test_slice_with_runtime_optional_bounds() -> None:
    text = (
        f"graph(%x : {tensor_type(5, 3)}, %s : int?, %e : int?):\n" + const("d", "int", "0") + const("one", "int", "1")
        + "  %y : Tensor = aten::slice(%x, %d, %s, %e, %one)\n  return (%y)\n"
    )
    x = np.random.default_rng(0).uniform(0.5, 1.5, (5, 3))
    for start, end in [(None, 3), (1, None), (None, None), (-4, -1)]:
        check_formula(text, inputs=[x, start, end], torch_lists=False, seeds=(0,))


# -- copies ------------------------------------------------------------------------------------
def test_contiguous() -> None:
    check_formula(unary("aten::contiguous(%x, %m)", (3, 4), (3, 4), const("m", "int", "0")))


def test_clone() -> None:
    check_formula(unary("aten::clone(%x, %m)", (3, 4), (3, 4), const("m", "NoneType")), torch_lists=False)


# -- joining -----------------------------------------------------------------------------------
def _join_text(kind: str, shapes: list[tuple], grads: list[bool], dim: int, out: tuple) -> str:
    params = ", ".join(f"%a{i} : {tensor_type(*s, grad=g)}" for i, (s, g) in enumerate(zip(shapes, grads, strict=True)))
    items = ", ".join(f"%a{i}" for i in range(len(shapes)))
    return (
        f"graph({params}):\n" + const("d", "int", str(dim))
        + f"  %l : Tensor[] = prim::ListConstruct({items})\n"
        + f"  %y : {tensor_type(*out)} = aten::{kind}(%l, %d)\n  return (%y)\n"
    )


CATS = {
    "rows": ([(2, 4), (3, 4), (1, 4)], [True, True, False], 0, (6, 4)),
    "negative_dim": ([(3, 2), (3, 1)], [True, True], -1, (3, 3)),
    "single": ([(3, 4)], [True], 1, (3, 4)),
}


@pytest.mark.parametrize("case", CATS)
def test_cat(case: str) -> None:
    shapes, grads, dim, out = CATS[case]
    grad = check_formula(_join_text("cat", shapes, grads, dim, out), torch_lists=False)
    assert grad.df_output_vjps == [i for i, g in enumerate(grads) if g]
    assert grad.captured_count == 0  # the lengths are constants


def test_cat_with_unknown_sizes() -> None:
    text = (
        "graph(%a : Tensor, %b : Tensor):\n" + const("d", "int", "-1")
        + "  %l : Tensor[] = prim::ListConstruct(%a, %b)\n  %y : Tensor = aten::cat(%l, %d)\n  return (%y)\n"
    )
    rng = np.random.default_rng(1)
    grad = check_formula(text, inputs=[rng.uniform(size=(3, 2)), rng.uniform(size=(3, 3))], torch_lists=False)
    assert grad.captured_count == 1  # the lengths, from gradview::sizes_along


@pytest.mark.parametrize("dim,out", [(0, (2, 3, 4)), (-1, (3, 4, 2)), (1, (3, 2, 4))])
def test_stack(dim: int, out: tuple) -> None:
    check_formula(_join_text("stack", [(3, 4), (3, 4)], [True, True], dim, out), torch_lists=False)


# -- splitting, with unused pieces -------------------------------------------------------------
def _split_text(call: str, shape: tuple, pieces: list[tuple], used: list[int], consts: str) -> str:
    names = ", ".join(f"%p{i} : {tensor_type(*s)}" for i, s in enumerate(pieces))
    lines = [
        f"graph(%x : {tensor_type(*shape)}):",
        consts.rstrip("\n"),
        f"  %l : Tensor[] = {call}",
        f"  {names} = prim::ListUnpack(%l)",
    ]
    outs = []
    for i in used:
        lines.append(f"  %q{i} : {tensor_type(*pieces[i])} = aten::mul(%p{i}, %p{i})")
        outs.append(f"%q{i}")
    lines.append(f"  return ({', '.join(outs)})")
    return "\n".join(line for line in lines if line) + "\n"


SPLITS = {
    "chunk_uneven_unused_middle": ("aten::chunk(%x, %n, %d)", (5, 4), [(2, 4), (2, 4), (1, 4)], [0, 2],
                                   const("n", "int", "3") + const("d", "int", "0")),
    "chunk_negative_dim": ("aten::chunk(%x, %n, %d)", (3, 4), [(3, 2), (3, 2)], [0, 1],
                           const("n", "int", "2") + const("d", "int", "-1")),
    "chunk_fewer_pieces": ("aten::chunk(%x, %n, %d)", (3, 5), [(3, 2), (3, 2), (3, 1)], [1],
                           const("n", "int", "4") + const("d", "int", "1")),
    "split_size_unused_last": ("aten::split(%x, %n, %d)", (5, 4), [(2, 4), (2, 4), (1, 4)], [0, 1],
                               const("n", "int", "2") + const("d", "int", "0")),
    "split_sizes": ("aten::split(%x, %n, %d)", (3, 4), [(3, 1), (3, 3)], [1],
                    const("n", "int[]", "[1, 3]") + const("d", "int", "-1")),
    "split_with_sizes": ("aten::split_with_sizes(%x, %n, %d)", (5, 2), [(2, 2), (3, 2)], [0],
                         const("n", "int[]", "[2, 3]") + const("d", "int", "0")),
    "unbind_unused": ("aten::unbind(%x, %d)", (3, 4), [(3,), (3,), (3,), (3,)], [0, 3], const("d", "int", "-1")),
    "unbind_all": ("aten::unbind(%x, %d)", (2, 3), [(3,), (3,)], [0, 1], const("d", "int", "0")),
}


@pytest.mark.parametrize("case", SPLITS)
def test_splits(case: str) -> None:
    call, shape, pieces, used, consts = SPLITS[case]
    grad = check_formula(_split_text(call, shape, pieces, used, consts), torch_lists=False)
    assert grad.df_output_vjps == [0]
    assert _no_size_computed(grad)  # x's size is a constant


def _no_size_computed(grad: object) -> bool:
    return not any(n.kind() == "aten::size" for n in grad.f.all_nodes())  # type: ignore[attr-defined]


def test_chunk_with_unknown_sizes() -> None:
    text = (
        "graph(%x : Tensor):\n" + const("n", "int", "2") + const("d", "int", "1")
        + "  %l : Tensor[] = aten::chunk(%x, %n, %d)\n  %a : Tensor, %b : Tensor = prim::ListUnpack(%l)\n"
        + "  %y : Tensor = aten::mul(%b, %b)\n  return (%y)\n"
    )
    x = np.random.default_rng(2).uniform(0.5, 1.5, (2, 5))
    grad = check_formula(text, inputs=[x], torch_lists=False)
    assert not _no_size_computed(grad)  # size(x) is taken in the forward and captured


# -- lists and tuples --------------------------------------------------------------------------
def test_list_construct_then_unpack() -> None:
    text = (
        f"graph(%a : {T34}, %b : {tensor_type(4)}):\n"
        "  %l : Tensor[] = prim::ListConstruct(%a, %b)\n"
        f"  %p : {T34}, %q : {tensor_type(4)} = prim::ListUnpack(%l)\n"
        f"  %y : {T34} = aten::mul(%p, %q)\n  return (%y)\n"
    )
    check_formula(text, torch_lists=False)


def test_tuple_construct_then_unpack_with_an_int() -> None:
    text = (
        f"graph(%a : {T34}, %b : {tensor_type(4)}):\n" + const("k", "int", "2")
        + "  %t : (Tensor, int, Tensor) = prim::TupleConstruct(%a, %k, %b)\n"
        + f"  %p : {T34}, %n : int, %q : {tensor_type(4)} = prim::TupleUnpack(%t)\n"
        + f"  %z : {T34} = aten::mul(%p, %n)\n  %y : {T34} = aten::mul(%z, %q)\n  return (%y)\n"
    )
    check_formula(text, torch_lists=False)


def test_chunk_then_cat_in_another_order() -> None:
    text = (
        f"graph(%x : {tensor_type(4, 3)}):\n" + const("n", "int", "2") + const("d", "int", "0")
        + "  %l : Tensor[] = aten::chunk(%x, %n, %d)\n"
        + f"  %a : {tensor_type(2, 3)}, %b : {tensor_type(2, 3)} = prim::ListUnpack(%l)\n"
        + f"  %e : {tensor_type(2, 3)} = aten::exp(%a)\n"
        + "  %m : Tensor[] = prim::ListConstruct(%b, %e, %b)\n"
        + f"  %y : {tensor_type(6, 3)} = aten::cat(%m, %d)\n  return (%y)\n"
    )
    check_formula(text, torch_lists=False)


def test_unused_list_piece_is_undefined_in_df() -> None:
    """The unused chunk's gradient reaches the backward kernel as None (and counts as zeros)."""
    call, shape, pieces, used, consts = SPLITS["chunk_uneven_unused_middle"]
    grad = differentiate(parse_ir(_split_text(call, shape, pieces, used, consts)), mode="extended")
    assert grad.df is not None
    kinds = [n.kind() for n in grad.df.all_nodes()]
    assert "prim::AutogradZero" in kinds and "gradview::chunk_backward" in kinds


def test_constant_chunk_with_an_unused_chunk() -> None:
    text = (
        f"graph(%x : {tensor_type(5, 3)}):\n"
        f"  %a : {tensor_type(2, 3)}, %b : {tensor_type(2, 3)}, %c : {tensor_type(1, 3)} = "
        "prim::ConstantChunk[chunks=3, dim=0](%x)\n"
        f"  %y : {tensor_type(2, 3)} = aten::mul(%a, %a)\n  %z : {tensor_type(1, 3)} = aten::exp(%c)\n"
        "  return (%y, %z)\n"
    )
    check_finite_differences(text, [np.random.default_rng(0).uniform(0.5, 1.5, (5, 3))])


def test_constant_chunk_with_every_chunk_used() -> None:
    text = (
        f"graph(%x : {tensor_type(4, 3)}):\n"
        f"  %a : {tensor_type(2, 3)}, %b : {tensor_type(2, 3)} = prim::ConstantChunk[chunks=2, dim=0](%x)\n"
        f"  %y : {tensor_type(2, 3)} = aten::mul(%a, %b)\n  return (%y)\n"
    )
    check_formula(text)
