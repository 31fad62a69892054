"""create_autodiff_subgraphs against torch._C._jit_pass_create_autodiff_subgraphs.

Graphs: the scripted graphs of the round-trip corpus, the hand-written
cases of ``subgraph_cases`` (side effects, in-place writes, views, lists,
if/loop bodies, constants, ops torch cannot differentiate, profiles) and
random chains. Three comparisons:

* with torch's own verdict on which node is differentiable
  (``torch_differentiable``), the sliced graph prints exactly like torch's
  once value names are numbered in order of appearance: same groups, same
  group inputs and outputs in the same order, same nodes left outside, same
  requires_grad types. This checks the slicing itself.
* with gradview's default autodiff mode (PyTorch's ``isDifferentiable``,
  ``is_differentiable``), gradview and torch agree on every node of every
  graph, and the partition (sorted node kinds per group, and kinds left
  outside; constants aside, see ``subgraph_oracle``) equals torch's; the
  extended mode merges ops torch leaves to eager autograd.
* the sliced graph computes what the original computes: in gradview's
  interpreter (it runs a DifferentiableGraph by running its subgraph), and,
  for in-place ops the interpreter lacks, in torch after pasting the groups
  back.

Plain ``Tensor`` inputs are fine for torch's pass: it never looks at the
inputs' requires_grad (checked below with inputs typed
``Tensor(requires_grad=1)``).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from gradview.autodiff import create_autodiff_subgraphs
from gradview.autodiff.subgraph_utils import get_subgraph, unmerge_subgraph
from gradview.ir import Graph, TensorType, parse_ir
from gradview.runtime import run_graph
from gradview.runtime.interpreter import GraphCompileError

from .oracle import reference_callable
from .subgraph_cases import GRAPHS, SCALARS
from .subgraph_oracle import (
    canonical,
    disagreements,
    partition,
    require_grad_inputs,
    torch_differentiable,
    torch_partition,
    torch_text,
)

DG = "prim::DifferentiableGraph"
NAMES = sorted(GRAPHS)
THRESHOLDS = [1, 2, 3]


def groups_in(graph: Graph) -> list:
    return [node for node in graph.all_nodes() if node.kind() == DG]


def check_lint(graph: Graph) -> None:
    graph.lint()
    for node in groups_in(graph):
        get_subgraph(node).lint()


@pytest.mark.parametrize("threshold", THRESHOLDS)
@pytest.mark.parametrize("name", NAMES)
def test_slices_and_prints_like_torch(name: str, threshold: int) -> None:
    text = GRAPHS[name]
    theirs, their_partition = torch_partition(text, threshold)
    graph = parse_ir(text)
    created = create_autodiff_subgraphs(graph, threshold, differentiable=torch_differentiable)
    check_lint(graph)
    assert partition(graph.nodes()) == their_partition
    assert canonical(str(graph)) == canonical(str(theirs))
    assert set(created) == set(groups_in(graph))
    assert len(created) == len(set(created))


@pytest.mark.parametrize("threshold", [*THRESHOLDS, None])
@pytest.mark.parametrize("name", NAMES)
def test_partition_matches_torch_by_default(name: str, threshold: int | None) -> None:
    text = GRAPHS[name]
    graph = parse_ir(text)
    assert disagreements(graph) == []
    _, theirs = torch_partition(text, 2 if threshold is None else threshold)
    created = create_autodiff_subgraphs(graph) if threshold is None else create_autodiff_subgraphs(graph, threshold)
    check_lint(graph)
    assert partition(graph.nodes()) == theirs
    assert set(created) == set(groups_in(graph))


EXTENDED_ONLY = """graph(%x : Tensor, %y : Tensor):
  %none : NoneType = prim::Constant()
  %a : Tensor = aten::mul(%x, %y)
  %s : Tensor = aten::sum(%a, %none)
  %b : Tensor = aten::tanh(%s)
  return (%b)
