import numpy as np
import pytest

from gradview.ir import constant_value, parse_ir
from gradview.ir.passes.peephole import peephole_optimize

from .pass_check import check_pass, kinds

X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
X3 = np.linspace(-1.0, 1.0, 24).reshape(2, 3, 4)
D23 = "Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu)"


def outputs_of(graph):  # test helper
    return [constant_value(v) for v in graph.outputs()]


# -- _grad_sum_to_size -------------------------------------------------------------
def test_grad_sum_to_size_with_none_is_its_input() -> None:
    text = """graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %g : Tensor = aten::_grad_sum_to_size(%x, %none)
  %y : Tensor = aten::mul(%g, %g)
  return (%y)
"""
    graph = check_pass(peephole_optimize, text, [X], changes=True)
    assert kinds(graph) == ["aten::mul"]


def test_nested_grad_sum_to_size_keeps_the_outer_size() -> None:
    text = """graph(%x : Tensor):
  %s1 : int[] = prim::Constant[value=[3, 4]]()
  %s2 : int[] = prim::Constant[value=[1, 4]]()
  %a : Tensor = aten::_grad_sum_to_size(%x, %s1)
  %b : Tensor = aten::_grad_sum_to_size(%a, %s2)
  return (%b)
"""
    graph = check_pass(peephole_optimize, text, [X3], changes=True)
    assert kinds(graph) == ["prim::Constant", "aten::_grad_sum_to_size"]
    (node,) = [n for n in graph.nodes() if n.kind() == "aten::_grad_sum_to_size"]
    assert node.inputs()[0] is graph.inputs()[0]
    assert constant_value(node.inputs()[1]) == [1, 4]


def test_nested_grad_sum_to_size_stays_when_the_inner_one_is_used_again() -> None:
    text = """graph(%x : Tensor):
  %s1 : int[] = prim::Constant[value=[3, 4]]()
  %s2 : int[] = prim::Constant[value=[1, 4]]()
  %a : Tensor = aten::_grad_sum_to_size(%x, %s1)
  %b : Tensor = aten::_grad_sum_to_size(%a, %s2)
  return (%b, %a)
"""
    check_pass(peephole_optimize, text, [X3], changes=False)


def test_nested_grad_sum_to_size_stays_when_the_outer_size_may_be_none() -> None:
    text = """graph(%x : Tensor, %s2 : int[]?):
  %s1 : int[] = prim::Constant[value=[3, 4]]()
  %a : Tensor = aten::_grad_sum_to_size(%x, %s1)
  %b : Tensor = aten::_grad_sum_to_size(%a, %s2)
  return (%b)
"""
    check_pass(peephole_optimize, text, [X3, None], changes=False)
    check_pass(peephole_optimize, text, [X3, [4]], changes=False)


# -- type_as, expand, expand_as, t -------------------------------------------------------
def test_type_as_of_the_same_dtype_is_its_input() -> None:
    text = f"""graph(%x : {D23}, %y : Double(3)):
  %a : Tensor = aten::type_as(%x, %y)
  %b : Tensor = aten::relu(%a)
  return (%b)
"""
    graph = check_pass(peephole_optimize, text, [X, np.ones(3)], changes=True)
    assert kinds(graph) == ["aten::relu"]


def test_type_as_of_another_or_unknown_dtype_stays() -> None:
    text = f"""graph(%x : {D23}, %y : Float(3), %z : Tensor):
  %a : Tensor = aten::type_as(%x, %y)
  %b : Tensor = aten::type_as(%x, %z)
  return (%a, %b)
"""
    check_pass(peephole_optimize, text, [X, np.ones(3, dtype=np.float32), np.ones(3)], changes=False)


def test_expand_to_the_sizes_it_already_has_is_its_input() -> None:
    text = f"""graph(%x : {D23}, %y : Double(2, 3)):
  %minus : int = prim::Constant[value=-1]()
  %three : int = prim::Constant[value=3]()
  %sizes : int[] = prim::ListConstruct(%minus, %three)
  %same : int[] = prim::Constant[value=[2, 3]]()
  %false : bool = prim::Constant[value=0]()
  %a : Tensor = aten::expand(%x, %sizes, %false)
  %b : Tensor = aten::expand(%x, %same, %false)
  %c : Tensor = aten::expand_as(%x, %y)
  %d : Tensor = aten::mul(%a, %b)
  %e : Tensor = aten::mul(%d, %c)
  return (%e)
"""
    graph = check_pass(peephole_optimize, text, [X, X], changes=True)
    assert kinds(graph) == ["aten::mul", "aten::mul"]


