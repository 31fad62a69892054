"""gradview.ir.script: compiled graphs run like the Python function and like torch.jit.script."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

from gradview.ir import ScriptError, lint, script
from gradview.runtime import run_graph

from . import scripted_fns as fns

RNG = np.random.default_rng(0)


def arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


CASES = {
    "mlp": (fns.mlp, lambda: [arr(4, 3), arr(3, 5), arr(5), arr(5, 2)]),
    "simple": (fns.simple, lambda: [arr(3, 4), arr(3, 4)]),
    "branch_true": (fns.branch, lambda: [arr(2, 3), True]),
    "branch_false": (fns.branch, lambda: [arr(2, 3), False]),
    "elif_neg": (fns.elif_chain, lambda: [arr(3), -2]),
    "elif_zero": (fns.elif_chain, lambda: [arr(3), 0]),
    "elif_pos": (fns.elif_chain, lambda: [arr(3), 5]),
    "for": (fns.for_accumulate, lambda: [arr(2, 2), 5]),
    "for_zero": (fns.for_accumulate, lambda: [arr(2, 2), 0]),
    "while": (fns.while_loop, lambda: [arr(3)]),
    "tuples": (fns.tuples, lambda: [arr(2, 3), arr(2, 3)]),
    "int_sizes": (fns.int_sizes, lambda: [arr(4, 6)]),
    "nested": (fns.nested_if_in_loop, lambda: [arr(2, 3), 9]),
    "reductions": (fns.reductions, lambda: [arr(3, 2)]),
    "appended": (fns.appended, lambda: [arr(2, 3), 3]),
    "for_break": (fns.for_break, lambda: [arr(2, 3), 6]),
    "for_break_early_end": (fns.for_break, lambda: [arr(2, 3), 2]),
    "for_continue": (fns.for_continue, lambda: [arr(2, 3), 6]),
    "while_true_break": (fns.while_true_break, lambda: [np.abs(arr(2, 3)) + 0.1]),
    "nested_exits_0": (fns.nested_exits, lambda: [arr(2, 3), 0]),
    "nested_exits_4": (fns.nested_exits, lambda: [arr(2, 3), 4]),
    "nested_exits_9": (fns.nested_exits, lambda: [arr(2, 3), 9]),
}


def to_torch(v):
    return torch.tensor(v) if isinstance(v, np.ndarray) else v


def assert_same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_same(g, w)
    elif isinstance(want, torch.Tensor):
        np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-5, atol=1e-5)
        assert tuple(np.shape(got)) == tuple(want.shape)
    else:
        assert got == want and type(got) is type(want)


@pytest.mark.parametrize("name", sorted(CASES))
def test_runs_like_python_and_torchscript(name):
    fn, make = CASES[name]
    inputs = make()
    compiled = script(fn)
    lint(compiled.graph)
    (got,) = run_graph(compiled.graph, inputs)
    assert_same(got, fn(*map(to_torch, inputs)))
    assert_same(got, torch.jit.script(fn)(*map(to_torch, inputs)))


def kinds(graph_nodes):
    out = []
    for node in graph_nodes:
        if node.kind() != "prim::Constant":
            out.append(node.kind())
            for block in node.blocks():
                out.append(kinds(block.nodes()))
    return out


@pytest.mark.parametrize("fn", [fns.mlp, fns.simple, fns.branch, fns.for_accumulate, fns.reductions,
                                fns.int_sizes, fns.appended])
def test_node_kinds_match_torchscript(fn):
    # (tuples differs: torch.jit.script folds a tuple literal that is unpacked again.)
    assert kinds(script(fn).graph.nodes()) == kinds(torch.jit.script(fn).graph.nodes())


def test_graph_shape_and_locations():
    graph = script(fns.for_accumulate).graph
    text = str(graph)
    _, first = inspect.getsourcelines(fns.for_accumulate)
    assert "prim::Loop" in text and "aten::zeros_like" in text
    loop = next(n for n in graph.nodes() if n.kind() == "prim::Loop")
    assert loop.source_location == f"{fns.__file__}:{first + 2}:4"
    assert all(n.source_location for n in graph.all_nodes())
    assert [v.debug_name() for v in graph.inputs()] == ["x", "n"]
    assert loop.output().debug_name() == "acc"


def test_decorator_and_compile_only():
    compiled = script(fns.simple)
    assert compiled.name == "simple" and compiled.graph.outputs()
    with pytest.raises(TypeError, match=r"gradview\.runtime\.script"):
        compiled(1, 2)


def test_runtime_script_runs_through_executor():
    from gradview.runtime import script as run_script

    x, y = arr(3, 4), arr(3, 4)
    result = run_script(fns.simple)(x, y)
    want = fns.simple(torch.tensor(x), torch.tensor(y)).numpy()
    np.testing.assert_allclose(np.asarray(getattr(result, "data", result)), want, rtol=1e-5, atol=1e-6)


def line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return first + i, line.index(text) + 1
    raise AssertionError(text)


@pytest.mark.parametrize(
    "fn, anchor, message",
    [
        (fns.bad_syntax, "with", "unsupported Python syntax: With"),
        (fns.bad_undefined, "undefined_thing", "undefined variable 'undefined_thing'"),
        (fns.bad_branch_types, "if flag", "type mismatch for 'y' in if branches"),
        (fns.bad_one_branch, "z\n", "'z' is not defined in the false branch"),
    ],
)
def test_errors_point_at_source(fn, anchor, message):
    with pytest.raises(ScriptError) as info:
        script(fn)
    line, col = line_of(fn, anchor.strip() if anchor != "z\n" else "return z")
    if anchor == "z\n":
        col += len("return ")
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith(f"{fns.__file__}:{line}:{col}: ")
    assert message in text
    assert isinstance(info.value, ValueError)


def test_calls_of_python_functions_match_torchscript():
    from gradview.ir.passes.inline import inline

    graph = script(fns.calls).graph
    lint(graph)
    # Before inlining the calls stay calls, as in torch.jit.script's graph.
    assert kinds(graph.nodes()) == kinds(torch.jit.script(fns.calls).graph.nodes())
    assert [n.s("name") for n in graph.nodes() if n.kind() == "prim::Constant" and n.has_attribute("name")] == [
        "_layer", "_scaled", "_layer", "_scaled"]
    x, w = arr(3, 3), arr(3, 3)
    assert inline(graph)
    lint(graph)
    assert not any(n.kind() == "prim::CallFunction" for n in graph.all_nodes())
    (got,) = run_graph(graph, [x, w])
    assert_same(got, torch.jit.script(fns.calls)(torch.tensor(x), torch.tensor(w)))


def test_calls_run_through_the_executor_with_gradients():
    from gradview.runtime import Tensor
    from gradview.runtime import script as run_script

    x, w = arr(3, 3).astype(np.float64), arr(3, 3).astype(np.float64)
    tw = Tensor(w, requires_grad=True)
    run_script(fns.calls)(Tensor(x), tw).sum().backward()
    want_w = torch.tensor(w, requires_grad=True)
    fns.calls(torch.tensor(x), want_w).sum().backward()
    np.testing.assert_allclose(tw.grad.numpy(), want_w.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_recursion_is_an_error_naming_the_chain():
    with pytest.raises(ScriptError, match=r"recursive call of '_ping' \(recursive -> _ping -> _pong -> _ping\)") as info:
        script(fns.recursive)
    line, _ = line_of(fns._pong, "return _ping(x)")
    assert f"{fns.__file__}:{line}:" in str(info.value)


def test_call_argument_errors():
    def g(x: torch.Tensor, n: int) -> torch.Tensor:
        return x * n

    def bad_type(x):
        return g(x, 1.5)

    def bad_kw(x):
        return g(x, m=2)

    def too_many(x):
        return g(x, 1, 2)

    def missing(x):
        return g(x)

    with pytest.raises(ScriptError, match=r"g\(\) takes 2 arguments, got 3"):
        script(too_many)
    with pytest.raises(ScriptError, match=r"g\(\) is missing argument 'n'"):
        script(missing)
    with pytest.raises(ScriptError, match=r"g\(\) expects 'n' of type int, got float"):
        script(bad_type)
    with pytest.raises(ScriptError, match=r"unexpected or repeated argument 'm'"):
        script(bad_kw)


def test_break_and_continue_lower_to_flags_and_differentiate():
    from gradview.runtime import Tensor
    from gradview.runtime import script as run_script

    graph = script(fns.nested_exits).graph
    text = str(graph)
    assert "__break" in text and "__continue" in text
    # The outer for loop ends through its condition output: not (break flag).
    outer = next(n for n in graph.nodes() if n.kind() == "prim::Loop")
    assert outer.blocks()[0].outputs()[0].node.kind() == "aten::__not__"
    x = arr(2, 3).astype(np.float64)
    tx = Tensor(x, requires_grad=True)
    run_script(fns.nested_exits)(tx, 5).sum().backward()
    want = torch.tensor(x, requires_grad=True)
    fns.nested_exits(want, 5).sum().backward()
    np.testing.assert_allclose(tx.grad.numpy(), want.grad.numpy(), rtol=1e-10)



def test_calls_of_script_functions_reuse_their_graph():
    from gradview.ir.passes.inline import inline

    scaled = script(fns._scaled)

    def caller(x: torch.Tensor) -> torch.Tensor:
        return scaled(x, 3.0) + 1

    graph = script(caller).graph
    const = next(n for n in graph.nodes() if n.kind() == "prim::Constant" and n.has_attribute("Subgraph"))
    assert const.g("Subgraph") is scaled.graph and const.s("name") == "scaled"
    before = str(scaled.graph)
    assert inline(graph)
    assert str(scaled.graph) == before  # the callee's own graph is left as it was
    x = arr(2, 2)
    (got,) = run_graph(graph, [x])
    np.testing.assert_allclose(got, x * 3.0 + 1, rtol=1e-6)
