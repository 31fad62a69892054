"""The recurrent and attention ops as real modules use them: one training step through gradview.

Each module (LSTMCell, GRUCell, LSTM, GRU with their variants, MultiheadAttention,
TransformerEncoderLayer, TransformerDecoderLayer) goes through ``from_torch`` (traced, and
scripted where the graph holds the op: the tracer records the cells by their decomposition),
runs in GraphExecutor with every floating-point input and parameter requiring grad, in both
autodiff modes (PyTorch's: the recurrent ops run through eager autograd with gradview's
formulas; extended: they join DifferentiableGraphs), and its outputs and every gradient equal
eager PyTorch's to 1e-6 in float64.

The graphs return nested tuples; the test unpacks them into separate graph outputs so that
each output comes back as a Tensor connected to autograd.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from gradview.ir import Graph, TupleType, Value, from_torch
from gradview.runtime import Tensor
from gradview.runtime.autograd import grad
from gradview.runtime.executor import GraphExecutor


def _r(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.float64)


class _WithStates(nn.Module):
    """A recurrent layer called with initial states given as separate inputs."""

    def __init__(self, layer: nn.Module) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor | None = None) -> Any:
        return self.layer(x, h if c is None else (h, c))


class _Scripted(nn.Module):
    """Calls the scripted cell with both states (LSTMCell's optional hx)."""

    def __init__(self, cell: nn.Module) -> None:
        super().__init__()
        self.cell = cell

    def forward(
        self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        hy, cy = self.cell(x, (h, c))
        return hy, cy


CASES: dict[str, tuple[Callable[[], nn.Module], Callable[[], tuple], tuple[str, ...]]] = {
    "LSTMCell": (lambda: nn.LSTMCell(4, 5), lambda: (_r(2, 4),), ("script",)),
    "LSTMCell-states-nobias": (
        lambda: _Scripted(nn.LSTMCell(4, 5, bias=False)),
        lambda: (_r(2, 4), _r(2, 5), _r(2, 5)),
        ("script",),
    ),
    "GRUCell": (lambda: nn.GRUCell(4, 5), lambda: (_r(2, 4), _r(2, 5)), ("script",)),
    "LSTM": (lambda: nn.LSTM(4, 5), lambda: (_r(3, 2, 4),), ("trace", "script")),
    "LSTM-2layers-bidirectional-batch_first": (
        lambda: nn.LSTM(4, 5, num_layers=2, bidirectional=True, batch_first=True),
        lambda: (_r(2, 3, 4),),
        ("trace", "script"),
    ),
    "LSTM-states-proj-nobias": (
        lambda: _WithStates(nn.LSTM(4, 5, num_layers=2, proj_size=3, bias=False)),
        lambda: (_r(3, 2, 4), _r(2, 2, 3), _r(2, 2, 5)),
        ("trace",),
    ),
    "GRU": (lambda: nn.GRU(4, 5), lambda: (_r(3, 2, 4),), ("trace", "script")),
    "GRU-2layers-batch_first-states": (
        lambda: _WithStates(nn.GRU(4, 5, num_layers=2, batch_first=True)),
        lambda: (_r(2, 3, 4), _r(2, 2, 5)),
        ("trace",),
    ),
    "MultiheadAttention": (
        lambda: nn.MultiheadAttention(8, 2),
        lambda: (_r(3, 2, 8), _r(4, 2, 8), _r(4, 2, 8)),
        ("trace",),
    ),
    "TransformerEncoderLayer": (
        lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
        lambda: (_r(3, 2, 8),),
        ("trace", "script"),
    ),
    "TransformerEncoderLayer-gelu-norm_first": (
        lambda: nn.TransformerEncoderLayer(
            8, 2, 16, dropout=0.0, activation="gelu", norm_first=True
        ),
        lambda: (_r(3, 2, 8),),
        ("trace", "script"),
    ),
    # Scripted with batch_first, the fast-path guards call aten::is_autocast_enabled (no kernel yet).
    "TransformerEncoderLayer-batch_first": (
        lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
        lambda: (_r(2, 3, 8),),
        ("trace",),
    ),
    "TransformerDecoderLayer": (
        lambda: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0),
        lambda: (_r(3, 2, 8), _r(4, 2, 8)),
        ("trace",),
    ),
}
PARAMS = [
    (name, how, mode)
    for name, (_, _, hows) in CASES.items()
    for how in hows
    for mode in ("torch", "extended")
]


def _build(name: str) -> tuple[nn.Module, tuple]:
    torch.manual_seed(0)
    build, inputs, _ = CASES[name]
    return build().double(), inputs()


def _unpack_tuples(graph: Graph) -> None:
    """Replace each tuple output by its elements (recursively), so each is a graph output."""

    def leaves(value: Value) -> list[Value]:
        type_ = value.type()
        if not isinstance(type_, TupleType):
            return [value]
        node = graph.create("prim::TupleUnpack", [value], len(type_.elems))
        for output, elem in zip(node.outputs(), type_.elems, strict=True):
            output.set_type(elem)
        graph.append_node(node)
        return [leaf for output in node.outputs() for leaf in leaves(output)]

    outputs = [leaf for value in graph.outputs() for leaf in leaves(value)]
    while graph.outputs():
        graph.erase_output(0)
    for value in outputs:
        graph.register_output(value)


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [item for element in value for item in _flatten(element)]
    return [value]


@pytest.mark.parametrize(("name", "how", "mode"), PARAMS, ids=["-".join(p) for p in PARAMS])
def test_training_step_matches_pytorch(name: str, how: str, mode: str) -> None:
    module, inputs = _build(name)
    graph, values = from_torch(module, inputs, how=how)
    _unpack_tuples(graph)
    module, inputs = _build(name)
    count = len(inputs) + len(list(module.parameters()))
    leaves = [i for i, v in enumerate(values[:count]) if np.asarray(v).dtype.kind == "f"]
    tensors = [
        Tensor(np.array(v), requires_grad=i in leaves) if hasattr(v, "shape") else v
        for i, v in enumerate(values)
    ]
    outputs = [o for o in GraphExecutor(graph, autodiff=mode).run(tensors) if isinstance(o, Tensor)]

    torch_inputs = [t.detach().clone().requires_grad_() for t in inputs]
    expected = [o for o in _flatten(module(*torch_inputs)) if isinstance(o, torch.Tensor)]
    assert len(outputs) == len(expected)
    for ours, theirs in zip(outputs, expected, strict=True):
        np.testing.assert_allclose(
            ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6, atol=1e-9
        )

    rng = np.random.default_rng(1)
    weights = [rng.standard_normal(tuple(e.shape)) for e in expected]
    ours_loss = sum((o * Tensor(w)).sum() for o, w in zip(outputs, weights, strict=True))
    torch_loss = sum(
        (e * torch.from_numpy(w)).sum() for e, w in zip(expected, weights, strict=True)
    )
    theirs = torch.autograd.grad(
        torch_loss, torch_inputs + list(module.parameters()), allow_unused=True
    )
    mine = grad([ours_loss], [tensors[i] for i in leaves], allow_unused=True)
    assert len(mine) == len(theirs)
    for index, ours, reference in zip(leaves, mine, theirs, strict=True):
        where = f"gradient of {graph.inputs()[index].debug_name()}"
        if reference is None:
            assert ours is None or not np.any(ours.numpy()), f"{where}: torch gives none"
            continue
        assert ours is not None, f"{where}: none"
        np.testing.assert_allclose(
            ours.numpy(), reference.numpy(), rtol=1e-6, atol=1e-9, err_msg=where
        )
