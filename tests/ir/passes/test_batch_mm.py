import numpy as np
import pytest

from gradview.ir import Value, parse_ir
from gradview.ir.passes.batch_mm import batch_mm

from .pass_check import check_pass, kinds

RNG = np.random.default_rng(3)
A = "Double(3, 4)"
B = "Double(4, 5)"


def rand(*shape: int) -> np.ndarray:
    # Positive entries: summing in another order cannot cancel to near zero,
    # so the results agree to the comparison's relative tolerance.
    return RNG.uniform(0.5, 1.5, shape)


def ops(graph) -> list[str]:  # test helper
    return [k for k in kinds(graph) if k != "prim::Constant"]


def pairs(count: int) -> str:
    return ", ".join(f"%a{i} : {A}, %b{i} : {B}" for i in range(1, count + 1))


def pair_inputs(count: int) -> list[np.ndarray]:
    return [m for _ in range(count) for m in (rand(3, 4), rand(4, 5))]


SUM_OF_TWO_PRODUCTS = f"""graph({pairs(2)}):
  %one : int = prim::Constant[value=1]()
  %m1 : Tensor = aten::mm(%a1, %b1)
  %m2 : Tensor = aten::mm(%a2, %b2)
  %s : Tensor = aten::add(%m1, %m2, %one)
  return (%s)
"""


# -- (a) tree reduction ------------------------------------------------------------------------
def test_sum_of_two_products_becomes_one_product() -> None:
    graph = check_pass(batch_mm, SUM_OF_TWO_PRODUCTS, pair_inputs(2), changes=True)
    assert ops(graph) == ["prim::ListConstruct", "aten::cat", "prim::ListConstruct", "aten::cat", "aten::mm"]
    left, right = (n for n in graph.nodes() if n.kind() == "aten::cat")
    assert str(left.output().type()) == "Double(3, 8)" and str(right.output().type()) == "Double(8, 5)"
    assert left.inputs()[0].node.inputs() == [graph.inputs()[0], graph.inputs()[2]]


@pytest.mark.parametrize("shape", ["balanced", "chain"])
def test_trees_of_four_products(shape: str) -> None:
    if shape == "balanced":
        adds = """  %s1 : Tensor = aten::add(%m1, %m2, %one)
  %s2 : Tensor = aten::add(%m3, %m4, %one)
  %s : Tensor = aten::add(%s1, %s2, %one)"""
    else:
        adds = """  %s1 : Tensor = aten::add(%m1, %m2, %one)
  %s2 : Tensor = aten::add(%m3, %s1, %one)
  %s : Tensor = aten::add(%s2, %m4, %one)"""
    products = "\n".join(f"  %m{i} : Tensor = aten::mm(%a{i}, %b{i})" for i in range(1, 5))
    text = f"""graph({pairs(4)}):
  %one : int = prim::Constant[value=1]()
{products}
{adds}
  %y : Tensor = aten::relu(%s)
  return (%y)
"""
    graph = check_pass(batch_mm, text, pair_inputs(4), changes=True)
    assert ops(graph).count("aten::mm") == 1 and "aten::add" not in ops(graph)


def test_only_the_part_of_a_sum_made_of_products_is_reduced() -> None:
    text = f"""graph({pairs(2)}, %x : Double(3, 5)):
  %one : int = prim::Constant[value=1]()
  %m1 : Tensor = aten::mm(%a1, %b1)
  %m2 : Tensor = aten::mm(%a2, %b2)
  %s : Tensor = aten::add(%m1, %m2, %one)
  %t : Tensor = aten::add(%s, %x, %one)
  return (%t)
"""
    graph = check_pass(batch_mm, text, pair_inputs(2) + [rand(3, 5)], changes=True)
    assert ops(graph).count("aten::mm") == 1 and ops(graph).count("aten::add") == 1


def test_broadcasting_sum_of_products_is_split_into_its_uniform_halves() -> None:
    # (m1 + m2) has shape (3, 5) but m3 is (1, 5): only m1 + m2 is one product.
    text = f"""graph({pairs(2)}, %a3 : Double(1, 4), %b3 : {B}):
  %one : int = prim::Constant[value=1]()
  %m1 : Tensor = aten::mm(%a1, %b1)
  %m2 : Tensor = aten::mm(%a2, %b2)
  %m3 : Tensor = aten::mm(%a3, %b3)
  %s : Tensor = aten::add(%m1, %m2, %one)
  %t : Tensor = aten::add(%s, %m3, %one)
  return (%t)
"""
    graph = check_pass(batch_mm, text, pair_inputs(2) + [rand(1, 4), rand(4, 5)], changes=True)
    assert ops(graph).count("aten::mm") == 2 and ops(graph).count("aten::add") == 1


