"""Graphs the fuzzer found crashing deep inside gradview (issue 25): each is now
read, copied and passed through the pipelines, or refused in one line naming the node."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.ir import IRParseError, IRVerifyError, check_argument_counts, parse_ir
from gradview.ir.passes.batch_mm import batch_mm
from gradview.ir.passes.constant_pooling import constant_pooling

DATA = Path(__file__).resolve().parents[1] / "data" / "torch_prints"

TENSOR_LIST = """graph(%x : Tensor):
  %t : Tensor[] = prim::Constant[value=[<Tensors>]]()
  return (%t)
"""


def test_a_tensor_list_constant_without_data_copies_as_it_prints() -> None:
    graph = parse_ir(TENSOR_LIST)
    assert str(graph.copy()) == str(graph)


def test_constant_pooling_takes_dicts_and_annotated_lists() -> None:
    graph = parse_ir((DATA / "freeze_script_constants.ir").read_text())
    before = str(graph)
    constant_pooling(graph)
    assert str(graph).count("prim::Constant") == before.count("prim::Constant")  # no two are equal


def test_equal_dict_constants_are_pooled() -> None:
    graph = parse_ir("""graph():
  %a : Dict(str, int) = prim::Constant[value={"a": 1}]()
  %b : Dict(str, int) = prim::Constant[value={"a": 1}]()
  return (%a, %b)
""")
    assert constant_pooling(graph)
    assert str(graph).count("prim::Constant") == 1


def test_a_differentiable_graph_without_its_subgraph_is_refused_where_it_is_read() -> None:
    with pytest.raises(IRParseError, match=r"^2:3: prim::DifferentiableGraph needs a Subgraph"):
        parse_ir("""graph(%x : Tensor):
  %y : Tensor = prim::DifferentiableGraph(%x)
  return (%y)
""")


MM_ONE_INPUT = """graph(%x : Float(3, 3, strides=[3, 1], device=cpu)):
  %y : Tensor = aten::mm(%x)
  return (%y)
"""


def test_an_argument_count_no_overload_takes_is_refused_naming_the_node() -> None:
    with pytest.raises(IRVerifyError, match=r"aten::mm takes 2, 3 or 4 inputs, this node passes 1: at `%y"):
        check_argument_counts(parse_ir(MM_ONE_INPUT))


def test_counts_with_defaults_and_varargs_are_accepted() -> None:
    check_argument_counts(parse_ir("""graph(%x : Tensor, %y : Tensor):
  %s : Tensor = aten::sum(%x)
  %l : Tensor[] = prim::ListConstruct(%x, %y, %x)
  %c : Tensor = aten::cat(%l)
  return (%s, %c)
"""))


def test_batch_mm_leaves_an_mm_no_overload_takes() -> None:
    graph = parse_ir(MM_ONE_INPUT)
    assert batch_mm(graph) is False


@pytest.mark.parametrize("size", ["9223372036854775808", "99999999999999999999"])
def test_sizes_beyond_int64_are_refused_by_the_parser(size: str) -> None:
    with pytest.raises(IRParseError, match="cannot exceed int64"):
        parse_ir(f"graph(%x : Double({size}, 3, strides=[3, 1], device=cpu)):\n  return (%x)\n")


def test_the_largest_int64_size_parses() -> None:
    graph = parse_ir("graph(%x : Double(9223372036854775807, strides=[1], device=cpu)):\n  return (%x)\n")
    assert graph.inputs()[0].type().sizes == (2**63 - 1,)


def _nested_ifs(depth: int) -> str:
    lines = ["graph(%c : bool, %x : Tensor):"]
    for d in range(depth):
        lines += [f"  %r{d} : Tensor = prim::If(%c)", "    block0():"]
    lines.append(f"  %r{depth} : Tensor = aten::neg(%x)")
    for d in reversed(range(depth)):
        lines += [f"    -> (%r{d + 1})", "    block1():", "    -> (%x)"]
    return "\n".join([*lines, "  return (%r0)"]) + "\n"


def test_blocks_nested_deeper_than_gradview_runs_are_refused_naming_the_node() -> None:
    from gradview.ir import MAX_RUNNABLE_NESTING, check_block_depth

    check_block_depth(parse_ir(_nested_ifs(MAX_RUNNABLE_NESTING)))
    deep = parse_ir(_nested_ifs(MAX_RUNNABLE_NESTING + 1))  # the parser reads what torch prints
    with pytest.raises(IRVerifyError, match=rf"blocks nest more than 100 levels deep.*at `%r{MAX_RUNNABLE_NESTING} : Tensor = prim::If"):
        check_block_depth(deep)

