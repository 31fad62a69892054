"""GraphExecutor + autograd behave as torch 2.13's executor and eager autograd do
(issue 11, point 1): values, ``requires_grad`` and second derivatives, on the
cases a new user tried and found wrong.

Each case runs twice through one executor (the second run takes the cached
plan) and is compared with eager torch on the same float64 inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.runtime import Tensor, autograd, script
from gradview.runtime.executor import GraphExecutor


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def _close(ours: Any, theirs: torch.Tensor) -> None:
    np.testing.assert_allclose(_np(ours), theirs.detach().numpy(), rtol=1e-7, atol=1e-12)


def _grads_match(
    fn: Callable[..., Any], executor: GraphExecutor, values: list[np.ndarray], wants: list[bool],
) -> None:
    """grad of sum(outputs) through the executor (twice) equals eager torch's."""
    t_in = [torch.tensor(v, requires_grad=w) for v, w in zip(values, wants, strict=True)]
    t_out = fn(*t_in)
    t_outs = t_out if isinstance(t_out, tuple) else (t_out,)
    t_leaves = [t for t in t_in if t.requires_grad]
    expected = torch.autograd.grad(sum(o.sum() for o in t_outs), t_leaves, allow_unused=True)
    for _ in range(2):
        g_in = [Tensor(v.copy(), requires_grad=w) for v, w in zip(values, wants, strict=True)]
        outs = executor.run(g_in)
        outs = list(outs[0]) if isinstance(outs[0], tuple) else outs
        for ours, theirs in zip(outs, t_outs, strict=True):
            _close(ours, theirs)
            assert ours.requires_grad == theirs.requires_grad
        leaves = [t for t in g_in if t.requires_grad]
        total = outs[0].sum()
        for extra in outs[1:]:
            total = total + extra.sum()
        got = autograd.grad(total, leaves, allow_unused=True)
        for ours, theirs in zip(got, expected, strict=True):
            assert (ours is None) == (theirs is None)
            if theirs is not None:
                _close(ours, theirs)