def test_expand_that_broadcasts_or_has_unknown_sizes_stays() -> None:
    text = f"""graph(%x : Double(1, 3), %u : Tensor, %y : {D23}):
  %sizes : int[] = prim::Constant[value=[2, 3]]()
  %false : bool = prim::Constant[value=0]()
  %a : Tensor = aten::expand(%x, %sizes, %false)
  %b : Tensor = aten::expand(%u, %sizes, %false)
  %c : Tensor = aten::expand_as(%x, %y)
  return (%a, %b, %c)
"""
    check_pass(peephole_optimize, text, [X[:1], X[:1], X], changes=False)


def test_double_transpose_is_the_input() -> None:
    text = """graph(%x : Tensor):
  %a : Tensor = aten::t(%x)
  %b : Tensor = aten::t(%a)
  %c : Tensor = aten::t(%x)
  return (%b, %c)
"""
    graph = check_pass(peephole_optimize, text, [X], changes=True)
    assert kinds(graph) == ["aten::t"]
    assert graph.outputs()[0] is graph.inputs()[0]


def test_double_transpose_of_a_rank_3_tensor_keeps_its_error() -> None:
    graph = parse_ir("""graph(%x : Double(2, 3, 4)):
  %a : Tensor = aten::t(%x)
  %b : Tensor = aten::t(%a)
  return (%b)
""")
    assert peephole_optimize(graph) is False
    assert kinds(graph) == ["aten::t", "aten::t"]


# -- size and dim ----------------------------------------------------------------------
def test_size_and_dim_of_a_known_shape_are_constants() -> None:
    text = f"""graph(%x : {D23}):
  %last : int = prim::Constant[value=-1]()
  %s : int[] = aten::size(%x)
  %n : int = aten::size(%x, %last)
  %d : int = aten::dim(%x)
  return (%s, %n, %d)
"""
    graph = check_pass(peephole_optimize, text, [X], changes=True)
    assert set(kinds(graph)) == {"prim::Constant"}
    assert outputs_of(graph) == [[2, 3], 3, 2]


def test_dim_needs_only_the_rank() -> None:
    text = """graph(%x : Double(*, *)):
  %d : int = aten::dim(%x)
  %s : int[] = aten::size(%x)
  return (%d, %s)
"""
    graph = check_pass(peephole_optimize, text, [X], changes=True)
    assert sorted(kinds(graph)) == ["aten::size", "prim::Constant"]


def test_size_and_dim_of_an_unknown_shape_stay() -> None:
    text = """graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %s : int[] = aten::size(%x)
  %n : int = aten::size(%x, %zero)
  %d : int = aten::dim(%x)
  return (%s, %n, %d)
"""
    check_pass(peephole_optimize, text, [X], changes=False)


def test_size_list_that_is_mutated_stays() -> None:
    text = f"""graph(%x : {D23}):
  %seven : int = prim::Constant[value=7]()
  %s : int[] = aten::size(%x)
  %r : int[] = aten::append(%s, %seven)
  return (%s)
"""
    check_pass(peephole_optimize, text, [X], changes=False)


# -- is None ---------------------------------------------------------------------------
def test_is_none_of_a_value_that_cannot_be_none_is_constant() -> None:
    text = """graph(%n : int, %f : float):
  %none : NoneType = prim::Constant()
  %a : bool = aten::__is__(%n, %none)
  %b : bool = aten::__isnot__(%none, %f)
  return (%a, %b)
"""
    graph = check_pass(peephole_optimize, text, [3, 2.5], changes=True)
    assert outputs_of(graph) == [False, True]


def test_is_none_of_an_optional_or_a_tensor_stays() -> None:
    # A tensor may be undefined, which gradview represents as None.
    text = """graph(%n : int?, %x : Tensor):
  %none : NoneType = prim::Constant()
  %a : bool = aten::__is__(%n, %none)
  %b : bool = aten::__isnot__(%x, %none)
  return (%a, %b)
"""
    check_pass(peephole_optimize, text, [None, X], changes=False)
    check_pass(peephole_optimize, text, [3, None], changes=False)