"""


def test_extended_mode_merges_an_op_torch_leaves_outside() -> None:
    _, theirs = torch_partition(EXTENDED_ONLY, 2)
    default = parse_ir(EXTENDED_ONLY)
    create_autodiff_subgraphs(default, 2)
    assert partition(default.nodes()) == theirs
    assert "aten::sum" in {node.kind() for node in default.nodes()}  # torch leaves sum outside
    extended = parse_ir(EXTENDED_ONLY)
    (group,) = create_autodiff_subgraphs(extended, 2, mode="extended")
    assert sorted(node.kind() for node in get_subgraph(group).nodes() if node.kind() != "prim::Constant") == [
        "aten::mul", "aten::sum", "aten::tanh",
    ]
    assert partition(extended.nodes()) != theirs


def inputs_for(graph: Graph, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    values = []
    for value in graph.inputs():
        if isinstance(value.type(), TensorType):
            values.append(rng.uniform(0.5, 1.5, (3, 3)))
        else:
            values.append(SCALARS[value.debug_name().split(".")[0]])
    return values


def fresh(values: list) -> list:
    return [np.copy(v) if isinstance(v, np.ndarray) else v for v in values]


def assert_same(expected: list, actual: list) -> None:
    assert len(expected) == len(actual)
    for a, b in zip(expected, actual, strict=True):
        if isinstance(a, tuple | list):
            assert_same(list(a), list(b))
        else:
            np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-12)


def flattened(graph: Graph) -> Graph:
    """A copy of ``graph`` with every group pasted back."""
    flat = graph.copy()
    while groups := groups_in(flat):
        unmerge_subgraph(groups[0])
    return flat


def run_in_torch(text: str, values: list) -> list:
    function = reference_callable(torch_text(text))
    args = [torch.from_numpy(np.copy(v)) if isinstance(v, np.ndarray) else v for v in values]
    return [t.numpy() if isinstance(t, torch.Tensor) else t for t in function(*args)]


@pytest.mark.parametrize("threshold", [1, 2])
@pytest.mark.parametrize("name", NAMES)
def test_sliced_graph_computes_the_same(name: str, threshold: int, capsys: pytest.CaptureFixture) -> None:
    text = GRAPHS[name]
    graph = parse_ir(text)
    create_autodiff_subgraphs(graph, threshold)
    values = inputs_for(graph)
    try:
        expected = run_graph(parse_ir(text), fresh(values))
    except GraphCompileError:
        expected = None  # an op without a kernel (in-place ops): torch runs it below
    if expected is not None:
        assert_same(expected, run_graph(graph, fresh(values)))
    if "prim::Enter" in text or "prim::profile" in text:
        return  # torch's interpreter cannot run these outside a profiling executor
    try:
        expected = run_in_torch(text, values)
    except RuntimeError as error:  # e.g. an in-place add of a tensor to its own transpose
        assert "memory location" in str(error)
        return
    assert_same(expected, run_in_torch(str(flattened(graph)), values))
    capsys.readouterr()


@pytest.mark.parametrize("name", ["print_between", "views", "if_bodies", "loop_body", "script_affine_relu"])
def test_inputs_requiring_grad_change_nothing(name: str) -> None:
    text = GRAPHS[name]
    typed = require_grad_inputs(text)
    assert typed != text
    for threshold in (1, 2):
        _, plain = torch_partition(text, threshold)
        marked, marked_partition = torch_partition(typed, threshold)
        assert marked_partition == plain
        graph = parse_ir(typed)
        create_autodiff_subgraphs(graph, threshold, differentiable=torch_differentiable)
        assert canonical(str(graph)) == canonical(str(marked))


def test_default_threshold_is_torch_node_threshold() -> None:
    text = GRAPHS["independent_chains"]
    default, two = parse_ir(text), parse_ir(text)
    create_autodiff_subgraphs(default)
    create_autodiff_subgraphs(two, 2)
    assert str(default) == str(two)
    assert [len(list(get_subgraph(n).nodes())) for n in groups_in(default)] == [3]


def test_printed_groups_look_like_torch_and_parse_back() -> None:
    graph = parse_ir(GRAPHS["script_residual"])
    (group,) = create_autodiff_subgraphs(graph, 2)
    text = str(graph)
    assert re.search(r"\n  %\w+ : Tensor = prim::DifferentiableGraph_0\(%x.1, %w.1\)\n", text)
    assert "\nwith prim::DifferentiableGraph_0 = graph(%x.1 : Tensor,\n      %w.1 : Tensor):\n" in text
    assert [n.kind() for n in get_subgraph(group).nodes()] == [
        "aten::mm", "aten::tanh", "prim::Constant", "aten::add",
    ]
    assert str(parse_ir(text)) == text


def test_requires_grad_comes_from_profiles_in_the_same_context() -> None:
    graph = parse_ir(GRAPHS["profile_in_other_context"])
    first, second = sorted(create_autodiff_subgraphs(graph, 2), key=lambda n: n.topo_position)
    # %b is profiled twice: requires_grad=0 under the context, 1 outside it
    # (inside the second group, which reads %b).
    (out,) = get_subgraph(first).outputs()
    assert out.type().requires_grad is True
    (out,) = get_subgraph(second).outputs()
    assert out.type().requires_grad is None  # no profile: the type is kept


def test_view_ops_stay_outside_and_work_blocks_end_at_side_effects() -> None:
    graph = parse_ir(GRAPHS["views"])
    create_autodiff_subgraphs(graph, 1, differentiable=torch_differentiable)
    outside = [n.kind() for n in graph.nodes() if n.kind() not in (DG, "prim::Constant")]
    assert sorted(outside) == [
        "aten::expand_as", "aten::reshape", "aten::transpose", "aten::view", "prim::ListConstruct",
    ]
    graph = parse_ir(GRAPHS["print_blocks_producer"])
    create_autodiff_subgraphs(graph, 2, differentiable=torch_differentiable)
    kinds = [n.kind() for n in graph.nodes() if n.kind() != "prim::Constant"]
    assert kinds == [DG, "prim::Print", DG]


def test_aliased_outputs_are_unfused() -> None:
    graph = parse_ir(GRAPHS["aliased_outputs"])
    create_autodiff_subgraphs(graph, 1, differentiable=torch_differentiable)
    # sin, t(sin), cos, mul: t's output would alias sin's, so t leaves the
    # group, and mul with it (it reads t); groups are not grown again after.
    after = [n.kind() for n in graph.nodes() if n.kind() != "prim::Constant"]
    assert after == [DG, "aten::t", "aten::mul"]
    graph = parse_ir(GRAPHS["output_aliases_input"])
    create_autodiff_subgraphs(graph, 1, differentiable=torch_differentiable)
    first = next(n for n in graph.nodes() if n.kind() == "aten::t")
    assert first.inputs()[0] is graph.inputs()[0]


def test_known_difference_union_find_aliasing_is_coarser_than_torch() -> None:
    """gradview's AliasDb keeps alias *sets*: the ``if`` returning %a or %y
    puts %a and %y (a graph input, which may alias any input) in one set, so
    the write into %a also counts as a write into %y, and sigmoid(%y) may not
    move past it. torch's points-to graph knows %a and %y never share memory
    themselves and merges sigmoid into mul's group."""
    text = """graph(%x : Tensor, %y : Tensor, %flag : bool):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::cos(%x)
  %s : Tensor = aten::sigmoid(%y)
  %w : Tensor = aten::add_(%a, %x, %one)
  %r : Tensor = prim::If(%flag)
    block0():
      -> (%a)
    block1():
      -> (%y)
  %m : Tensor = aten::mul(%s, %w)
  return (%m, %r)
"""
    _, theirs = torch_partition(text, 1)
    graph = parse_ir(text)
    create_autodiff_subgraphs(graph, 1, differentiable=torch_differentiable)
    check_lint(graph)
    assert theirs.groups == (("aten::cos",), ("aten::mul", "aten::sigmoid"))
    assert partition(graph.nodes()).groups == (("aten::cos",), ("aten::mul",), ("aten::sigmoid",))


def test_module_docstring_example() -> None:
    graph = parse_ir("""graph(%x : Tensor, %w : Tensor):
  %t : Tensor = aten::mm(%x, %w)
  %s : int[] = aten::size(%t)
  %y : Tensor = aten::tanh(%t)
   = prim::Print(%y)
  %z : Tensor = aten::exp(%y)
  return (%z, %s)
""")
    create_autodiff_subgraphs(graph, 2, differentiable=torch_differentiable)
    assert str(graph) == """graph(%x : Tensor,
      %w : Tensor):
  %y : Tensor, %t : Tensor = prim::DifferentiableGraph_0(%x, %w)
  %s : int[] = aten::size(%t)
   = prim::Print(%y)
  %z : Tensor = aten::exp(%y)
  return (%z, %s)
with prim::DifferentiableGraph_0 = graph(%x : Tensor,
      %w : Tensor):
  %t : Tensor = aten::mm(%x, %w)
  %y : Tensor = aten::tanh(%t)
  return (%y, %t)
"""
