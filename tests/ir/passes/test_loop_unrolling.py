import numpy as np
import pytest

from gradview.ir import Node, parse_ir
from gradview.ir.passes.loop_unrolling import (
    MAX_BODY_REPEATS,
    MAX_BODY_SIZE,
    UNROLL_FACTOR,
    unroll_constant_loops,
    unroll_loops,
)

from .pass_check import check_pass, kinds

X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)

# acc = x; for i in range(TRIP): acc = acc * 0.5 + i
COUNTING = """graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %trip : int = prim::Constant[value=TRIP]()
  %r : Tensor = prim::Loop(%TRIPVALUE, %true, %x)
    block0(%i : int, %acc : Tensor):
      %half : float = prim::Constant[value=0.5]()
      %one : int = prim::Constant[value=1]()
      %h : Tensor = aten::mul(%acc, %half)
      %y : Tensor = aten::add(%h, %i, %one)
      -> (%true, %y)
  return (%r)
"""


def counting(trip: int | None) -> str:
    if trip is None:
        return COUNTING.replace("TRIP]", "0]").replace("%TRIPVALUE", "%n")
    return COUNTING.replace("TRIP]", f"{trip}]").replace("%TRIPVALUE", "%trip")


def loops(graph) -> list[Node]:  # test helper
    return [n for n in graph.all_nodes() if n.kind() == "prim::Loop"]


# -- complete unrolling --------------------------------------------------------------------
@pytest.mark.parametrize("pass_fn", [unroll_constant_loops, unroll_loops])
def test_constant_loop_is_unrolled_with_constant_counters(pass_fn) -> None:
    graph = check_pass(pass_fn, counting(3), [X, 0], changes=True)
    assert loops(graph) == []
    assert kinds(graph).count("aten::mul") == 3 and kinds(graph).count("aten::add") == 3
    counters = [n.inputs()[1] for n in graph.nodes() if n.kind() == "aten::add"]
    assert [c.node.kind() for c in counters] == ["prim::Constant"] * 3
    assert [c.node.i("value") for c in counters] == [0, 1, 2]


def test_zero_and_negative_trip_counts_leave_the_initial_values() -> None:
    for trip in (0, -2):
        graph = check_pass(unroll_constant_loops, counting(trip), [X, 0], changes=True)
        assert kinds(graph) == []
        assert graph.outputs()[0] is graph.inputs()[0]


def test_several_carried_values_and_a_nested_if_using_the_counter() -> None:
    text = """graph(%x : Tensor, %c : bool):
  %true : bool = prim::Constant[value=1]()
  %four : int = prim::Constant[value=4]()
  %r : Tensor, %s : Tensor = prim::Loop(%four, %true, %x, %x)
    block0(%i : int, %a : Tensor, %b : Tensor):
      %one : int = prim::Constant[value=1]()
      %next : Tensor = prim::If(%c)
        block0():
          %p : Tensor = aten::mul(%a, %i)
          -> (%p)
        block1():
          %q : Tensor = aten::add(%a, %b, %i)
          -> (%q)
      %t : Tensor = aten::tanh(%b)
      -> (%true, %next, %t)
  return (%r, %s)
"""
    for c in (True, False):
        graph = check_pass(unroll_constant_loops, text, [X, c], changes=True)
        assert loops(graph) == [] and kinds(graph).count("prim::If") == 4


def test_unused_counter_needs_no_constants() -> None:
    text = """graph(%x : Tensor):
  %true : bool = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %r : Tensor = prim::Loop(%two, %true, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::sin(%a)
      -> (%true, %b)
  return (%r)
"""
    graph = check_pass(unroll_constant_loops, text, [X], changes=True)
    assert kinds(graph) == ["aten::sin", "aten::sin"]


# -- what constant unrolling leaves alone -----------------------------------------------------
def test_non_constant_trip_count_is_left_to_unroll_loops() -> None:
    check_pass(unroll_constant_loops, counting(None), [X, 5], changes=False)


def test_too_many_repeats_are_left_alone() -> None:
    check_pass(unroll_constant_loops, counting(MAX_BODY_REPEATS), [X, 0], changes=False)
    graph = check_pass(unroll_constant_loops, counting(MAX_BODY_REPEATS - 1), [X, 0], changes=True)
    assert loops(graph) == []


def chain_body(size: int) -> str:
    """A loop running twice whose body has exactly ``size`` nodes."""
    lines = [f"      %v{k + 1} : Tensor = aten::neg(%v{k})" for k in range(size)]
    return (
        "graph(%x : Tensor):\n"
        "  %true : bool = prim::Constant[value=1]()\n"
        "  %two : int = prim::Constant[value=2]()\n"
        "  %r : Tensor = prim::Loop(%two, %true, %x)\n"
        "    block0(%i : int, %v0 : Tensor):\n"
        + "\n".join(lines)
        + f"\n      -> (%true, %v{size})\n  return (%r)\n"
    )


def test_body_size_limit() -> None:
    graph = check_pass(unroll_constant_loops, chain_body(MAX_BODY_SIZE), [X], changes=True)
    assert kinds(graph).count("aten::neg") == 2 * MAX_BODY_SIZE
    check_pass(unroll_constant_loops, chain_body(MAX_BODY_SIZE + 1), [X], changes=False)
    check_pass(unroll_loops, chain_body(MAX_BODY_SIZE + 1), [X], changes=False)


