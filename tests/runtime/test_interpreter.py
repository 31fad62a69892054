"""The interpreter: TorchScript's control flow and autodiff prims, errors that name the node."""


import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.runtime import GraphCompileError, GraphRuntimeError, compile_graph, run_graph

from ..ir.corpus import ROUNDTRIP_DIR

X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)


def test_if_runs_the_chosen_branch() -> None:
    graph = parse_ir((ROUNDTRIP_DIR / "script_branchy.ir").read_text())
    compiled = compile_graph(graph)
    np.testing.assert_allclose(compiled(X, True)[0], np.exp(X) * 3)
    np.testing.assert_allclose(compiled(X, False)[0], -X * 3)


def test_loop_with_trip_count_and_carried_values_matches_torchscript() -> None:
    text = (ROUNDTRIP_DIR / "script_loop_sum.ir").read_text()
    compiled = compile_graph(parse_ir(text))
    reference = torch._C._create_function_from_graph("loop_sum", torch._C.parse_ir(text))
    for n in (0, 1, 4):
        expected = reference(torch.from_numpy(X), n).numpy()
        np.testing.assert_allclose(compiled(X, n)[0], expected)


def test_loop_condition_stops_the_loop() -> None:
    # Runs while i < 2 after each body: the body runs three times (i = 0, 1, 2).
    text = """graph(%x : Tensor):
  %big : int = prim::Constant[value=9223372036854775807]()
  %true : bool = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %y : Tensor = prim::Loop(%big, %true, %x)
    block0(%i : int, %acc : Tensor):
      %next : Tensor = aten::mul(%acc, %two)
      %more : bool = aten::lt(%i, %two)
      -> (%more, %next)
  return (%y)
"""
    np.testing.assert_allclose(run_graph(parse_ir(text), [X])[0], X * 8)


def test_nested_loops_keep_their_counters_apart() -> None:
    text = """graph(%x : Tensor, %n : int, %m : int):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %a : Tensor):
      %z : Tensor = prim::Loop(%m, %true, %a)
        block0(%j : int, %b : Tensor):
          %k : int = aten::mul(%i, %j)
          %c : Tensor = aten::add(%b, %x, %k)
          -> (%true, %c)
      -> (%true, %z)
  return (%y)
"""
    expected = X.copy()
    for i in range(3):
        for j in range(4):
            expected = expected + X * (i * j)
    np.testing.assert_allclose(run_graph(parse_ir(text), [X, 3, 4])[0], expected)


GRAD_OF = """graph(%g : Tensor, %h : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = prim::GradOf[name="aten::mul"](%g, %h)
    block0():
      %p : Tensor = aten::mul(%g, %h)
      -> (%p)
  %z : Tensor = prim::AutogradZero()
  %s : Tensor = prim::AutogradAdd(%a, %z)
  return (%a, %s)
"""


def test_grad_of_runs_when_any_input_is_defined() -> None:
    graph = parse_ir(GRAD_OF)
    a, s = run_graph(graph, [X, X])
    np.testing.assert_allclose(a, X * X)
    np.testing.assert_allclose(s, X * X)  # AutogradAdd with an undefined side


def test_grad_of_yields_undefined_when_all_inputs_are() -> None:
    assert run_graph(parse_ir(GRAD_OF), [None, None]) == [None, None]


def test_tuples_and_lists_round_trip() -> None:
    text = """graph(%x : Tensor, %y : Tensor):
  %t : (Tensor, Tensor) = prim::TupleConstruct(%x, %y)
  %a : Tensor, %b : Tensor = prim::TupleUnpack(%t)
  %zero : int = prim::Constant[value=0]()
  %c : Tensor = prim::TupleIndex(%t, %zero)
  %l : Tensor[] = prim::ListConstruct(%b, %c)
  %d : Tensor, %e : Tensor = prim::ListUnpack(%l)
  return (%t, %d, %e)
"""
    t, d, e = run_graph(parse_ir(text), [X, 2 * X])
    assert isinstance(t, tuple) and len(t) == 2
    np.testing.assert_allclose(d, 2 * X)
    np.testing.assert_allclose(e, X)


def test_differentiable_graph_runs_its_subgraph() -> None:
    text = (ROUNDTRIP_DIR / "optimized_residual.ir").read_text()
    graph = parse_ir(text)
    x, w = np.eye(3, dtype=np.float32), np.full((3, 3), 0.5, dtype=np.float32)
    # Plain arrays do not require grad: RequiresGradCheck fails and the
    # fallback (a call to a function whose body is not in the text) is taken.
    with pytest.raises(GraphCompileError, match="prim::CallFunction"):
        run_graph(graph, [x, w])
    diff = next(n for n in graph.all_nodes() if n.kind() == "prim::DifferentiableGraph")
    sub = diff.g("Subgraph")
    outputs = run_graph(sub, [x, w])
    np.testing.assert_allclose(outputs[0], x + np.tanh(x @ w), rtol=1e-6)


def test_type_check_compares_inputs_with_profiled_types() -> None:
    text = """graph(%x : Tensor):
  %y : Tensor, %ok : bool = prim::TypeCheck[types=[Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu)]](%x)
  return (%ok)
"""
    graph = parse_ir(text)
    assert run_graph(graph, [X]) == [True]
    assert run_graph(graph, [X.astype(np.float32)]) == [False]
    assert run_graph(graph, [X.T.copy()]) == [False]


