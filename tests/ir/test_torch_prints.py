"""The pieces of TorchScript's text that gradview once could not read, each against torch.

``annotate(...)`` constants, dict attributes, ``Enum<...>`` types and members,
``[<Tensors>]`` and ``<Tensor>`` (constants of unknown value, runnable once a
value is attached), small tensors as ``at::print`` writes them, the legacy
executor's ``Tensor(*, *)``, blocks nested hundreds deep, and what torch's own
parser refuses.
"""

# No `from __future__ import annotations`: TorchScript reads the annotations below at run time.
import math
import sys
from enum import Enum
from pathlib import Path
from typing import Dict, List  # noqa: UP035 - TorchScript needs the typing names here

import numpy as np
import pytest
import torch

from gradview.ir import IRParseError, TensorType, parse_ir, parse_type
from gradview.ir.attributes import Annotated, EnumValue
from gradview.ir.constants import NOT_CONSTANT, attach_tensor_data, constant_value
from gradview.ir.types import EnumType
from gradview.runtime import run_graph
from gradview.runtime.interpreter import GraphCompileError


class Color(Enum):
    RED = 1
    GREEN = 2


class Holder(torch.nn.Module):
    """Attributes a frozen module turns into annotate(...), dict, enum and tensor-list constants."""

    empty: List[int]  # noqa: UP006
    empty_dict: Dict[str, torch.Tensor]  # noqa: UP006
    counts: Dict[str, int]  # noqa: UP006
    maybe: List[int | None]  # noqa: UP006

    def __init__(self) -> None:
        super().__init__()
        self.empty = []
        self.empty_dict = {}
        self.counts = {"a": 1, "b": 2}
        self.maybe = [1, None]
        self.color = Color.GREEN
        self.mixed = (1, 2.5, "it's")
        self.tensors = [torch.ones(2), torch.zeros(3)]

    def forward(self, x: torch.Tensor):
        return x, self.empty, self.empty_dict, self.counts, self.maybe, self.color, self.mixed, self.tensors


def constants_by_name(text: str) -> dict:
    graph = parse_ir(text)
    return {n.output().debug_name(): n for n in graph.nodes() if n.kind() == "prim::Constant"}


def test_frozen_module_constants_print_back_and_have_their_values() -> None:
    text = str(torch.jit.freeze(torch.jit.script(Holder()).eval()).graph)
    assert "annotate(List[int], [])" in text and "annotate(Dict[str, Tensor],{})" in text
    assert "annotate(List[Optional[int]], [1, None])" in text and '{"a": 1, "b": 2}' in text
    assert "[<Tensors>]" in text and "Color.GREEN" in text and "\\'" in text
    assert str(parse_ir(text)) == text
    nodes = constants_by_name(text)
    value = {name: constant_value(node.output()) for name, node in nodes.items()}
    assert value["self.empty"] == [] and value["self.empty_dict"] == {}
    assert value["self.counts"] == {"a": 1, "b": 2} and value["self.maybe"] == [1, None]
    assert value["self.mixed"] == (1, 2.5, "it's")
    assert isinstance(nodes["self.empty"].attribute("value"), Annotated)
    color = value["self.color"]
    assert isinstance(color, EnumValue) and color.name == "GREEN"
    assert isinstance(nodes["self.color"].output().type(), EnumType)
    assert value["self.tensors"] is NOT_CONSTANT  # torch never prints a tensor list's data


def test_enum_types_print_back() -> None:
    def pick(x: torch.Tensor, c: Color) -> torch.Tensor:
        if c == Color.RED:
            return x + 1
        return x

    text = str(torch.jit.script(pick).graph)
    assert "Enum<__torch__." in text
    graph = parse_ir(text)
    assert str(graph) == text
    assert isinstance(graph.inputs()[1].type(), EnumType)
    assert str(parse_type("Enum<__torch__.a.Color>?")) == "Enum<__torch__.a.Color>?"


