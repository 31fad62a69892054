"""Calls of Python functions (``^fn[](...)(%x)``, torch's prim::PythonOp) against torch.

A scripted function calling an ``@torch.jit.ignore`` function, with and without
arguments, with a tuple of results, inside an If; and a traced
``autograd.Function`` with attributes and scalar arguments. gradview reads each
graph torch prints, prints it back as torch does, keeps the function's name,
and refuses to run it in one line naming the function.
"""

# No `from __future__ import annotations`: TorchScript reads the annotations below at run time.
import re
from typing import Tuple  # noqa: UP035 - TorchScript needs the typing name here

import numpy as np
import pytest
import torch

from gradview.ir import IRParseError, lint, parse_ir, print_graph
from gradview.ir.python_op import PYTHON_OP, python_function_name
from gradview.runtime import Tensor, run_graph
from gradview.runtime.interpreter import GraphCompileError


@torch.jit.ignore
def python_add_one(x: torch.Tensor) -> torch.Tensor:
    return x + 1


@torch.jit.ignore
def python_zeros() -> torch.Tensor:
    return torch.zeros(2)


@torch.jit.ignore
def python_pair(x: torch.Tensor, n: int) -> Tuple[torch.Tensor, torch.Tensor]:  # noqa: UP006
    return x, x * n


def calls_with_argument(x: torch.Tensor) -> torch.Tensor:
    return python_add_one(x)


def calls_without_arguments(x: torch.Tensor) -> torch.Tensor:
    return python_zeros() + x


def calls_with_two_results(x: torch.Tensor) -> torch.Tensor:
    a, b = python_pair(x, 3)
    return a * b


def calls_in_a_branch(x: torch.Tensor, c: bool) -> torch.Tensor:
    if c:  # noqa: SIM108 - an If block in the graph, as a user writes it
        y = python_add_one(x)
    else:
        y = x
    return y


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k, name):  # torch's autograd.Function signature
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g, None, None


def _traced_function_text() -> str:
    graph = torch.jit.trace(lambda x: Scale.apply(x, 2.5, "s") + 1, torch.ones(2, 3)).graph
    # A traced Function's Subgraph prints as <Graph>, which nobody can read back
    # (gradview says so in one line: tested below); the rest of the node is kept.
    return str(graph).replace(", Subgraph=<Graph>", "")


SCRIPTED = {
    "with_argument": (calls_with_argument, "python_add_one"),
    "without_arguments": (calls_without_arguments, "python_zeros"),
    "with_two_results": (calls_with_two_results, "python_pair"),
    "in_a_branch": (calls_in_a_branch, "python_add_one"),
}


def _python_ops(graph: object) -> list:
    found = []
    stack = [graph.block]  # type: ignore[attr-defined]
    while stack:
        for node in stack.pop().nodes():
            if node.kind() == PYTHON_OP:
                found.append(node)
            stack.extend(node.blocks())
    return found


@pytest.mark.parametrize("name", list(SCRIPTED))
def test_a_scripted_python_call_reads_and_prints_back_as_torch_prints_it(name: str) -> None:
    fn, python_name = SCRIPTED[name]
    text = str(torch.jit.script(fn).graph)
    assert "^" + python_name in text
    graph = parse_ir(text)
    lint(graph)
    assert print_graph(graph) == text
    (node,) = _python_ops(graph)
    assert python_function_name(node) == python_name
    assert node.attribute_names() == []


def test_a_traced_autograd_function_keeps_its_attributes_and_scalar_arguments() -> None:
    text = _traced_function_text()
    assert re.search(r'\^Scale\[inplace=0, module="[\w.]+"\]\(2\.5, s\)\(%x\)', text), text
    graph = parse_ir(text)
    assert print_graph(graph) == text
    (node,) = _python_ops(graph)
    assert python_function_name(node) == "Scale"
    assert sorted(node.attribute_names()) == ["inplace", "module"]


def test_a_traced_functions_subgraph_is_refused_in_one_line() -> None:
    graph = torch.jit.trace(lambda x: Scale.apply(x, 2.5, "s") + 1, torch.ones(2, 3)).graph
    with pytest.raises(IRParseError, match="<Graph> attributes cannot be read back"):
        parse_ir(str(graph))


@pytest.mark.parametrize("name", ["with_argument", "in_a_branch"])
def test_running_a_python_call_is_refused_naming_the_function(name: str) -> None:
    fn, python_name = SCRIPTED[name]
    graph = parse_ir(str(torch.jit.script(fn).graph))
    inputs: list = [Tensor(np.ones(3))] + ([True] if name == "in_a_branch" else [])
    with pytest.raises(GraphCompileError) as caught:
        run_graph(graph, inputs)
    message = str(caught.value)
    assert "\n" not in message
    assert f"it calls the Python function {python_name}, which only PyTorch can run" in message
    assert f"^{python_name}[]()" in message


@pytest.mark.parametrize("text, where", [
    ("graph(%x : Tensor):\n  %y : Tensor = ^(%x)\n  return (%y)\n", "2:18"),
    ("graph(%x : Tensor):\n  %y : Tensor = aten::relu(^x)\n  return (%y)\n", "2:28"),
    ("graph(%x : Tensor):\n  %y : Tensor = ^fn[]((%x)\n  return (%y)\n", "2:22"),
])
def test_a_caret_out_of_place_is_an_error_naming_the_place(text: str, where: str) -> None:
    with pytest.raises(IRParseError) as caught:
        parse_ir(text)
    assert str(caught.value).startswith(where), str(caught.value)
