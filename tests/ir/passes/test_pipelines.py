"""Acceptance 3: the whole generic pipeline keeps every graph's outputs.

On the conformance cases and on control-flow graphs of our own, running
runRequiredPasses, runOptimization and runNondiffOptimization (the seeds'
order) leaves a graph that lints and computes the same outputs as the
unoptimized one on the same inputs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gradview.ir import Graph, TensorType, parse_ir
from gradview.ir.passes.pipelines import (
    run_nondiff_optimization,
    run_optimization,
    run_required_passes,
)
from gradview.kernels.dtypes import to_dtype
from gradview.runtime import run_graph

from ..corpus import CASES_DIR, read_graph_text
from .pass_check import assert_same_outputs, kinds

CASES = sorted(CASES_DIR.glob("*.ir"))


def case_inputs(path: Path, graph: Graph, seed: int) -> list[Any]:
    """Random tensors of the declared shapes; scalars from the case's ``# %name = value`` lines."""
    scalars = {}
    for line in path.read_text().splitlines():
        if not line.startswith("# %"):
            break
        name, _, value = line[3:].partition(" = ")
        scalars[name.strip()] = json.loads(value)
    rng = np.random.default_rng(seed)
    inputs = []
    for value in graph.inputs():
        type_ = value.type()
        if isinstance(type_, TensorType):
            inputs.append(rng.uniform(0.5, 1.5, size=type_.sizes).astype(to_dtype(type_.scalar_type)))
        else:
            inputs.append(scalars[value.debug_name()])
    return inputs


def optimize(graph: Graph) -> Graph:
    optimized = graph.copy()
    run_required_passes(optimized)
    optimized.lint()
    run_optimization(optimized)
    optimized.lint()
    run_nondiff_optimization(optimized)
    optimized.lint()
    return optimized


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_pipeline_keeps_conformance_case_outputs(path: Path) -> None:
    graph = parse_ir(read_graph_text(path))
    optimized = optimize(graph)
    for seed in (0, 1):
        inputs = case_inputs(path, graph, seed)
        assert_same_outputs(run_graph(graph, inputs), run_graph(optimized, inputs))


CONTROL_FLOW = {
    # A constant-trip loop the unroller flattens, with a list built by append.
    "unrolled_loop_with_list": ("""graph(%x : Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %true : bool = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %one : int = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct(%x)
  %acc : Tensor = prim::Loop(%three, %true, %x)
    block0(%i : int, %a : Tensor):
      %s : Tensor = aten::mul(%a, %i)
      %t : Tensor = aten::add(%s, %x, %one)
      %u : Tensor[] = aten::append(%l, %t)
      -> (%true, %t)
  %n : int = aten::len(%l)
  %first : Tensor = aten::__getitem__(%l, %zero)
  %last : Tensor = aten::cat(%l, %zero)
  return (%acc, %n, %first, %last)
""", lambda rng: [rng.standard_normal((2, 3))]),
    # A loop whose trip count is an input: unrolled by a factor with an epilogue.
    "variable_trip_loop": ("""graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %acc : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %a : Tensor):
      %s : Tensor = aten::mul(%x, %i)
      %t : Tensor = aten::add(%a, %s, %one)
      -> (%true, %t)
  return (%acc)
""", lambda rng: [rng.standard_normal((4,)), 11]),
    # Constant conditions, tuples and repeated work inside branches.
    "ifs_and_tuples": ("""graph(%x : Tensor, %c : bool):
  %false : bool = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::tanh(%x)
  %r : Tensor = prim::If(%false)
    block0():
      %e : Tensor = aten::exp(%x)
      -> (%e)
    block1():
      %b : Tensor = aten::tanh(%x)
      %s : Tensor = aten::add(%a, %b, %one)
      -> (%s)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%r, %a)
  %p : Tensor, %q : Tensor = prim::TupleUnpack(%t)
  %o : Tensor = prim::If(%c)
    block0():
      %m : Tensor = aten::mul(%p, %q)
      -> (%m)
    block1():
      -> (%q)
  return (%o)
""", lambda rng: [rng.standard_normal((3, 2)), True]),
    # Ops that DecomposeOps and BatchMM rewrite.
    "decompose_and_batch": ("""graph(%x : Double(4, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %w1 : Double(3, 5, strides=[5, 1], requires_grad=0, device=cpu),
      %w2 : Double(3, 5, strides=[5, 1], requires_grad=0, device=cpu),
      %y : Double(4, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %b : Double(5, strides=[1], requires_grad=0, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %m1 : Double(4, 5, strides=[5, 1], requires_grad=0, device=cpu) = aten::mm(%x, %w1)
  %m2 : Double(4, 5, strides=[5, 1], requires_grad=0, device=cpu) = aten::mm(%y, %w2)
  %s : Double(4, 5, strides=[5, 1], requires_grad=0, device=cpu) = aten::add(%m1, %m2, %one)
  %a : Double(4, 5, strides=[5, 1], requires_grad=0, device=cpu) = aten::addmm(%b, %x, %w1, %one, %one)
  %shape : int[] = prim::Constant[value=[5]]()
  %none : NoneType = prim::Constant()
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %true : bool = prim::Constant[value=1]()
  %n : Double(4, 5, strides=[5, 1], requires_grad=0, device=cpu) = aten::layer_norm(%s, %shape, %none, %none, %eps, %true)
  return (%n, %a)
""", lambda rng: [rng.standard_normal(s) for s in ((4, 3), (3, 5), (3, 5), (4, 3), (5,))]),
}


@pytest.mark.parametrize("name", sorted(CONTROL_FLOW))
def test_pipeline_keeps_control_flow_graph_outputs(name: str) -> None:
    text, make_inputs = CONTROL_FLOW[name]
    graph = parse_ir(text)
    optimized = optimize(graph)
    for seed in (0, 1, 2):
        inputs = make_inputs(np.random.default_rng(seed))
        assert_same_outputs(run_graph(graph, inputs), run_graph(optimized, inputs))


def test_pipeline_really_rewrites_the_control_flow_graphs() -> None:
    # Guard against a pipeline that "keeps outputs" by doing nothing.
    unrolled = optimize(parse_ir(CONTROL_FLOW["unrolled_loop_with_list"][0]))
    assert "prim::Loop" not in kinds(unrolled) and "aten::append" not in kinds(unrolled)
    folded = optimize(parse_ir(CONTROL_FLOW["ifs_and_tuples"][0]))
    assert "aten::exp" not in kinds(folded) and "prim::TupleConstruct" not in kinds(folded)
    assert kinds(folded).count("aten::tanh") == 1
    decomposed = optimize(parse_ir(CONTROL_FLOW["decompose_and_batch"][0]))
    assert "aten::addmm" not in kinds(decomposed) and "aten::layer_norm" not in kinds(decomposed)