def test_sums_that_are_not_trees_of_single_use_products_stay() -> None:
    text = f"""graph({pairs(2)}, %u : Tensor, %v : Tensor):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %m1 : Tensor = aten::mm(%a1, %b1)
  %m2 : Tensor = aten::mm(%a2, %b2)
  %s : Tensor = aten::add(%m1, %m2, %one)
  %p1 : Tensor = aten::mm(%a1, %b2)
  %p2 : Tensor = aten::mm(%a2, %b1)
  %t : Tensor = aten::add(%p1, %p2, %two)
  %q1 : Tensor = aten::mm(%u, %v)
  %q2 : Tensor = aten::mm(%v, %u)
  %w : Tensor = aten::add(%q1, %q2, %one)
  return (%s, %m1, %t, %w)
"""
    # %m1 is used twice, %t has alpha 2, %q1/%q2 have unknown shapes; side
    # batching is turned off to look at trees alone.
    def trees_only(graph) -> bool:
        return batch_mm(graph, min_side_batch=100)

    inputs = pair_inputs(2) + [rand(4, 4), rand(4, 4)]
    check_pass(trees_only, text, inputs, changes=False)


def test_minimum_tree_size() -> None:
    check_pass(lambda g: batch_mm(g, min_tree_leaves=4), SUM_OF_TWO_PRODUCTS, pair_inputs(2), changes=False)


# -- (b) side batching ------------------------------------------------------------------------------
SHARED_LEFT = f"""graph(%a : {A}, %b1 : {B}, %b2 : {B}, %b3 : {B}):
  %m1 : Tensor = aten::mm(%a, %b1)
  %r1 : Tensor = aten::relu(%m1)
  %m2 : Tensor = aten::mm(%a, %b2)
  %r2 : Tensor = aten::tanh(%m2)
  %m3 : Tensor = aten::mm(%a, %b3)
  %r3 : Tensor = aten::mul(%r1, %m3)
  return (%r1, %r2, %r3)
"""


def test_products_sharing_the_left_operand_are_batched() -> None:
    inputs = [rand(3, 4), rand(4, 5), rand(4, 5), rand(4, 5)]
    graph = check_pass(batch_mm, SHARED_LEFT, inputs, changes=True)
    assert ops(graph)[:5] == ["prim::ListConstruct", "aten::cat", "aten::mm", "aten::chunk", "prim::ListUnpack"]
    assert ops(graph).count("aten::mm") == 1
    mm = next(n for n in graph.nodes() if n.kind() == "aten::mm")
    assert mm.inputs()[0] is graph.inputs()[0] and str(mm.output().type()) == "Double(3, 15)"
    chunk = next(n for n in graph.nodes() if n.kind() == "aten::chunk")
    assert chunk.inputs()[1].node.i("value") == 3 and chunk.inputs()[2].node.i("value") == 1


def test_products_sharing_the_right_operand_are_batched() -> None:
    text = f"""graph(%a1 : {A}, %a2 : {A}, %b : {B}):
  %one : int = prim::Constant[value=1]()
  %m1 : Tensor = aten::mm(%a1, %b)
  %m2 : Tensor = aten::mm(%a2, %b)
  %s : Tensor = aten::sub(%m1, %m2, %one)
  return (%s)
"""
    graph = check_pass(batch_mm, text, [rand(3, 4), rand(3, 4), rand(4, 5)], changes=True)
    assert ops(graph).count("aten::mm") == 1
    mm = next(n for n in graph.nodes() if n.kind() == "aten::mm")
    assert mm.inputs()[1] is graph.inputs()[2] and str(mm.output().type()) == "Double(6, 5)"
    chunk = next(n for n in graph.nodes() if n.kind() == "aten::chunk")
    assert chunk.inputs()[2].node.i("value") == 0


def test_products_that_depend_on_each_other_stay() -> None:
    text = """graph(%a : Double(4, 4), %b : Double(4, 4)):
  %m1 : Tensor = aten::mm(%a, %b)
  %m2 : Tensor = aten::mm(%a, %m1)
  return (%m2)
""".replace("%m1 : Tensor", "%m1 : Double(4, 4)")
    check_pass(batch_mm, text, [rand(4, 4), rand(4, 4)], changes=False)


def test_products_with_other_operands_of_different_shapes_stay() -> None:
    text = f"""graph(%a : {A}, %b1 : {B}, %b2 : Double(4, 6), %c : Tensor):
  %m1 : Tensor = aten::mm(%a, %b1)
  %m2 : Tensor = aten::mm(%a, %b2)
  %m3 : Tensor = aten::mm(%a, %c)
  return (%m1, %m2, %m3)
"""
    check_pass(batch_mm, text, [rand(3, 4), rand(4, 5), rand(4, 6), rand(4, 5)], changes=False)


