"""Buffer reuse in generated code: ``out=`` only where no one can see the overwrite."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.runtime import compile_graph, run_graph

HEADER = "graph(%x : Double(*, *), %w : Double(*, *), %b : Double(*), %v : Double(*)):\n"


def _run_both(body: str, inputs: list[np.ndarray]) -> tuple[str, list[object]]:
    text = HEADER + body
    compiled = compile_graph(parse_ir(text))
    ours = compiled(*[a.copy() for a in inputs])
    theirs = torch._C._jit_interpret_graph(torch._C.parse_ir(text), tuple(torch.tensor(a) for a in inputs))
    theirs = list(theirs) if isinstance(theirs, tuple) else [theirs]
    for mine, reference in zip(ours, theirs, strict=True):
        if isinstance(reference, torch.Tensor):
            np.testing.assert_allclose(mine, reference.numpy(), rtol=1e-12)
        else:
            assert mine == reference
    return compiled.source, ours


def _inputs(batch: int = 3, width: int = 3) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [rng.standard_normal((batch, width)), rng.standard_normal((width, width)),
            rng.standard_normal(width), rng.standard_normal(width)]


def test_matmul_result_feeds_add_and_tanh_in_place() -> None:
    source, _ = _run_both(
        "  %one : int = prim::Constant[value=1]()\n"
        "  %m : Double(*, *) = aten::matmul(%x, %w)\n"
        "  %s : int[] = aten::size(%m)\n"
        "  %a : Double(*, *) = aten::add(%m, %b, %one)\n"
        "  %h : Double(*, *) = aten::tanh(%a)\n"
        "  return (%h, %s)\n",
        _inputs(),
    )
    assert source.count("out=") == 2  # the add writes into %m, the tanh into %a


@pytest.mark.parametrize(
    ("body", "reuses"),
    [
        # %m is returned: the caller sees it.
        ("  %m : Double(*, *) = aten::matmul(%x, %w)\n  %h : Double(*, *) = aten::tanh(%m)\n  return (%h, %m)\n", 0),
        # %m sits in a list built before the tanh: the list would see the overwrite.
        ("  %m : Double(*, *) = aten::matmul(%x, %w)\n  %l : Tensor[] = prim::ListConstruct(%m)\n"
         "  %h : Double(*, *) = aten::tanh(%m)\n  %zero : int = prim::Constant[value=0]()\n"
         "  %c : Tensor = aten::cat(%l, %zero)\n  return (%h, %c)\n", 0),
        # A view of %m (its transpose) is read after the tanh; only the add
        # may write into %h, which nothing else sees.
        ("  %m : Double(*, *) = aten::matmul(%x, %w)\n  %t : Double(*, *) = aten::t(%m)\n"
         "  %h : Double(*, *) = aten::tanh(%m)\n  %one : int = prim::Constant[value=1]()\n"
         "  %r : Double(*, *) = aten::add(%h, %t, %one)\n  return (%r)\n", 1),
        # %m is read again by a later op: only that last reader may overwrite it.
        ("  %m : Double(*, *) = aten::matmul(%x, %w)\n  %h : Double(*, *) = aten::tanh(%m)\n"
         "  %e : Double(*, *) = aten::exp(%m)\n  return (%h, %e)\n", 1),
        # %x is the caller's input.
        ("  %h : Double(*, *) = aten::tanh(%x)\n  return (%h)\n", 0),
    ],
    ids=["returned", "in-a-list", "viewed", "read-later", "graph-input"],
)
def test_no_reuse_where_the_old_value_is_still_visible(body: str, reuses: int) -> None:
    # _run_both compares every output with TorchScript's: an overwrite that
    # something could still see would show up there.
    inputs = _inputs()
    kept = [a.copy() for a in inputs]
    source, _ = _run_both(body, inputs)
    assert source.count("out=") == reuses
    for before, after in zip(kept, inputs, strict=True):
        np.testing.assert_array_equal(before, after)


def test_use_inside_a_nested_block_blocks_reuse() -> None:
    source, _ = _run_both(
        "  %m : Double(*, *) = aten::matmul(%x, %w)\n"
        "  %h : Double(*, *) = aten::tanh(%m)\n"
        "  %c : bool = prim::Constant[value=1]()\n"
        "  %r : Tensor = prim::If(%c)\n"
        "    block0():\n      -> (%m)\n"
        "    block1():\n      -> (%h)\n"
        "  return (%r, %h)\n",
        _inputs(),
    )
    assert "out=" not in source


def test_broadcast_that_grows_the_result_falls_back_to_a_fresh_array() -> None:
    # %m is a vector here; adding a matrix makes a matrix, which cannot go into %m.
    text = (
        "graph(%v : Double(*), %w : Double(*, *), %x : Double(*, *)):\n"
        "  %one : int = prim::Constant[value=1]()\n"
        "  %m : Double(*) = aten::matmul(%v, %w)\n"
        "  %a : Double(*, *) = aten::add(%m, %x, %one)\n"
        "  return (%a)\n"
    )
    rng = np.random.default_rng(1)
    v, w, x = rng.standard_normal(3), rng.standard_normal((3, 3)), rng.standard_normal((5, 3))
    compiled = compile_graph(parse_ir(text))
    assert "out=" in compiled.source
    (ours,) = compiled(v, w, x)
    np.testing.assert_allclose(ours, (v @ w) + x, rtol=1e-12)


def test_scalar_matmul_result_is_not_used_as_a_buffer() -> None:
    # A vector dot vector gives a NumPy scalar, which cannot take out=.
    text = (
        "graph(%a : Double(*), %b : Double(*)):\n"
        "  %d : Double() = aten::matmul(%a, %b)\n"
        "  %h : Double() = aten::tanh(%d)\n"
        "  return (%h)\n"
    )
    (ours,) = run_graph(parse_ir(text), [np.arange(3.0), np.ones(3)])
    assert float(ours) == pytest.approx(np.tanh(3.0))
