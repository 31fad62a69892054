"""Every graph torch makes of the common nn modules parses and prints back byte for byte.

For each module of ``tests/runtime/nn_modules.py``, generated live from torch:
``torch.jit.script`` (every method's graph: a scripted LSTM's ``forward__0``
and ``forward__1`` too), ``torch.jit.trace`` (``graph`` and ``inlined_graph``,
whose nodes end in ``, scope: __module...``) and ``torch.jit.freeze`` of the
scripted and the traced module (``<Tensor>``, ``[<Tensors>]``, small tensors
as ``at::print`` writes them). gradview's print of its parse equals torch's
print; where torch can read the text back, it reads gradview's print to the
same graph. Parsing never needs a kernel for the op.
"""

from __future__ import annotations

import functools

import pytest
import torch

from gradview.ir import parse_ir

from ..runtime.nn_modules import CASES, build_case


def torch_print(text: str) -> str | None:
    """torch's print of its own parse of ``text``, or None where torch cannot read it."""
    try:
        return str(torch._C.parse_ir(text))
    except RuntimeError:
        return None


def check_round_trip(text: str, where: str) -> None:
    ours = str(parse_ir(text))
    assert ours == text, where
    reference = torch_print(text)
    if reference is not None:
        assert torch_print(ours) == reference, where


# torch.jit.freeze looks for `forward`; a scripted LSTM or GRU only has forward__0 and forward__1.
FREEZE_REFUSED: dict[str, str] = {}


@functools.cache
def torch_graphs(name: str) -> dict[str, str]:
    """The text of every graph torch makes of module ``name``, by form."""
    graphs: dict[str, str] = {}
    module, inputs = build_case(name)
    scripted = torch.jit.script(module)
    for method in scripted._c._method_names():
        graphs[f"script.{method}"] = str(scripted._c._get_method(method).graph)
    traced = torch.jit.trace(module, inputs, check_trace=False)
    graphs["trace.graph"] = str(traced.graph)
    graphs["trace.inlined_graph"] = str(traced.inlined_graph)
    module.eval()
    try:
        graphs["freeze(script)"] = str(torch.jit.freeze(torch.jit.script(module)).graph)
    except RuntimeError as exc:
        FREEZE_REFUSED[name] = str(exc).strip().splitlines()[0]
    graphs["freeze(trace)"] = str(torch.jit.freeze(torch.jit.trace(module, inputs, check_trace=False)).graph)
    return graphs


@pytest.mark.parametrize("name", sorted(CASES))
def test_module_graphs_print_back(name: str) -> None:
    graphs = torch_graphs(name)
    for form, text in graphs.items():
        check_round_trip(text, f"{name} {form}")


def test_the_forms_hold_what_the_parser_must_read() -> None:
    """The generated texts do contain the constructs this file is about (so the test can fail)."""
    texts = {name: torch_graphs(name) for name in ("Linear", "Conv2d+BatchNorm2d", "LSTM", "MultiheadAttention")}
    # A traced Sequential's inlined graph carries each child's scope; gradview keeps it.
    inlined = texts["Conv2d+BatchNorm2d"]["trace.inlined_graph"]
    assert ", scope: __module.0 #" in inlined
    scopes = {n.scope for n in parse_ir(inlined).nodes() if n.scope}
    assert {"__module.0", "__module.1", "__module.2"} <= scopes
    # Frozen weights: <Tensor>, small biases as at::print writes them, and tensor lists.
    assert "prim::Constant[value=<Tensor>]()" in texts["Linear"]["freeze(script)"]
    assert "[ CPUDoubleType{3} ]]()" in texts["Linear"]["freeze(script)"]
    assert "prim::Constant[value=[<Tensors>]]()" in texts["LSTM"]["freeze(trace)"]
    # A scripted LSTM's forward is overloaded: forward__0 (a tensor) and forward__1 (a PackedSequence).
    assert {"script.forward__0", "script.forward__1"} <= set(texts["LSTM"])
    for name in CASES:
        torch_graphs(name)
    assert set(FREEZE_REFUSED) == {n for n in CASES if n.startswith(("LSTM", "GRU")) and "Cell" not in n}
    assert set(FREEZE_REFUSED.values()) == {"Method 'forward' is not defined."}
    assert "prim::Constant[value=-inf]()" in texts["MultiheadAttention"]["freeze(script)"]


def test_parsing_needs_no_kernel() -> None:
    text = "graph(%x : Tensor):\n  %y : Tensor = mylib::no_such_kernel(%x)\n  return (%y)\n"
    assert str(parse_ir(text)) == text