def test_unknown_operator_is_refused_at_compile_time_naming_the_node() -> None:
    graph = parse_ir("""graph(%x : Tensor):
  %y : Tensor = aten::frobnicate(%x)
  return (%y)
""")
    with pytest.raises(GraphCompileError) as info:
        compile_graph(graph)
    assert "aten::frobnicate" in str(info.value) and "%y : Tensor = aten::frobnicate(%x)" in str(info.value)


def test_wrong_input_count_names_the_inputs() -> None:
    graph = parse_ir((ROUNDTRIP_DIR / "script_branchy.ir").read_text())
    with pytest.raises(GraphRuntimeError, match=r"takes 2 inputs \(%x.1, %flag.1\), got 1"):
        run_graph(graph, [X])


def test_shape_mismatch_names_the_node_and_input_shapes() -> None:
    graph = parse_ir("""graph(%x : Tensor, %y : Tensor):
  %z : Tensor = aten::mul(%x, %y)
  return (%z)
""")
    with pytest.raises(GraphRuntimeError) as info:
        run_graph(graph, [X, np.ones(4)])
    message = str(info.value)
    assert "%z : Tensor = aten::mul(%x, %y)" in message
    assert "%x: float64[2, 3]" in message and "%y: float64[4]" in message


def test_input_shape_that_contradicts_a_complete_type_is_refused() -> None:
    graph = parse_ir("""graph(%x : Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %y : Tensor = aten::relu(%x)
  return (%y)
""")
    with pytest.raises(GraphRuntimeError, match=r"input 0 \(%x\) has shape \[3, 2\]"):
        run_graph(graph, [X.T.copy()])


def test_compiled_graph_runs_many_times_with_fresh_lists() -> None:
    text = """graph(%x : Tensor):
  %l : int[] = prim::Constant[value=[1, 2]]()
  return (%l)
"""
    compiled = compile_graph(parse_ir(text))
    first = compiled(X)[0]
    first.append(3)
    assert compiled(X)[0] == [1, 2]


def test_raise_exception_becomes_a_runtime_error() -> None:
    text = """graph(%c : bool):
  %msg : str = prim::Constant[value="boom"]()
   = prim::If(%c)
    block0():
       = prim::RaiseException(%msg)
      -> ()
    block1():
      -> ()
  return (%c)
"""
    graph = parse_ir(text)
    assert run_graph(graph, [False]) == [False]
    with pytest.raises(GraphRuntimeError, match="boom"):
        run_graph(graph, [True])


SIZES_GRAPH = """graph(%a : Tensor, %b : Tensor, %v : Tensor):
  %sa : int[] = aten::size(%a)
  %sb : int[] = aten::size(%b)
  %n : int = aten::numel(%a)
  %diff : int[]? = aten::_size_if_not_equal(%sa, %sb)
  %same : int[]? = aten::_size_if_not_equal(%sa, %sa)
  %summed : Tensor = aten::_grad_sum_to_size(%a, %sb)
  %kept : Tensor = aten::_grad_sum_to_size(%a, %same)
  %at : Tensor = aten::t(%a)
  %vt : Tensor = aten::t(%v)
  %tb : Tensor = aten::tanh_backward(%a, %a)
  %sg : Tensor = aten::sigmoid_backward(%v, %v)
  return (%sa, %n, %diff, %same, %summed, %kept, %at, %vt, %tb, %sg)
"""


@pytest.mark.parametrize("dtype", ["Double", "Tensor"])
def test_size_and_gradient_helpers_agree_with_torchscript(dtype: str) -> None:
    # The compiled code calls these ops through short direct paths (they are
    # hot in every backward graph); the results must stay TorchScript's.
    text = SIZES_GRAPH if dtype == "Tensor" else SIZES_GRAPH.replace(": Tensor,", ": Double(*, *),", 2)
    rng = np.random.default_rng(3)
    a, b, v = rng.standard_normal((3, 4)), rng.standard_normal((1, 4)), rng.standard_normal(5)
    ours = run_graph(parse_ir(text), [a, b, v])
    theirs = torch._C._jit_interpret_graph(torch._C.parse_ir(SIZES_GRAPH), tuple(torch.tensor(x) for x in (a, b, v)))
    assert ours[:4] == list(theirs[:4])
    for mine, reference in zip(ours[4:], theirs[4:], strict=True):
        np.testing.assert_allclose(mine, reference.numpy(), rtol=1e-12)
    assert ours[5] is not None and np.shares_memory(ours[5], a)  # None size: the gradient passes through


def test_call_on_device_keeps_the_backend_arrays() -> None:
    """``call_on_device`` neither moves inputs in nor results out; ``__call__`` does both."""
    from dataclasses import dataclass

    from gradview.kernels import Backend

    @dataclass(frozen=True)
    class NoCrossing(Backend):
        def to_device(self, value: object) -> object:
            raise AssertionError("to_device called inside the runtime")

        def to_host(self, value: object) -> object:
            raise AssertionError("to_host called inside the runtime")

        def results_to_host(self, results: object) -> list:
            raise AssertionError("results_to_host called inside the runtime")

    graph = parse_ir("graph(%x : Tensor):\n  %y : Tensor = aten::sin(%x)\n  return (%y)\n")
    compiled = compile_graph(graph, NoCrossing("nocrossing", np))
    (result,) = compiled.call_on_device(X)
    np.testing.assert_allclose(result, torch.sin(torch.from_numpy(X)).numpy(), rtol=1e-7)
    with pytest.raises(AssertionError, match="inside the runtime"):
        compiled(X)