def test_while_loops_and_early_exits_are_left_alone() -> None:
    # The start condition is not constant (a while loop) ...
    text_while = """graph(%x : Tensor, %go : bool):
  %three : int = prim::Constant[value=3]()
  %r : Tensor = prim::Loop(%three, %go, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::sin(%a)
      -> (%go, %b)
  return (%r)
"""
    # ... or the body decides whether to go on (a break).
    text_break = """graph(%x : Tensor, %k : int):
  %true : bool = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %r : Tensor = prim::Loop(%three, %true, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::sin(%a)
      %go : bool = aten::lt(%i, %k)
      -> (%go, %b)
  return (%r)
"""
    for pass_fn in (unroll_constant_loops, unroll_loops):
        check_pass(pass_fn, text_while, [X, True], changes=False)
        check_pass(pass_fn, text_break, [X, 1], changes=False)


NESTED = """graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %r : Tensor = prim::Loop(%two, %true, %x)
    block0(%i : int, %a : Tensor):
      %s : Tensor = prim::Loop(%INNER, %true, %a)
        block0(%j : int, %b : Tensor):
          %c : Tensor = aten::add(%b, %j, %i)
          -> (%true, %c)
      -> (%true, %s)
  return (%r)
"""


def test_loop_around_a_loop_that_stays_is_left_alone() -> None:
    check_pass(unroll_constant_loops, NESTED.replace("%INNER", "%n"), [X, 3], changes=False)


def test_inner_loop_unrolled_first_lets_the_outer_one_unroll() -> None:
    text = NESTED.replace("%INNER", "%two")
    graph = check_pass(unroll_constant_loops, text, [X, 0], changes=True)
    assert loops(graph) == [] and kinds(graph).count("aten::add") == 4


# -- unrolling by a factor -----------------------------------------------------------------------
def tensor_ops(nodes, kind: str) -> int:  # test helper
    return sum(1 for k in nodes if k.kind() == kind and k.output().type().is_tensor())


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 17, -3])
def test_non_constant_loop_is_unrolled_by_eight_with_an_epilogue(n: int) -> None:
    graph = check_pass(unroll_loops, counting(None), [X, n], changes=True)
    main, epilogue = loops(graph)
    main_body, epilogue_body = main.blocks()[0], epilogue.blocks()[0]
    assert tensor_ops(main_body.nodes(), "aten::mul") == UNROLL_FACTOR
    assert tensor_ops(main_body.nodes(), "aten::add") == UNROLL_FACTOR
    assert tensor_ops(epilogue_body.nodes(), "aten::mul") == 1
    assert epilogue.inputs()[2] is main.outputs()[0]  # the epilogue goes on from the unrolled loop


def test_long_constant_loop_is_unrolled_by_eight() -> None:
    graph = check_pass(unroll_loops, counting(100), [X, 0], changes=True)
    main, epilogue = loops(graph)
    assert main.inputs()[0].node.i("value") == 100 // UNROLL_FACTOR
    assert epilogue.inputs()[0].node.i("value") == 100 % UNROLL_FACTOR


def test_long_constant_loop_with_no_remainder_needs_no_epilogue() -> None:
    graph = check_pass(unroll_loops, counting(8 * UNROLL_FACTOR), [X, 0], changes=True)
    (main,) = loops(graph)
    assert main.inputs()[0].node.i("value") == UNROLL_FACTOR
    assert tensor_ops(main.blocks()[0].nodes(), "aten::mul") == UNROLL_FACTOR


def test_big_body_is_not_unrolled_by_eight() -> None:
    text = chain_body(MAX_BODY_SIZE + 1).replace("prim::Loop(%two", "prim::Loop(%n").replace(
        "graph(%x : Tensor)", "graph(%x : Tensor, %n : int)"
    )
    check_pass(unroll_loops, text, [X, 3], changes=False)


# -- oracle: torch's loop unrolling on the same IR ------------------------------------------------
def _torch_tensor_ops(nodes, kind: str) -> int:
    import torch

    return sum(1 for k in nodes if k.kind() == kind and isinstance(k.output().type(), torch._C.TensorType))


@pytest.mark.parametrize("case", ["constant", "non-constant", "nested"])
def test_matches_torch_on_which_loops_are_unrolled(case: str) -> None:
    torch = pytest.importorskip("torch")
    text, ours_fn, theirs_fn = {
        "constant": (counting(3), unroll_constant_loops, torch._C._jit_pass_constant_loop_unrolling),
        "non-constant": (counting(None), unroll_loops, torch._C._jit_pass_loop_unrolling),
        "nested": (NESTED.replace("%INNER", "%two"), unroll_constant_loops, torch._C._jit_pass_constant_loop_unrolling),
    }[case]
    ours = parse_ir(text)
    assert ours_fn(ours) is True
    theirs = torch._C.parse_ir(text)
    theirs_fn(theirs)
    our_loops = [n for n in ours.nodes() if n.kind() == "prim::Loop"]
    their_loops = [n for n in theirs.nodes() if n.kind() == "prim::Loop"]
    assert len(our_loops) == len(their_loops)
    # The same number of copies of the tensor ops, in each loop body and
    # outside (the counters are computed differently: constants here).
    for kind in ("aten::mul", "aten::add"):
        assert tensor_ops(ours.nodes(), kind) == _torch_tensor_ops(theirs.nodes(), kind)
        for mine, their in zip(our_loops, their_loops, strict=True):
            assert tensor_ops(mine.blocks()[0].nodes(), kind) == _torch_tensor_ops(next(iter(their.blocks())).nodes(), kind)
