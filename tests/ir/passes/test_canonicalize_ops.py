"""CanonicalizeOps: 0-dim tensor constants become scalars; constant chunks become ConstantChunk."""

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.ir.passes.canonicalize_ops import canonicalize_ops
from gradview.ir.passes.dead_code_elimination import eliminate_dead_code

from .pass_check import check_pass, kinds

SCALARS = """graph(%x : Tensor, %y : Tensor):
  %c : Double(requires_grad=0, device=cpu) = prim::Constant[value={2.5}]()
  %k : Long(requires_grad=0, device=cpu) = prim::Constant[value={3}]()
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%y, %c, %one)
  %s : Tensor = aten::sub(%a, %k, %one)
  %m : Tensor = aten::mul(%s, %c)
  %d : Tensor = aten::div(%m, %k)
  %e : Tensor = aten::div(%d, %x)
  return (%e)
"""

CHUNK = """graph(%x : Tensor):
  %two : int = prim::Constant[value=2]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %l : Tensor[] = aten::chunk(%x, %two, %zero)
  %a : Tensor, %b : Tensor = prim::ListUnpack(%l)
  %r : Tensor = aten::sub(%a, %b, %one)
  return (%r)
"""


def _xy() -> list:
    return [np.linspace(0.5, 2.0, 6).reshape(2, 3), np.linspace(-3.0, 3.0, 6).reshape(2, 3)]


def test_zero_dim_tensor_constants_become_scalar_constants() -> None:
    graph = check_pass(canonicalize_ops, SCALARS, _xy(), changes=True)
    text = str(graph)
    assert "Double(requires_grad=0" not in text and "Long(requires_grad=0" not in text
    overloads = [n.schema().qualified_name for n in graph.nodes() if n.kind() != "prim::Constant"]
    assert overloads == ["aten::add.Scalar", "aten::sub.Scalar", "aten::mul.Scalar", "aten::div.Scalar",
                         "aten::div.Tensor"]
    assert "float = prim::Constant[value=2.5]()" in text
    assert "int = prim::Constant[value=3]()" in text
    # The results keep their names.
    assert [n.output().debug_name() for n in graph.nodes() if n.kind().startswith("aten::")] == [
        "a", "s", "m", "d", "e"]


def test_chunk_unpacked_into_constant_many_becomes_constant_chunk() -> None:
    graph = check_pass(canonicalize_ops, CHUNK, [np.linspace(-1.0, 1.0, 12).reshape(4, 3)], changes=True)
    assert kinds(graph) == ["prim::Constant", "prim::ConstantChunk", "aten::sub"]
    assert "%a : Tensor, %b : Tensor = prim::ConstantChunk[chunks=2, dim=0](%x)" in str(graph)


def test_chunk_inside_a_loop_body() -> None:
    text = """graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %three : int = prim::Constant[value=3]()
      %dim : int = prim::Constant[value=-1]()
      %l : Tensor[] = aten::chunk(%acc, %three, %dim)
      %a : Tensor, %b : Tensor, %c : Tensor = prim::ListUnpack(%l)
      %p : Tensor = aten::mul(%a, %c)
      %q : Tensor = aten::mul(%p, %b)
      %t : Tensor = aten::tanh(%acc)
      %u : Tensor = aten::add(%t, %q, %three)
      -> (%true, %u)
  return (%r)
"""
    graph = check_pass(canonicalize_ops, text, [np.linspace(-1.0, 1.0, 6).reshape(2, 3), 3], changes=True)
    assert "prim::ConstantChunk[chunks=3, dim=-1](%acc)" in str(graph)
    assert "aten::chunk" not in kinds(graph) and "prim::ListUnpack" not in kinds(graph)


@pytest.mark.parametrize(("text", "inputs"), [
    pytest.param("""graph(%x : Tensor):
  %c : Double(2, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value= 1  2 [ CPUDoubleType{2} ]]()
  %m : Tensor = aten::mul(%x, %c)
  return (%m)
""", [np.linspace(1.0, 2.0, 2)], id="one-dim-constant"),
    pytest.param("""graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %y, %one)
  %m : Tensor = aten::mul(%a, %x)
  return (%m)
""", _xy(), id="operand-not-constant"),
    pytest.param("""graph(%x : Tensor, %n : int):
  %zero : int = prim::Constant[value=0]()
  %l : Tensor[] = aten::chunk(%x, %n, %zero)
  %a : Tensor, %b : Tensor = prim::ListUnpack(%l)
  return (%a, %b)
""", [np.ones((4, 2)), 2], id="chunks-not-constant"),
    pytest.param("""graph(%x : Tensor):
  %two : int = prim::Constant[value=2]()
  %zero : int = prim::Constant[value=0]()
  %l : Tensor[] = aten::chunk(%x, %two, %zero)
  %a : Tensor, %b : Tensor = prim::ListUnpack(%l)
  %c : Tensor = aten::cat(%l, %zero)
  return (%a, %c)
""", [np.ones((4, 2))], id="list-used-by-more-than-unpack"),
])
def test_operations_that_are_already_canonical_are_left_alone(text: str, inputs: list) -> None:
    check_pass(canonicalize_ops, text, inputs, changes=False)


def test_matches_torch_canonicalize_graph_fuser_ops() -> None:
    """torch's CanonicalizeOps ends with DCE; this pass plus DCE must leave the same nodes."""
    text = """graph(%x : Tensor, %y : Tensor):
  %c : Double(requires_grad=0, device=cpu) = prim::Constant[value={2.5}]()
  %k : Long(requires_grad=0, device=cpu) = prim::Constant[value={3}]()
  %one : int = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %three : int = prim::Constant[value=3]()
  %a : Tensor = aten::add(%y, %c, %one)
  %s : Tensor = aten::sub(%a, %k, %one)
  %m : Tensor = aten::mul(%s, %c)
  %d : Tensor = aten::div(%m, %x)
  %l : Tensor[] = aten::chunk(%d, %three, %zero)
  %p : Tensor, %q : Tensor, %r : Tensor = prim::ListUnpack(%l)
  %t : Tensor = aten::add(%p, %r, %one)
  return (%t, %q)
"""
    ours = parse_ir(text)
    assert canonicalize_ops(ours)
    eliminate_dead_code(ours)
    theirs = torch._C.parse_ir(text, parse_tensor_constants=True)
    torch._C._jit_pass_canonicalize_graph_fuser_ops(theirs)
    assert kinds(ours) == [n.kind() for n in theirs.nodes()]
    chunk_theirs = [n for n in theirs.nodes() if n.kind() == "prim::ConstantChunk"][0]
    chunk_ours = [n for n in ours.nodes() if n.kind() == "prim::ConstantChunk"][0]
    assert (chunk_ours.i("chunks"), chunk_ours.i("dim")) == (chunk_theirs.i("chunks"), chunk_theirs.i("dim"))
    scalars_theirs = [n.output().type().kind() for n in theirs.nodes()
                      if n.kind() == "prim::Constant" and n.output().uses()]
    scalars_ours = [str(n.output().type()) for n in ours.nodes() if n.kind() == "prim::Constant"]
    assert [s.lower().replace("type", "") for s in scalars_theirs] == scalars_ours
