"""Questions scripted modules ask at run time: ``torch.is_grad_enabled()`` and
``x.requires_grad``, which guard the fast paths of nn.MultiheadAttention and
nn.TransformerEncoderLayer."""

from __future__ import annotations

import numpy as np
import torch

from gradview.ir import parse_ir
from gradview.runtime import Tensor, run_graph
from gradview.runtime.autograd import no_grad
from gradview.runtime.executor import GraphExecutor

QUERIES = """graph(%x : Tensor):
  %g : bool = aten::is_grad_enabled()
  %r : bool = prim::requires_grad(%x)
  return (%g, %r)
"""


def torch_queries(x: torch.Tensor) -> tuple[bool, bool]:
    return torch.is_grad_enabled(), x.requires_grad


def test_grad_mode_is_read_when_the_graph_runs() -> None:
    graph = parse_ir(QUERIES)
    assert run_graph(graph, [np.zeros(2)])[0] is True
    with no_grad():
        assert run_graph(graph, [np.zeros(2)])[0] is False


def test_the_executor_answers_as_torch_script_does() -> None:
    scripted = torch.jit.script(torch_queries)
    executor = GraphExecutor(parse_ir(QUERIES))
    for requires_grad in (True, False):
        x = Tensor(np.zeros(2), requires_grad=requires_grad)
        assert tuple(executor.run([x])) == scripted(torch.zeros(2, requires_grad=requires_grad))
    with no_grad(), torch.no_grad():
        assert executor.run([Tensor(np.zeros(2))])[0] is scripted(torch.zeros(2))[0] is False