# -- unchecked_cast ------------------------------------------------------------------------
def test_unchecked_cast_to_the_type_it_has_is_dropped() -> None:
    text = f"""graph(%n : int, %x : {D23}):
  %m : int = prim::unchecked_cast(%n)
  %y : Tensor = prim::unchecked_cast(%x)
  %z : Tensor = aten::mul(%y, %m)
  return (%z)
"""
    graph = check_pass(peephole_optimize, text, [3, X], changes=True)
    assert kinds(graph) == ["aten::mul"]


def test_unchecked_cast_that_narrows_stays() -> None:
    text = """graph(%n : int?, %x : Tensor):
  %m : int = prim::unchecked_cast(%n)
  %y : Double(2, 3) = prim::unchecked_cast(%x)
  return (%m, %y)
"""
    check_pass(peephole_optimize, text, [3, X], changes=False)


# -- lists -----------------------------------------------------------------------------------
def test_len_and_getitem_of_a_list_literal() -> None:
    text = """graph(%a : int, %b : int, %c : int):
  %minus : int = prim::Constant[value=-1]()
  %l : int[] = prim::ListConstruct(%a, %b, %c)
  %n : int = aten::len(%l)
  %last : int = aten::__getitem__(%l, %minus)
  return (%n, %last)
"""
    graph = check_pass(peephole_optimize, text, [4, 5, 6], changes=True)
    assert kinds(graph) == ["prim::Constant"]
    assert graph.outputs()[1] is graph.inputs()[2]


def test_list_that_is_mutated_stays() -> None:
    text = """graph(%a : int, %b : int):
  %zero : int = prim::Constant[value=0]()
  %l : int[] = prim::ListConstruct(%a, %b)
  %r : int[] = aten::append(%l, %a)
  %n : int = aten::len(%l)
  %first : int = aten::__getitem__(%l, %zero)
  return (%n, %first)
"""
    check_pass(peephole_optimize, text, [4, 5], changes=False)


def test_getitem_with_an_unknown_index_stays() -> None:
    text = """graph(%a : int, %b : int, %i : int):
  %l : int[] = prim::ListConstruct(%a, %b)
  %x : int = aten::__getitem__(%l, %i)
  return (%x)
"""
    check_pass(peephole_optimize, text, [4, 5, 1], changes=False)


def test_getitem_out_of_range_keeps_its_error() -> None:
    graph = parse_ir("""graph(%a : int, %b : int):
  %two : int = prim::Constant[value=2]()
  %l : int[] = prim::ListConstruct(%a, %b)
  %x : int = aten::__getitem__(%l, %two)
  return (%x)
""")
    assert peephole_optimize(graph) is False


# -- prim::If ----------------------------------------------------------------------------------
def test_if_output_that_both_branches_take_from_outside() -> None:
    text = """graph(%x : Tensor, %c : bool):
  %r : Tensor, %s : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::relu(%x)
      -> (%x, %a)
    block1():
      %b : Tensor = aten::tanh(%x)
      -> (%x, %b)
  %y : Tensor = aten::mul(%r, %s)
  return (%y)
"""
    for c in (True, False):
        graph = check_pass(peephole_optimize, text, [X, c], changes=True)
        (node,) = [n for n in graph.nodes() if n.kind() == "prim::If"]
        assert len(node.outputs()) == 1
        mul = next(n for n in graph.nodes() if n.kind() == "aten::mul")
        assert mul.inputs()[0] is graph.inputs()[0]


def test_if_that_returns_its_own_condition() -> None:
    # `c and True` compiles to an if returning True / False.
    text = """graph(%c : bool, %n : int):
  %r : bool = prim::If(%c)
    block0():
      %t : bool = prim::Constant[value=1]()
      -> (%t)
    block1():
      %f : bool = prim::Constant[value=0]()
      -> (%f)
  %k : int = prim::If(%r)
    block0():
      -> (%n)
    block1():
      %z : int = prim::Constant[value=0]()
      -> (%z)
  return (%r, %k)
"""
    for c in (True, False):
        graph = check_pass(peephole_optimize, text, [c, 7], changes=True)
        assert graph.outputs()[0] is graph.inputs()[0]
        assert kinds(graph).count("prim::If") == 1  # the first one had nothing left to do