def test_products_separated_by_a_side_effect_stay() -> None:
    text = f"""graph(%a : {A}, %b1 : {B}, %b2 : {B}):
  %m1 : Tensor = aten::mm(%a, %b1)
   = prim::Print(%m1)
  %m2 : Tensor = aten::mm(%a, %b2)
  return (%m2)
"""
    check_pass(batch_mm, text, [rand(3, 4), rand(4, 5), rand(4, 5)], changes=False)


def test_products_whose_operand_is_written_stay() -> None:
    graph = parse_ir(f"""graph(%a : {A}, %b1 : {B}, %b2 : {B}):
  %one : int = prim::Constant[value=1]()
  %m1 : Tensor = aten::mm(%a, %b1)
  %w : Tensor = aten::add_(%b2, %one, %one)
  %m2 : Tensor = aten::mm(%a, %b2)
  %s : Tensor = aten::add(%m1, %m2, %one)
  return (%s, %m1)
""")
    assert batch_mm(graph) is False


def test_batches_inside_a_loop_body() -> None:
    text = f"""graph(%a : {A}, %b1 : {B}, %b2 : {B}, %n : int):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%n, %true, %b1)
    block0(%i : int, %acc : {B}):
      %m1 : Double(3, 5) = aten::mm(%a, %acc)
      %m2 : Double(3, 5) = aten::mm(%a, %b2)
      %s : Tensor = aten::add(%m1, %m2, %one)
      %t : Tensor = aten::sum(%s)
      %u : Tensor = aten::add(%acc, %t, %one)
      -> (%true, %u)
  return (%r)
"""
    graph = check_pass(batch_mm, text, [rand(3, 4), rand(4, 5), rand(4, 5), 2], changes=True)
    loop = next(n for n in graph.nodes() if n.kind() == "prim::Loop")
    assert [k.kind() for k in loop.blocks()[0].nodes()].count("aten::mm") == 1


# -- oracle: torch's BatchMM on the same IR --------------------------------------------------------
def _names(values) -> list[str]:
    return sorted(v.debug_name() if isinstance(v, Value) else v.debugName() for v in values)


def test_matches_torch_on_a_tree_of_four() -> None:
    torch = pytest.importorskip("torch")
    products = "\n".join(f"  %m{i} : Tensor = aten::mm(%a{i}, %b{i})" for i in range(1, 5))
    text = f"""graph({pairs(4)}):
  %one : int = prim::Constant[value=1]()
{products}
  %s1 : Tensor = aten::add(%m1, %m2, %one)
  %s2 : Tensor = aten::add(%m3, %m4, %one)
  %s : Tensor = aten::add(%s1, %s2, %one)
  return (%s)
"""
    ours = check_pass(batch_mm, text, pair_inputs(4), changes=True)
    theirs = torch._C.parse_ir(text)
    torch._C._jit_pass_batch_mm(theirs)
    (reduce,) = [n for n in theirs.nodes() if n.kind() == "prim::MMTreeReduce"]
    assert "aten::mm" not in [n.kind() for n in theirs.nodes()]
    lists = [n for n in ours.nodes() if n.kind() == "prim::ListConstruct"]
    assert _names(v for n in lists for v in n.inputs()) == _names(reduce.inputs())


def test_matches_torch_on_nine_products_sharing_a_left_operand() -> None:
    torch = pytest.importorskip("torch")
    count = 9
    args = ", ".join(f"%b{i} : {B}" for i in range(1, count + 1))
    body = "\n".join(f"  %m{i} : Tensor = aten::mm(%a, %b{i})" for i in range(1, count + 1))
    text = f"""graph(%a : {A}, {args}):
{body}
  return ({", ".join(f"%m{i}" for i in range(1, count + 1))})
"""
    ours = check_pass(batch_mm, text, [rand(3, 4)] + [rand(4, 5) for _ in range(count)], changes=True)
    theirs = torch._C.parse_ir(text)
    torch._C._jit_pass_batch_mm(theirs)
    (side,) = [n for n in theirs.nodes() if n.kind() == "prim::MMBatchSide"]
    assert side.i("side") == 0
    (lst,) = [n for n in ours.nodes() if n.kind() == "prim::ListConstruct"]
    (mm,) = [n for n in ours.nodes() if n.kind() == "aten::mm"]
    assert mm.inputs()[0].debug_name() == next(iter(side.inputs())).debugName() == "a"
    assert _names(lst.inputs()) == _names(list(side.inputs())[1:])
