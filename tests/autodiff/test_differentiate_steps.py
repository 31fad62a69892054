"""differentiate records its steps by their records in the pipeline table, in order."""

from __future__ import annotations

from gradview.autodiff import differentiate
from gradview.autodiff.differentiate import DIFFERENTIATE_STEPS
from gradview.ir import parse_ir
from gradview.ir.passes.registry import Phase

GRAPH = """graph(%x : Float(3, 4, requires_grad=1), %w : Float(3, 4, requires_grad=1)):
  %y : Float(3, 4, requires_grad=1) = aten::mul(%x, %w)
  %z : Float(3, 4, requires_grad=1) = aten::sin(%y)
  return (%z)
"""


def test_differentiate_records_the_tables_steps_in_order() -> None:
    names: list[str] = []
    differentiate(parse_ir(GRAPH), lambda name, *_: names.append(name))
    assert names == [info.name for info in DIFFERENTIATE_STEPS]
    assert {info.phase for info in DIFFERENTIATE_STEPS} == {Phase.DIFFERENTIATE}