def test_profile_ivalue_dict_attribute() -> None:
    # As the profiling executor prints an Optional argument (see tests/loaders/test_jit_log.py).
    text = (
        "graph(%x : Tensor?):\n"
        '  %1 : Tensor? = prim::profile_ivalue[none_counts={"num_none": 0, "num_present": 1}](%x)\n'
        "  return (%1)\n"
    )
    graph = parse_ir(text)
    assert str(graph) == text
    (node,) = graph.nodes()
    assert node.attribute("none_counts") == {"num_none": 0, "num_present": 1}


def test_scope_survives_copies() -> None:
    seq = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
    text = str(torch.jit.trace(seq, (torch.randn(4, 3),)).inlined_graph)
    graph = parse_ir(text)
    assert str(graph.copy()) == text == str(graph)
    assert "__module.1" in {n.scope for n in graph.nodes()}


def torch_constant_text(tensor: torch.Tensor) -> str:
    """torch's print of a graph holding ``tensor`` as a constant."""
    graph = torch._C.Graph()
    node = graph.create("prim::Constant")
    node.t_("value", tensor)
    node.output().setType(torch._C.TensorType.create_from_tensor(tensor))
    graph.insertNode(node)
    graph.registerOutput(node.output())
    return str(graph)


def small_tensors() -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    shapes = [(0,), (2,), (7,), (10,), (2, 3), (1, 10), (5, 2), (0, 3), (2, 1, 3), (2, 2, 2), (1, 2, 1, 5)]
    tensors = []
    for shape in shapes:
        base = torch.randn(shape, generator=generator, dtype=torch.float64)
        for scale in (1.0, 1e-6, 1e8, 1e-120):
            tensors += [base * scale, (base * scale).float()]
        tensors += [(base * 100).round(), (base * 1e11).round(), (base * 100).long(), base > 0]
        if base.numel():
            special = base.clone()
            special.view(-1)[0] = math.inf
            tensors.append(special)
    return [t for t in tensors if t.numel() != 1]


@pytest.mark.parametrize("index", range(len(small_tensors())))
def test_printed_tensor_constants(index: int) -> None:
    tensor = small_tensors()[index]
    text = torch_constant_text(tensor)
    assert str(parse_ir(text)) == text
    node = next(parse_ir(text).nodes())
    value = constant_value(node.output())
    # Whole numbers print exactly (%g); four decimals, scales and %.4e lose digits.
    body = text.split("value=", 1)[1].split("[ CPU", 1)[0]
    printed = [tok for tok in body.split() if tok not in ("=", "Columns", "to") and not tok.startswith("(")]
    if all(tok.lstrip("-").isdigit() or tok.lstrip("-") in ("inf", "nan") for tok in printed):
        assert value is not NOT_CONSTANT
        assert value.sizes == tuple(tensor.shape)
        expected = tensor.double().reshape(-1).tolist()
        assert list(value.values) == expected
        assert [math.copysign(1, v) for v in value.values] == [math.copysign(1, v) for v in expected]
    else:
        assert value is NOT_CONSTANT


def test_unknown_tensor_constants_name_the_node_and_take_attached_values() -> None:
    torch.manual_seed(0)
    module = torch.nn.Linear(4, 3).double().eval()
    frozen = torch.jit.freeze(torch.jit.script(module))
    graph = parse_ir(str(frozen.graph))
    nodes = {n.output().debug_name(): n for n in graph.nodes() if n.kind() == "prim::Constant"}
    x = np.random.default_rng(0).standard_normal((2, 4))
    with pytest.raises(GraphCompileError, match=r"cannot run `%self\.(weight|bias) : .*<Tensor>|rounded"):
        run_graph(graph, [None, x])
    attach_tensor_data(nodes["self.weight"], module.weight.detach().numpy())
    attach_tensor_data(nodes["self.bias"], module.bias.detach().numpy())
    assert constant_value(nodes["self.weight"].output()) is NOT_CONSTANT  # passes still may not fold it
    assert str(graph) == str(frozen.graph)  # and it prints as torch printed it
    (out,) = run_graph(graph, [None, x])
    np.testing.assert_allclose(out, module(torch.from_numpy(x)).detach().numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="shape"):
        attach_tensor_data(nodes["self.weight"], np.zeros((2, 2)))


