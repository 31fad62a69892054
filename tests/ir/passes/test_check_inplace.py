"""CheckInplace: in-place writes to inputs that require grad are refused; the graph never changes.

The interpreter has no in-place kernels, so the cases with in-place ops are
checked without running; graphs without them go through check_pass.
"""

import numpy as np
import pytest

from gradview.ir import parse_ir
from gradview.ir.passes.check_inplace import InplaceError, check_inplace

from .pass_check import check_pass


@pytest.mark.parametrize("text", [
    pytest.param("""graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %z : Tensor = aten::add_(%x, %y, %one)
  return (%z)
""", id="input-of-unknown-requires-grad"),
    pytest.param("""graph(%x : Float(3, requires_grad=1), %y : Tensor):
  %z : Tensor = aten::relu_(%x)
  return (%z)
""", id="input-typed-requires-grad"),
    pytest.param("""graph(%x : Tensor, %y : Tensor):
  %v : Tensor = aten::t(%x)
  %z : Tensor = aten::mul_(%v, %y)
  return (%z)
""", id="through-a-view"),
    pytest.param("""graph(%x : Tensor, %y : Tensor, %c : bool):
  %r : Tensor = prim::If(%c)
    block0():
      %z : Tensor = aten::sigmoid_(%x)
      -> (%z)
    block1():
      -> (%y)
  return (%r)
""", id="inside-a-block"),
    pytest.param("""graph(%x : Tensor, %y : Tensor):
  %a : bool = prim::Constant[value=1]()
  %z : Tensor = aten::add_(%x, %y, %a)
  return (%z)
""", id="no-overload-matches-but-all-write-self"),
])
def test_in_place_write_to_input_requiring_grad_is_an_error(text: str) -> None:
    graph = parse_ir(text)
    with pytest.raises(InplaceError, match=r"^in-place operation `%z : Tensor = aten::\w+_\(%.*writes to graph input %x") as info:
        check_inplace(graph)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)
    assert info.value.node.kind().endswith("_")


@pytest.mark.parametrize("text", [
    pytest.param("""graph(%x : Float(3, requires_grad=0), %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %z : Tensor = aten::add_(%x, %y, %one)
  return (%z)
""", id="input-does-not-require-grad"),
    pytest.param("""graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %t : Tensor = aten::mul(%x, %y)
  %z : Tensor = aten::add_(%t, %x, %one)
  %w : Tensor = aten::relu_(%z)
  return (%w)
""", id="intermediate-value"),
    pytest.param("""graph(%x : Tensor, %y : Tensor):
  %l : Tensor[] = prim::ListConstruct(%x)
  %a : Tensor[] = aten::append(%l, %y)
  return (%a)
""", id="list-mutation-is-not-a-tensor-write"),
])
def test_allowed_in_place_writes_pass_unchanged(text: str) -> None:
    graph = parse_ir(text)
    printed = str(graph)
    assert check_inplace(graph) is False
    assert str(graph) == printed


def test_inplace_python_op_is_refused() -> None:
    graph = parse_ir("graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\n  return (%y)\n")
    (relu,) = list(graph.nodes())
    op = graph.create("prim::PythonOp", [relu.output()])
    op.i_("inplace", 1)
    op.insert_after(relu)
    with pytest.raises(InplaceError, match="in-place Python operator"):
        check_inplace(graph)


def test_graph_without_in_place_ops_runs_unchanged() -> None:
    text = """graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %y, %one)
  %b : Tensor = aten::tanh(%a)
  return (%b)
"""
    check_pass(check_inplace, text, [np.linspace(-1.0, 1.0, 3), np.linspace(2.0, 3.0, 3)], changes=False)