def test_if_with_different_branch_values_stays() -> None:
    text = """graph(%x : Tensor, %y : Tensor, %c : bool):
  %r : Tensor = prim::If(%c)
    block0():
      -> (%x)
    block1():
      -> (%y)
  return (%r)
"""
    check_pass(peephole_optimize, text, [X, 2 * X, True], changes=False)


# -- arithmetic identities ------------------------------------------------------------------------
def test_int_identities() -> None:
    text = """graph(%n : int):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %a : int = aten::add(%n, %zero)
  %b : int = aten::add(%zero, %a)
  %c : int = aten::sub(%b, %zero)
  %d : int = aten::mul(%c, %one)
  %e : int = aten::mul(%one, %d)
  return (%e)
"""
    graph = check_pass(peephole_optimize, text, [5], changes=True)
    assert kinds(graph) == []
    assert graph.outputs()[0] is graph.inputs()[0]


def test_non_identities_and_floats_stay() -> None:
    text = """graph(%n : int, %f : float):
  %zero : int = prim::Constant[value=0]()
  %fzero : float = prim::Constant[value=0.]()
  %a : int = aten::sub(%zero, %n)
  %b : int = aten::mul(%n, %zero)
  %c : float = aten::add(%f, %fzero)
  return (%a, %b, %c)
"""
    check_pass(peephole_optimize, text, [5, -0.0], changes=False)


def test_tensor_identities_when_the_type_proves_nothing_changes() -> None:
    text = f"""graph(%x : {D23}):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %fone : float = prim::Constant[value=1.]()
  %a : Tensor = aten::add(%x, %zero, %one)
  %b : Tensor = aten::sub(%x, %zero, %one)
  %c : Tensor = aten::mul(%x, %one)
  %d : Tensor = aten::div(%x, %fone)
  %e : Tensor = aten::mul(%a, %b)
  %f : Tensor = aten::mul(%c, %d)
  %g : Tensor = aten::add(%e, %f, %one)
  return (%g)
"""
    graph = check_pass(peephole_optimize, text, [X], changes=True)
    assert kinds(graph) == ["prim::Constant", "aten::mul", "aten::mul", "aten::add"]
    assert all(v is graph.inputs()[0] for n in graph.nodes() if n.kind() == "aten::mul" for v in n.inputs())


def test_tensor_identities_that_could_change_dtype_or_need_a_shape_stay() -> None:
    text = """graph(%i : Long(2, 3), %u : Tensor, %x : Double(2, 3)):
  %zero : int = prim::Constant[value=0]()
  %fzero : float = prim::Constant[value=0.]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %a : Tensor = aten::div(%i, %one)
  %b : Tensor = aten::add(%i, %fzero, %one)
  %c : Tensor = aten::mul(%u, %one)
  %d : Tensor = aten::add(%x, %zero, %two)
  %e : Tensor = aten::relu(%a)
  %f : Tensor = aten::relu(%b)
  %g : Tensor = aten::relu(%c)
  %h : Tensor = aten::relu(%d)
  return (%e, %f, %g, %h)
"""
    ints = np.arange(6, dtype=np.int64).reshape(2, 3)
    check_pass(peephole_optimize, text, [ints, X, X], changes=False)


def test_tensor_identity_between_graph_input_and_output_stays() -> None:
    # Both escape the graph: the caller would get its own input back.
    text = f"""graph(%x : {D23}):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %one)
  return (%a)
"""
    check_pass(peephole_optimize, text, [X], changes=False)


def test_tensor_identity_on_a_tensor_written_in_place_stays() -> None:
    graph = parse_ir(f"""graph(%x : {D23}):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %one)
  %b : Tensor = aten::add_(%a, %one, %one)
  %c : Tensor = aten::relu(%a)
  return (%c)
""")
    assert peephole_optimize(graph) is False


# -- chains, nesting, fixpoint ------------------------------------------------------------------------
def test_rewrites_enable_each_other_inside_nested_blocks() -> None:
    text = f"""graph(%x : {D23}, %c : bool):
  %zero : int = prim::Constant[value=0]()
  %r : Tensor = prim::If(%c)
    block0():
      %d : int = aten::dim(%x)
      %e : int = aten::add(%d, %zero)
      %t1 : Tensor = aten::t(%x)
      %t2 : Tensor = aten::t(%t1)
      %y : Tensor = aten::mul(%t2, %e)
      -> (%y)
    block1():
      -> (%x)
  return (%r)
"""
    for c in (True, False):
        graph = check_pass(peephole_optimize, text, [X, c], changes=True)
        assert "aten::t" not in kinds(graph) and "aten::dim" not in kinds(graph)
        assert "aten::add" not in kinds(graph)
        again = graph.copy()
        assert peephole_optimize(again) is False