def test_tensor_list_constants_take_attached_values() -> None:
    text = "graph():\n  %ts : Tensor[] = prim::Constant[value=[<Tensors>]]()\n  return (%ts)\n"
    graph = parse_ir(text)
    assert str(graph) == text
    node = next(graph.nodes())
    with pytest.raises(GraphCompileError, match=r"\[<Tensors>\]"):
        run_graph(graph, [])
    attach_tensor_data(node, [np.ones(2), np.zeros(3)])
    (out,) = run_graph(graph, [])
    assert [a.tolist() for a in out] == [[1.0, 1.0], [0.0, 0.0, 0.0]]
    assert str(graph) == text


@pytest.mark.parametrize(
    "text, sizes",
    [("Tensor(*, *)", (None, None)), ("Tensor(3, *, requires_grad=0)", (3, None)), ("Tensor()", ()),
     ("Tensor(requires_grad=0)", None), ("Float(*, *)", (None, None))],
)
def test_legacy_dtype_less_tensor_types(text: str, sizes: tuple | None) -> None:
    parsed = parse_type(text)
    assert isinstance(parsed, TensorType) and parsed.sizes == sizes
    assert str(parsed) == text


def nested_ifs(depth: int) -> str:
    """``depth`` ifs, each inside the previous one's block0 (indented: torch's parser needs it)."""
    lines = ["graph(%c : bool,\n      %x : Tensor):\n"]
    for i in range(depth):
        pad = "  " * (2 * i + 1)
        lines.append(f"{pad}%y{i} : Tensor = prim::If(%c)\n{pad}  block0():\n")
    lines.append("  " * (2 * depth + 1) + "%z : Tensor = aten::relu(%x)\n")
    inner = "%z"
    for i in reversed(range(depth)):
        pad = "  " * (2 * i + 1)
        lines.append(f"{pad}    -> ({inner})\n{pad}  block1():\n{pad}    -> (%x)\n")
        inner = f"%y{i}"
    return "".join(lines) + "  return (%y0)\n"


@pytest.mark.parametrize("depth", [200, 500])
def test_deeply_nested_blocks_print_back(depth: int) -> None:
    reference = str(torch._C.parse_ir(nested_ifs(depth)))  # torch reads and prints it
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(250)  # the parser and the printer must not recurse per block
    try:
        ours = str(parse_ir(reference))
    finally:
        sys.setrecursionlimit(limit)
    assert ours == reference


@pytest.mark.parametrize(
    "text, message",
    [
        ("graph(%x : Float(3, -1)):\n  return (%x)\n", "a tensor size cannot be negative"),
        ("graph(%x : Tensor):\n  %a : Tensor, %b : Tensor = aten::relu(%x)\n  return (%a)\n",
         "aten::relu returns 1 value, not 2"),
    ],
)
def test_what_torch_refuses_is_refused(text: str, message: str) -> None:
    with pytest.raises(RuntimeError):
        torch._C.parse_ir(text)
    with pytest.raises(IRParseError, match=message):
        parse_ir(text)


# A few of torch 2.13's prints kept as files (made by the code above and by the logs of
# tests/loaders/test_jit_log.py), read without torch: each prints back byte for byte.
PRINTS = sorted((Path(__file__).resolve().parents[1] / "data" / "torch_prints").glob("*.ir"))


def test_the_kept_prints_are_there() -> None:
    assert {p.name for p in PRINTS} >= {
        "trace_inlined_conv_bn_relu.ir", "freeze_script_linear.ir", "freeze_trace_lstm_2layers.ir",
        "freeze_script_constants.ir", "legacy_executor_dtype_less.ir", "profiling_executor_profile_ivalue.ir",
    }


@pytest.mark.parametrize("path", PRINTS, ids=lambda p: p.name)
def test_kept_prints_print_back(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert str(parse_ir(text)) == text
