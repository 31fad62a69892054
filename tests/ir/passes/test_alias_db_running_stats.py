"""Batch norm in training writes its running statistics, as TorchScript's AliasDb
special-cases it: dead code elimination keeps it, CSE does not merge two of
them, and nothing moves a read of the statistics across it."""

from __future__ import annotations

import pytest

from gradview.ir import parse_ir
from gradview.ir.passes import eliminate_dead_code
from gradview.ir.passes.alias_db import AliasDb

BATCH_NORM = """graph(%x : Tensor, %w : Tensor, %b : Tensor, %mean : Tensor, %var : Tensor):
  %training : bool = prim::Constant[value={training}]()
  %momentum : float = prim::Constant[value=0.1]()
  %eps : float = prim::Constant[value=1e-05]()
  %cudnn : bool = prim::Constant[value=1]()
  %y : Tensor = aten::batch_norm(%x, %w, %b, %mean, %var, %training, %momentum, %eps, %cudnn)
  return (%x)
"""


@pytest.mark.parametrize(("training", "kept"), [(1, True), (0, False)])
def test_an_unused_training_batch_norm_still_runs(training: int, kept: bool) -> None:
    graph = parse_ir(BATCH_NORM.format(training=training))
    eliminate_dead_code(graph)
    assert any(node.kind() == "aten::batch_norm" for node in graph.nodes()) is kept


def test_alias_db_says_it_writes_the_statistics() -> None:
    graph = parse_ir(BATCH_NORM.format(training=1))
    node = next(n for n in graph.nodes() if n.kind() == "aten::batch_norm")
    db = AliasDb(graph)
    mean, var = graph.inputs()[3], graph.inputs()[4]
    assert db.writes(node) == {db.alias_set(mean), db.alias_set(var)}
    assert db.has_writers(mean) and not db.has_writers(graph.inputs()[0])