def _lerp_addcmul_max(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    m = torch.addcmul(torch.lerp(a, b, w), b, c, value=0.5)
    return torch.max(m, c)


def _lerp_addcmul_max_ties(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    # max(m, m * 1.0): every element ties, and eager autograd splits the gradient in half
    m = torch.addcmul(torch.lerp(a, c, w), a, c, value=2.0)
    return torch.max(m, m * 1.0)


@pytest.mark.parametrize("fn", [_lerp_addcmul_max, _lerp_addcmul_max_ties])
@pytest.mark.parametrize("broadcast", [False, True])
def test_lerp_addcmul_binary_max_gradients_equal_eager(fn: Callable[..., Any], broadcast: bool) -> None:
    shapes = [(3, 4), (4,), (1, 4), (3, 1)] if broadcast else [(3, 4)] * 4
    rng = np.random.default_rng(0)
    values = [np.round(rng.standard_normal(s) * 2) / 2 for s in shapes]  # ties in max, too
    executor = GraphExecutor(parse_ir(str(torch.jit.script(fn).graph)))
    _grads_match(fn, executor, values, [True] * 4)
    kinds = [n.kind() for n in executor.last_executed_optimized_graph().nodes()]
    assert "prim::DifferentiableGraph" in kinds


CHUNK_SIN_MUL = """graph(%x : Tensor):
  %a : Tensor, %b : Tensor = prim::ConstantChunk[chunks=2, dim=0](%x)
  %s : Tensor = aten::sin(%a)
  %y : Tensor = aten::mul(%s, %b)
  return (%y)
"""


@pytest.mark.parametrize("inlining", [True, False])
def test_constant_chunk_sin_mul_requires_grad(inlining: bool) -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        a, b = x.chunk(2, 0)
        return a.sin() * b

    values = [np.random.default_rng(1).standard_normal((4, 3))]
    executor = GraphExecutor(parse_ir(CHUNK_SIN_MUL), autodiff_subgraph_inlining=inlining)
    _grads_match(fn, executor, values, [True])


def _tuple_of_two(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    a, b = torch.chunk(x, 2, 0)
    s = torch.sin(a) * b
    return s * y, torch.tanh(s)


def _tuple_of_plain_ops(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x.sin(), x * 2


@pytest.mark.parametrize("fn", [_tuple_of_two, _tuple_of_plain_ops])
def test_scripted_tuple_results_are_tensors_connected_to_autograd(fn: Callable[..., Any]) -> None:
    compiled = script(fn)
    rng = np.random.default_rng(2)
    values = [rng.standard_normal((4, 3)), rng.standard_normal((2, 3))][: fn.__code__.co_argcount]
    t_in = [torch.tensor(v, requires_grad=i == 0) for i, v in enumerate(values)]
    t_out = fn(*t_in)
    (expected,) = torch.autograd.grad([o.sum() for o in t_out], [t_in[0]])
    for _ in range(2):
        g_in = [Tensor(v.copy(), requires_grad=i == 0) for i, v in enumerate(values)]
        out = compiled(*g_in)
        assert isinstance(out, tuple) and all(isinstance(o, Tensor) for o in out)
        assert [o.requires_grad for o in out] == [o.requires_grad for o in t_out]
        (got,) = autograd.grad([o.sum() for o in out], [g_in[0]])
        _close(got, expected)
    assert "prim::TupleConstruct" in [n.kind() for n in compiled.executor.last_executed_optimized_graph().nodes()]


def _sin_x_x(x: torch.Tensor) -> torch.Tensor:
    return torch.sin(x) * x * x


def _polynomial(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.exp(x * w + b).sin() * x.sum() - w * w * b


def _looped(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = x * w
    for _ in range(3):
        y = torch.sin(y) * x
    return y.exp()


@pytest.mark.parametrize(("fn", "shapes"), [
    (_sin_x_x, [(3,)]),
    (_polynomial, [(4, 3), (4, 3), (3,)]),
    (_looped, [(2, 3), (2, 3)]),
])
def test_create_graph_through_differentiable_graphs_gives_torch_second_derivatives(
    fn: Callable[..., Any], shapes: list[tuple[int, ...]],
) -> None:
    """grad(..., create_graph=True) records df's run: the first gradient
    requires grad, and the gradient of its sum equals eager torch's."""
    rng = np.random.default_rng(3)
    values = [rng.standard_normal(s) for s in shapes]
    t_in = [torch.tensor(v, requires_grad=True) for v in values]
    t_first = torch.autograd.grad(fn(*t_in).sum(), t_in, create_graph=True)
    t_second = torch.autograd.grad(sum(g.pow(2).sum() for g in t_first), t_in)
    executor = GraphExecutor(parse_ir(str(torch.jit.script(fn).graph)))
    for _ in range(2):
        g_in = [Tensor(v.copy(), requires_grad=True) for v in values]
        (out,) = executor.run(g_in)
        first = autograd.grad(out.sum(), g_in, create_graph=True)
        for ours, theirs in zip(first, t_first, strict=True):
            _close(ours, theirs)
            assert ours.requires_grad
        total = (first[0] * first[0]).sum()
        for g in first[1:]:
            total = total + (g * g).sum()
        second = autograd.grad(total, g_in)
        for ours, theirs in zip(second, t_second, strict=True):
            _close(ours, theirs)
    kinds = [n.kind() for n in executor.last_executed_optimized_graph().nodes()]
    assert "prim::DifferentiableGraph" in kinds or "prim::Loop" in kinds


def test_create_graph_value_of_the_issue() -> None:
    """The issue's numbers: for sin(x) * x * x at x = (0.5, -1, 2)."""
    x = Tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    (y,) = GraphExecutor(parse_ir(str(torch.jit.script(_sin_x_x).graph))).run([x])
    (g,) = autograd.grad(y.sum(), [x], create_graph=True)
    assert g.requires_grad
    (gg,) = autograd.grad(g.sum(), [x])
    t_x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (t_g,) = torch.autograd.grad(_sin_x_x(t_x).sum(), t_x, create_graph=True)
    (t_gg,) = torch.autograd.grad(t_g.sum(), t_x)
    _close(gg, t_gg)


def test_without_create_graph_the_gradient_is_a_constant() -> None:
    x = Tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    (y,) = GraphExecutor(parse_ir(str(torch.jit.script(_sin_x_x).graph))).run([x])
    (g,) = autograd.grad(y.sum(), [x])
    assert not g.requires_grad and g.grad_fn is None
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        autograd.grad(g.sum(), [x])


def test_create_graph_through_a_backward_kernel_gives_torch_second_derivative() -> None:
    """tanh's gradient is the kernel tanh_backward, which has its own gradient
    (derivatives.yaml's): the second backward equals torch's."""
    def fn(x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x) * x

    x = Tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    (y,) = GraphExecutor(parse_ir(str(torch.jit.script(fn).graph))).run([x])
    (g,) = autograd.grad(y.sum(), [x], create_graph=True)
    assert g.requires_grad
    (gg,) = autograd.grad(g.sum(), [x])
    t_x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (t_g,) = torch.autograd.grad(fn(t_x).sum(), t_x, create_graph=True)
    (t_gg,) = torch.autograd.grad(t_g.sum(), t_x)
    _close(gg, t_gg)


def _inplace_and_loop(x: torch.Tensor, w: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    y = x * w
    y.mul_(w)
    for _ in range(n):
        y = torch.sin(y) + x
    return y.exp(), torch.tanh(w)


@pytest.mark.parametrize("fn", [_lerp_addcmul_max, _sin_x_x, _polynomial, _inplace_and_loop])
def test_fallback_plan_records_eager_autograd(fn: Callable[..., Any]) -> None:
    """GraphExecutor(graph, optimize=False) runs torch's fallback plan (no
    specialization, no DifferentiableGraph) and still records autograd, as
    torch's does under ``torch.jit.optimized_execution(False)``."""
    scripted = torch.jit.script(fn)
    rng = np.random.default_rng(4)
    count = len(list(scripted.graph.inputs()))
    values: list[Any] = [rng.standard_normal((2, 3)) for _ in range(count)]
    if fn is _inplace_and_loop:
        values[2] = 2
    wants = [isinstance(v, np.ndarray) and (i != 0 or count == 1) for i, v in enumerate(values)]
    t_in = [torch.tensor(v, requires_grad=w) if isinstance(v, np.ndarray) else v for v, w in zip(values, wants, strict=True)]
    with torch.jit.optimized_execution(False):
        t_out = scripted(*t_in)
    t_outs = t_out if isinstance(t_out, tuple) else (t_out,)
    t_leaves = [t for t in t_in if isinstance(t, torch.Tensor) and t.requires_grad]
    expected = torch.autograd.grad(sum(o.sum() for o in t_outs), t_leaves)
    executor = GraphExecutor(parse_ir(str(scripted.graph)), optimize=False)
    for _ in range(2):
        g_in = [
            Tensor(v.copy(), requires_grad=w) if isinstance(v, np.ndarray) else v
            for v, w in zip(values, wants, strict=True)
        ]
        (out,) = executor.run(g_in)
        outs = out if isinstance(out, tuple) else (out,)
        assert [o.requires_grad for o in outs] == [o.requires_grad for o in t_outs]
        total = outs[0].sum()
        for extra in outs[1:]:
            total = total + extra.sum()
        got = autograd.grad(total, [t for t in g_in if isinstance(t, Tensor) and t.requires_grad])
        for ours, theirs in zip(got, expected, strict=True):
            _close(ours, theirs)
    assert executor.fallback is not None and executor.plan_cache == {}
    assert "prim::DifferentiableGraph" not in [n.kind() for n in executor.fallback.graph.nodes()]


def test_fallback_plan_without_grad_inputs_records_nothing() -> None:
    executor = GraphExecutor(parse_ir(str(torch.jit.script(_sin_x_x).graph)), optimize=False)
    (y,) = executor.run([Tensor(np.ones(3))])
    assert not y.requires_grad and y.grad_fn is None
    with autograd.no_grad():
        (y,) = executor.run([Tensor(np.ones(3), requires_grad=True)])
    assert not y.requires_grad and y.grad_fn is None


def _cat_sin(xs: list[torch.Tensor]) -> torch.Tensor:
    return torch.cat(xs).sin() * 2


def _optional_weight(x: torch.Tensor, y: torch.Tensor | None) -> torch.Tensor:
    if y is not None:
        return (x * y.sin()).exp()
    return x * 2


def test_tensor_list_input_keeps_its_tensors_and_builds_a_differentiable_graph() -> None:
    """run([[a, b]]): the Tensors in the list keep their autograd identity, and
    (as TorchScript, which does not specialize list elements) the graph is
    differentiated whether or not an element requires grad."""
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((1, 3))
    executor = GraphExecutor(parse_ir(str(torch.jit.script(_cat_sin).graph)))
    t_a = torch.tensor(a, requires_grad=True)
    t_out = _cat_sin([t_a, torch.tensor(b)])
    (expected,) = torch.autograd.grad(t_out.sum(), t_a)
    for _ in range(2):
        g_a = Tensor(a.copy(), requires_grad=True)
        (out,) = executor.run([[g_a, Tensor(b)]])
        _close(out, t_out)
        assert out.requires_grad
        (got,) = autograd.grad(out.sum(), [g_a])
        _close(got, expected)
    for given in ([Tensor(a), Tensor(b)], [a, b]):
        (out,) = executor.run([given])
        _close(out, t_out)
        # torch's legacy executor marks this output requires_grad=True although
        # nothing in the list requires grad (its DifferentiableGraphOp sets it
        # on every floating output); gradview follows eager autograd here.
        assert not out.requires_grad
    assert executor.cache_misses == 1
    kinds = [n.kind() for n in executor.last_executed_optimized_graph().nodes()]
    assert kinds == ["prim::DifferentiableGraph"]


@pytest.mark.parametrize(("wants", "given"), [
    ((False, True), True), ((True, False), True), ((False, False), True), ((True, True), True),
    ((True, False), False), ((False, False), False),
])
def test_optional_tensor_input_is_specialized_and_differentiated(wants: tuple[bool, bool], given: bool) -> None:
    """A ``Tensor?`` input counts in the ArgumentSpec: alone requiring grad, it
    makes the output require grad, with torch's gradient."""
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    t_x = torch.tensor(x, requires_grad=wants[0])
    t_y = torch.tensor(y, requires_grad=wants[1]) if given else None
    t_out = _optional_weight(t_x, t_y)
    leaves = [t for t in (t_x, t_y) if t is not None and t.requires_grad]
    expected = torch.autograd.grad(t_out.sum(), leaves) if leaves else ()
    executor = GraphExecutor(parse_ir(str(torch.jit.script(_optional_weight).graph)))
    for _ in range(2):
        g_x = Tensor(x.copy(), requires_grad=wants[0])
        g_y = Tensor(y.copy(), requires_grad=wants[1]) if given else None
        (out,) = executor.run([g_x, g_y])
        _close(out, t_out)
        assert out.requires_grad == t_out.requires_grad
        ours = [t for t in (g_x, g_y) if t is not None and t.requires_grad]
        if ours:
            for got, theirs in zip(autograd.grad(out.sum(), ours), expected, strict=True):
                _close(got, theirs)
    assert executor.cache_misses == 1
    spec = next(iter(executor.plan_cache))
    assert str(spec.args[1]) == ("undefined" if not given else f"Double(rank 2{', requires_grad' * wants[1]})")


def _sin_w_x_exp(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return (torch.sin(x) * w * x).exp()


def _kinds(graph: Any) -> list[str]:
    return [n.kind() for n in graph.nodes() if n.kind() != "prim::Constant"]


@pytest.fixture
def legacy_executor() -> Any:
    """torch's legacy GraphExecutor (the one gradview reproduces), restored afterwards."""
    old = torch._C._jit_set_profiling_executor(False)
    yield
    torch._C._jit_set_profiling_executor(old)


def test_debug_state_and_graph_for_are_shaped_as_torchs(legacy_executor: Any) -> None:
    scripted = torch.jit.script(_sin_w_x_exp)
    executor = GraphExecutor(parse_ir(str(scripted.graph)))
    before, t_before = executor.debug_state(), scripted.get_debug_state()
    assert before.execution_plans == {} and len(t_before.execution_plans) == 0
    assert before.fallback.graph is None and t_before.fallback.graph is None
    data = [np.linspace(-1, 1, 3), np.linspace(0.5, 2, 3)]
    t_x, t_w = torch.tensor(data[0], requires_grad=True), torch.tensor(data[1])
    x, w = Tensor(data[0].copy(), requires_grad=True), Tensor(data[1].copy())
    scripted(t_x, t_w).sum().backward()
    executor.run([x, w])[0].sum().backward()
    scripted(t_x.detach(), t_w)
    executor.run([x.detach(), w])
    t_state, state = scripted.get_debug_state(), executor.debug_state()
    assert str(state.graph) == str(executor.graph)
    assert len(state.execution_plans) == len(t_state.execution_plans) == 2
    ours = sorted(_kinds(plan.graph) for plan in state.execution_plans.values())
    theirs = sorted(_kinds(plan.graph) for plan in t_state.execution_plans.values())
    assert ours == theirs
    # Each DifferentiableGraph's backward executor compiled one plan in the backward pass.
    t_grad_states = [s for p in t_state.execution_plans.values() for s in p.code.grad_executor_states()]
    grad_states = [s for p in state.execution_plans.values() for s in p.grad_executor_states()]
    assert [len(s.execution_plans) for s in grad_states] == [len(s.execution_plans) for s in t_grad_states] == [1]
    # graph_for: the plan of these inputs, DifferentiableGraph nodes holding f.
    t_graph = scripted.graph_for(t_x, t_w)  # (torch's: with two plans, it runs and takes the last)
    graph = executor.graph_for([x, w])
    assert _kinds(graph) == _kinds(t_graph) == ["prim::DifferentiableGraph"]
    (node,) = graph.nodes()
    (t_node,) = t_graph.nodes()
    assert _kinds(node.g("Subgraph")) == _kinds(t_node.g("Subgraph"))
    assert _kinds(executor.graph_for([x.detach(), w])) == ["aten::sin", "aten::mul", "aten::mul", "aten::exp"]
    assert executor.cache_misses == 2


def _cos_w_x(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.cos(x) * w * x


def test_debug_state_shows_the_fallback_once_compiled(legacy_executor: Any) -> None:
    scripted = torch.jit.script(_cos_w_x)
    executor = GraphExecutor(parse_ir(str(scripted.graph)), optimize=False)
    x, w = Tensor(np.ones(3), requires_grad=True), Tensor(np.ones(3))
    executor.run([x, w])
    with torch.jit.optimized_execution(False):
        scripted(torch.ones(3, requires_grad=True), torch.ones(3))
    state, t_state = executor.debug_state(), scripted.get_debug_state()
    assert state.execution_plans == {} and len(t_state.execution_plans) == 0
    assert _kinds(state.fallback.graph) == _kinds(t_state.fallback.graph)


def _sin_times(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.sin(x) * w


def _backward_plan_kinds(states: list[Any]) -> list[list[str]]:
    return [_kinds(plan.graph) for state in states for plan in state.execution_plans.values()]


def test_autodiff_subgraph_inlining_switch_reaches_the_backward_executors(legacy_executor: Any) -> None:
    """With inlining off, the backward executors (which a create_graph backward
    runs with gradients) keep single-node DifferentiableGraphs as torch's do
    under ``_debug_set_autodiff_subgraph_inlining(False)``."""
    data = [np.linspace(-1, 1, 3), np.linspace(0.5, 2, 3)]
    torch._C._debug_set_autodiff_subgraph_inlining(False)
    try:
        scripted = torch.jit.script(_sin_times)
        t_in = [torch.tensor(v, requires_grad=True) for v in data]
        torch.autograd.grad(scripted(*t_in).sum(), t_in[0], create_graph=True)
    finally:
        torch._C._debug_set_autodiff_subgraph_inlining(True)  # torch's default (it has no getter)
    (t_plan,) = scripted.get_debug_state().execution_plans.values()
    executor = GraphExecutor(parse_ir(str(scripted.graph)), autodiff_subgraph_inlining=False)
    g_in = [Tensor(v.copy(), requires_grad=True) for v in data]
    (out,) = executor.run(g_in)
    autograd.grad(out.sum(), [g_in[0]], create_graph=True)
    (plan,) = executor.debug_state().execution_plans.values()
    assert _kinds(plan.graph) == _kinds(t_plan.graph) == ["prim::DifferentiableGraph"]
    ours = _backward_plan_kinds(plan.grad_executor_states())
    theirs = _backward_plan_kinds(t_plan.code.grad_executor_states())
    assert ours == theirs == [["prim::DifferentiableGraph", "prim::DifferentiableGraph", "prim::TupleConstruct"]]
    assert all(not op.backward_executor.autodiff_subgraph_inlining for op in plan.ops)


def test_inlining_switch_reaches_the_eager_ops_backward_executors() -> None:
    executor = GraphExecutor(parse_ir(LOOPED_SIN), autodiff_subgraph_inlining=False)
    x = Tensor(np.linspace(-1, 1, 3), requires_grad=True)
    executor.run([x, 2])
    (plan,) = executor.debug_state().execution_plans.values()
    inner = [getattr(op, "op", op) for op in plan.ops]
    assert inner and all(not op.backward_executor.autodiff_subgraph_inlining for op in inner)


LOOPED_SIN = """graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %v : Tensor):
      %s : Tensor = aten::sin(%v)
      %m : Tensor = aten::mul(%s, %x)
      -> (%true, %m)
  return (%y)
"""


def test_zero_dim_results_stay_connected_to_autograd() -> None:
    """A NumPy kernel's 0-d result can be a NumPy scalar; it still gets its grad_fn."""
    text = "graph(%x : Tensor):\n  %y : Tensor = aten::acos(%x)\n  return (%y)\n"
    for optimize in (True, False):
        x = Tensor(np.array(-0.5), requires_grad=True)
        (y,) = GraphExecutor(parse_ir(text), optimize=optimize).run([x])
        assert y.requires_grad
        (g,) = autograd.grad(y, [x])
        t_x = torch.tensor(-0.5, dtype=torch.float64, requires_grad=True)
        _close(g, torch.autograd.grad(torch.acos(t_x), t_x)[0])