def test_a_graph_with_nothing_to_do() -> None:
    text = """graph(%x : Tensor, %n : int):
  %a : Tensor = aten::mul(%x, %n)
  %b : Tensor = aten::t(%a)
  return (%b)
"""
    check_pass(peephole_optimize, text, [X, 3], changes=False)


# -- oracle: torch's PeepholeOptimize on the same IR ---------------------------------------------------
def test_matches_torch_on_shape_and_list_rules() -> None:
    torch = pytest.importorskip("torch")
    text = f"""graph(%x : {D23}, %n : int):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %s : int[] = aten::size(%x)
  %d : int = aten::dim(%x)
  %bn : bool = aten::__is__(%n, %none)
  %t1 : Tensor = aten::t(%x)
  %t2 : Tensor = aten::t(%t1)
  %a : int = aten::add(%n, %zero)
  %m : int = aten::mul(%n, %one)
  %y : Tensor = aten::add(%x, %zero, %one)
  %z : Tensor = aten::relu(%y)
  %l : int[] = prim::ListConstruct(%n, %d)
  %len : int = aten::len(%l)
  %g : int = aten::__getitem__(%l, %zero)
  return (%s, %d, %bn, %t2, %a, %m, %z, %len, %g)
"""
    ours = check_pass(peephole_optimize, text, [X, 4], changes=True)
    theirs = torch._C.parse_ir(text)
    torch._C._jit_pass_peephole(theirs, False)
    their_kinds = sorted(n.kind() for n in theirs.nodes() if n.kind() != "prim::Constant")
    our_kinds = sorted(k for k in kinds(ours) if k != "prim::Constant")
    assert our_kinds == their_kinds == ["aten::relu"]
    their_outputs = [o.node().kind() if o.node().kind() != "prim::Param" else o.debugName() for o in theirs.outputs()]
    our_outputs = [o.node.kind() if o.node.kind() != "prim::Param" else o.debug_name() for o in ours.outputs()]
    assert our_outputs == their_outputs


def test_matches_torch_on_gradient_and_view_rules() -> None:
    torch = pytest.importorskip("torch")
    text = """graph(%x : Double(2, 3, 4, strides=[12, 4, 1], requires_grad=0, device=cpu),
      %y : Double(4, strides=[1], requires_grad=0, device=cpu), %c : bool):
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %s1 : int[] = prim::Constant[value=[3, 4]]()
  %s2 : int[] = prim::Constant[value=[1, 4]]()
  %same : int[] = prim::Constant[value=[2, 3, 4]]()
  %a : Tensor = aten::_grad_sum_to_size(%x, %none)
  %b : Tensor = aten::type_as(%a, %y)
  %e : Tensor = aten::expand(%b, %same, %false)
  %g1 : Tensor = aten::_grad_sum_to_size(%e, %s1)
  %g2 : Tensor = aten::_grad_sum_to_size(%g1, %s2)
  %k : bool = prim::If(%c)
    block0():
      %t : bool = prim::Constant[value=1]()
      -> (%t)
    block1():
      -> (%false)
  return (%g2, %k)
"""
    ours = check_pass(peephole_optimize, text, [X3, np.ones(4), True], changes=True)
    theirs = torch._C.parse_ir(text)
    torch._C._jit_pass_peephole(theirs, False)
    their_kinds = [n.kind() for n in theirs.nodes() if n.kind() != "prim::Constant"]
    assert [k for k in kinds(ours) if k != "prim::Constant"] == their_kinds == ["aten::_grad_sum_to_size"]
    (ours_sum,) = [n for n in ours.nodes() if n.kind() == "aten::_grad_sum_to_size"]
    (theirs_sum,) = [n for n in theirs.nodes() if n.kind() == "aten::_grad_sum_to_size"]
    assert ours_sum.inputs()[0].debug_name() == next(iter(theirs_sum.inputs())).debugName() == "x"
    assert [o.debugName() for o in list(theirs.outputs())[1:]] == [o.debug_name() for o in ours.outputs()[1:]] == ["c"]
