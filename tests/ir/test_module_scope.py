"""Module paths read from the scopes PyTorch's tracer prints, checked against torch's own."""

from __future__ import annotations

import pytest

from gradview.ir import parse_ir
from gradview.ir.module_scope import (
    ancestors,
    module_path,
    owner_of_parameter,
    parent_path,
    scope_text,
)


def test_a_scope_reads_as_the_dotted_module_path() -> None:
    assert module_path("__module.layer1/__module.layer1.0/__module.layer1.0.conv1") == "layer1.0.conv1"
    assert module_path("__module.fc") == "fc"
    assert module_path(None) == "" and module_path("") == ""


def test_scope_text_and_module_path_are_inverse() -> None:
    for path in ("fc", "layer1.0", "layer1.0.downsample.1"):
        assert module_path(scope_text(path)) == path
    assert scope_text("") is None


def test_parents_ancestors_and_parameter_owners() -> None:
    assert parent_path("layer1.0.conv1") == "layer1.0" and parent_path("fc") == "" and parent_path("") is None
    assert ancestors("layer1.0.conv1") == ["layer1", "layer1.0", "layer1.0.conv1"]
    modules = frozenset({"layer1", "layer1.0", "layer1.0.conv1", "fc"})
    assert owner_of_parameter("layer1.0.conv1.weight", modules) == "layer1.0.conv1"
    assert owner_of_parameter("fc.bias", modules) == "fc"
    assert owner_of_parameter("layer1.0.conv1.weight.1", modules) == "layer1.0.conv1"  # a renamed copy
    assert owner_of_parameter("x", modules) == ""  # an undotted input: the model's own
    assert owner_of_parameter("head.weight", modules) is None  # not a known module


def test_the_parser_keeps_each_nodes_scope() -> None:
    graph = parse_ir(
        "graph(%x : Tensor):\n"
        "  %y : Tensor = aten::relu(%x), scope: __module.layer1/__module.layer1.0\n"
        "  return (%y)\n"
    )
    (node,) = list(graph.nodes())
    assert module_path(node.scope) == "layer1.0"


def test_module_paths_of_a_traced_model_are_torchs_named_modules() -> None:
    torch = pytest.importorskip("torch")
    from gradview.ir import from_torch

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):  # a torch module
            return torch.relu(self.lin(x))

    model = torch.nn.Sequential(Block(), Block(), torch.nn.Linear(4, 2)).double()
    graph, _ = from_torch(model, (torch.randn(3, 4, dtype=torch.float64),))
    named = {name for name, _ in model.named_modules() if name}
    seen = {module_path(node.scope) for node in graph.nodes() if node.scope}
    # Every module path a node names is one of torch's, and every leaf module that runs ops is named.
    assert seen <= named
    assert {"0.lin", "1.lin", "2"} <= seen
