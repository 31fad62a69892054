"""Small graphs the viewer tests trace through the executor, and brute-force facts about steps."""

from __future__ import annotations

from functools import cache

import numpy as np

from gradview.ir import parse_ir
from gradview.runtime import GraphName
from gradview.runtime.pass_trace import PassTrace, Step
from gradview.runtime.trace_records import BlockRecord, NodeRecord, walk_records
from gradview.viewer.session import trace_executor

from ..runtime.test_executor_trace import LOOP_AND_IF as RUNTIME_LOOP_AND_IF

DG = "prim::DifferentiableGraph"

# The runtime tests' loop-and-if graph, with a complete type for %x.
LOOP_AND_IF = RUNTIME_LOOP_AND_IF.replace("%x : Tensor", "%x : Double(3, 4)", 1)

# Every reason a node ends up outside a DifferentiableGraph: PyTorch's JIT
# leaves clamp_min to eager autograd, transpose is a view, Print has side effects, and sin+cos
# of %z form a group too small to keep after differentiation.
EXCLUSIONS = """graph(%x : Double(3, 4), %y : Double(4, 3), %z : Double(3, 4)):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %low : float = prim::Constant[value=-0.5]()
  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::clamp_min(%a, %low)
  %c : Tensor = aten::mul(%b, %x)
  %d : Tensor = aten::tanh(%c)
  %e : Tensor = aten::exp(%d)
  %t : Tensor = aten::transpose(%e, %zero, %one)
  %f : Tensor = aten::mul(%t, %y)
  %g : Tensor = aten::sigmoid(%f)
  %h : Tensor = aten::cos(%g)
   = prim::Print(%h)
  %k : Tensor = aten::neg(%h)
  %p : Tensor = aten::sin(%z)
  %q : Tensor = aten::cos(%p)
  return (%k, %q)
"""


@cache
def loop_and_if_trace() -> PassTrace:
    rng = np.random.default_rng(0)
    return trace_executor(parse_ir(LOOP_AND_IF), [rng.standard_normal((3, 4)), 2, True])


@cache
def exclusions_trace() -> PassTrace:
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((3, 4)), rng.standard_normal((4, 3)), rng.standard_normal((3, 4))]
    return trace_executor(parse_ir(EXCLUSIONS), inputs)


MAIN = GraphName.main()


def step_named(trace: PassTrace, name: str, which: GraphName = MAIN) -> Step:
    return next(step for step in trace if step.pass_name == name and step.which == which)


def drawn_node_ids(graph: BlockRecord) -> set[int]:
    """Ids of the node records a drawing shows as boxes (DifferentiableGraph nodes are frames)."""
    return {node.id for node in walk_records(graph) if node.kind != DG}


def producer_of(graph: BlockRecord, name: str) -> NodeRecord:
    """The node (anywhere in ``graph``) with an output called ``name``."""
    return next(node for node in walk_records(graph) if any(v.name == name for v in node.outputs))
