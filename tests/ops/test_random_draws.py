"""Which ops draw random values is one fact of the op library, read the same way
from an IR graph (the op tests) and from a trace's records (the runtime and viewer)."""

from __future__ import annotations

import pytest

from gradview.ir import parse_ir
from gradview.ops import KERNELS, RANDOM, node_draws_random_values
from gradview.runtime import PassTrace, graph_draws_random_values


def _graph(call: str, constants: str = "") -> str:
    return f"graph(%x : Double(3, 4)):\n{constants}  %y : Tensor = {call}\n  return (%y)\n"


_P = "  %p : float = prim::Constant[value=0.5]()\n  %zero : float = prim::Constant[value=0.]()\n"
_B = "  %yes : bool = prim::Constant[value=1]()\n  %no : bool = prim::Constant[value=0]()\n"


@pytest.mark.parametrize(
    ("text", "draws"),
    [
        (_graph("aten::dropout(%x, %p, %yes)", _P + _B), True),
        (_graph("aten::dropout(%x, %p, %no)", _P + _B), False),
        (_graph("aten::dropout(%x, %zero, %yes)", _P + _B), False),
        (_graph("aten::dropout_(%x, %p, %yes)", _P + _B), True),
        (_graph("aten::rand_like(%x)"), True),
        (_graph("aten::bernoulli(%x)"), True),
        (_graph("aten::sin(%x)"), False),
    ],
)
def test_an_ir_graph_and_its_records_say_the_same(text: str, draws: bool) -> None:
    graph = parse_ir(text)
    step = PassTrace().record("Input", graph)
    assert step is not None
    assert any(node_draws_random_values(node) for node in graph.all_nodes()) is draws
    assert graph_draws_random_values(step.graph) is draws


def test_random_kinds_that_gradview_runs_have_kernels_declared_beside_them() -> None:
    """The fact sits with the op: a random kind with a kernel is declared in the kernel's module."""
    from gradview.ops.registry import DECLARED_IN

    kernel_modules = {name.split(".", 1)[0]: module for name, module in DECLARED_IN["kernel"].items()}
    assert RANDOM and any(kind.split(".", 1)[0] in kernel_modules for kind in RANDOM)
    misplaced = {
        kind: (DECLARED_IN["random"][kind], kernel_modules[kind])
        for kind in RANDOM
        if kind in kernel_modules and DECLARED_IN["random"][kind] != kernel_modules[kind]
    }
    assert not misplaced, misplaced
    assert all(not kind.startswith("aten::") or "." not in kind for kind in RANDOM), "kinds, not overloads"
    assert KERNELS  # the op library loaded
