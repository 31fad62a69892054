"""eliminate_common_subexpression_like_torch against torch._C._jit_pass_cse."""

from __future__ import annotations

import pytest
import torch

from gradview.autodiff.subgraph_cse import eliminate_common_subexpression_like_torch
from gradview.ir import parse_ir

from .subgraph_cases import GRAPHS
from .subgraph_oracle import canonical, torch_text

CSE_CASES = {
    # Equal constants, also in a nested block; a constant returned twice.
    "constants": """graph(%x : Tensor, %f : bool):
  %a : int = prim::Constant[value=1]()
  %b : int = prim::Constant[value=1]()
  %c : float = prim::Constant[value=1.]()
  %z : Tensor = prim::If(%f)
    block0():
      %d : int = prim::Constant[value=1]()
      %r : Tensor = aten::add(%x, %x, %d)
      -> (%r)
    block1():
      -> (%x)
  %y : Tensor = aten::add(%x, %z, %b)
  return (%y, %a, %b, %c)
""",
    # Equal nodes whose outputs both leave the graph stay apart; one that
    # does not is merged.
    "graph_outputs": """graph(%x : Tensor):
  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::sin(%x)
  %c : Tensor = aten::sin(%x)
  %t1 : Tensor = aten::t(%x)
  %t2 : Tensor = aten::t(%x)
  %d : Tensor = aten::mul(%c, %t2)
  return (%a, %b, %d, %t1)
""",
    # Values something writes into are never merged.
    "writers": """graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::mul(%x, %y)
  %w : Tensor = aten::add_(%a, %one, %one)
  %c : Tensor = aten::cos(%y)
  %d : Tensor = aten::cos(%y)
  %e : Tensor = aten::add(%c, %d, %one)
  return (%w, %b, %e)
""",
    # Profiles, prints and random ops are left alone; nested blocks reuse
    # the outer node.
    "effects_and_blocks": """graph(%x : Tensor, %f : bool):
  %p : float = prim::Constant[value=0.5]()
  %t : bool = prim::Constant[value=1]()
  %a : Tensor = prim::profile[profiled_type=Double(3, 3, strides=[3, 1], requires_grad=1, device=cpu)](%x)
  %b : Tensor = prim::profile[profiled_type=Double(3, 3, strides=[3, 1], requires_grad=1, device=cpu)](%x)
  %d1 : Tensor = aten::dropout(%a, %p, %t)
  %d2 : Tensor = aten::dropout(%a, %p, %t)
  %e : Tensor = aten::exp(%b)
  %r : Tensor = prim::If(%f)
    block0():
      %e2 : Tensor = aten::exp(%b)
      %g : Tensor = aten::mul(%e2, %d1)
      -> (%g)
    block1():
      -> (%d2)
  %m : Tensor = aten::mul(%r, %e)
  return (%m)
""",
}


@pytest.mark.parametrize("name", sorted(CSE_CASES) + sorted(GRAPHS))
def test_matches_torch_cse(name: str) -> None:
    text = CSE_CASES.get(name) or GRAPHS[name]
    theirs = torch._C.parse_ir(torch_text(text))
    torch._C._jit_pass_cse(theirs)
    graph = parse_ir(text)
    changed = eliminate_common_subexpression_like_torch(graph)
    graph.lint()
    assert canonical(str(graph)) == canonical(str(theirs))
    assert changed == (str(graph) != str(parse_ir(text)))


def test_merges_constants_and_keeps_graph_outputs_apart() -> None:
    graph = parse_ir(CSE_CASES["constants"])
    eliminate_common_subexpression_like_torch(graph)
    ints = [n for n in graph.all_nodes() if n.kind() == "prim::Constant" and str(n.output().type()) == "int"]
    assert len(ints) == 1
    graph = parse_ir(CSE_CASES["graph_outputs"])
    eliminate_common_subexpression_like_torch(graph)
    assert [n.kind() for n in graph.nodes()].count("aten::sin") == 2
