"""Files and specs the fuzzer found crashing the loaders (issue 25): each now gives
one line naming the file, however deep its JSON nests or large its sizes are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gradview.ir import parse_ir
from gradview.loaders.targets import TargetError, load_target, parse_input_spec, trace_executor
from gradview.loaders.torch_trace_log import TorchTraceError, read_torch_trace
from gradview.runtime.pass_trace import PassTrace, TraceFormatError

GRAPH = """graph(%x : Double(2, 3, strides=[3, 1], requires_grad=1, device=cpu)):
  %s : Double(2, 3, strides=[3, 1], requires_grad=1, device=cpu) = aten::sin(%x)
  %y : Double(2, 3, strides=[3, 1], requires_grad=1, device=cpu) = aten::mul(%s, %x)
  return (%y)
"""


@pytest.fixture(scope="module")
def saved() -> dict:
    import numpy

    trace = trace_executor(parse_ir(GRAPH), [numpy.ones((2, 3))], inline_threshold=0)
    data = trace.to_json()
    assert data["saved_measured"], "the fixture needs measured saved values"
    return data


def _write(tmp_path: Path, data: dict, deep: str | None = None) -> str:
    text = json.dumps(data)
    if deep is not None:
        text = text.replace('"DEEP"', deep)
    path = tmp_path / "trace.json"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("depth", [150, 1000, 100_000])
def test_a_saved_trace_whose_annotation_nests_deep_is_refused(tmp_path: Path, saved: dict, depth: int) -> None:
    data = json.loads(json.dumps(saved))
    data["steps"][1]["annotations"] = {"note": "DEEP"}
    path = _write(tmp_path, data, "[" * depth + "]" * depth)
    with pytest.raises(TraceFormatError, match=r"trace\.json: malformed trace: .*nested"):
        PassTrace.load(path)


def test_a_saved_trace_nesting_as_deep_as_gradview_writes_loads(tmp_path: Path, saved: dict) -> None:
    data = json.loads(json.dumps(saved))
    data["steps"][1]["annotations"] = {"note": "DEEP"}
    PassTrace.load(_write(tmp_path, data, "[" * 20 + "]" * 20))


@pytest.mark.parametrize("size", ["1e999", "-1", "2.5", "true"])
def test_a_measured_shape_that_is_not_sizes_is_refused(tmp_path: Path, saved: dict, size: str) -> None:
    data = json.loads(json.dumps(saved))
    which = next(iter(data["saved_measured"]))
    data["saved_measured"][which][0] = [["DEEP"], "float64"]
    path = _write(tmp_path, data, size)
    with pytest.raises(TraceFormatError, match="bad measured shape"):
        PassTrace.load(path)


def test_a_torch_trace_envelope_nested_deep_is_refused_naming_the_line() -> None:
    line = 'V1126 23:35:14.043000 1 x.py:1] {"str": ' + "[" * 1000 + "]" * 1000 + "}\n"
    with pytest.raises(TorchTraceError, match=r"^log:1: the entry's JSON is nested more than 100 levels deep$"):
        read_torch_trace(line, "log")


@pytest.mark.parametrize("size", ["1099511627776", "4611686018427387904"])
def test_complete_input_types_too_large_to_make_are_refused(tmp_path: Path, size: str) -> None:
    path = tmp_path / "big.ir"
    path.write_text(GRAPH.replace("Double(2, 3,", f"Double({size}, 3,", 1))
    with pytest.raises(TargetError, match=r"input %x of type .*needs .*example inputs may take 1 GiB in all"):
        load_target(str(path))


def test_inputs_too_large_together_are_refused_before_any_is_made() -> None:
    graph = parse_ir("graph(%a : Tensor, %b : Tensor):\n  return (%a, %b)\n")
    with pytest.raises(TargetError, match=r"^--inputs entry 2 \('8192x8192x2'\): a 8192x8192x2 float64 tensor needs 1 GiB"):
        parse_input_spec("8192x8192,8192x8192x2", graph.inputs())
    with pytest.raises(TargetError, match=r"7\.11 PiB"):
        parse_input_spec("1x1,100000x100000x100000", graph.inputs())


def _nested_ifs(depth: int) -> str:
    lines = ["graph(%c : bool, %x : Tensor):"]
    for d in range(depth):
        lines += [f"  %r{d} : Tensor = prim::If(%c)", "    block0():"]
    lines.append(f"  %r{depth} : Tensor = aten::neg(%x)")
    for d in reversed(range(depth)):
        lines += [f"    -> (%r{d + 1})", "    block1():", "    -> (%x)"]
    return "\n".join([*lines, "  return (%r0)"]) + "\n"


def test_a_jit_log_whose_graph_nests_300_blocks_deep_is_refused_naming_the_line(tmp_path: Path) -> None:
    from gradview.loaders.jit_log import load_jit_log

    log = tmp_path / "deep.log"
    prefix = "[DUMP graph_executor.cpp:693] "
    text = _nested_ifs(300)
    log.write_text(prefix + "Optimizing the following function:\n" + "".join(prefix + line + "\n" for line in text.splitlines()))
    with pytest.raises(TraceFormatError, match=r"deep\.log:\d+: .*blocks nest more than 100 levels deep"):
        load_jit_log(str(log))


def test_a_graph_nesting_60_blocks_deep_is_traced(tmp_path: Path) -> None:
    path = tmp_path / "deep.ir"
    path.write_text(_nested_ifs(60))
    assert len(load_target(str(path), "true,3").trace) > 1


def test_a_saved_trace_whose_records_nest_150_blocks_deep_is_refused(tmp_path: Path) -> None:
    records: list[list] = [["b", [], [], []]]
    for depth in range(150):
        records.append(["n", 1000 + depth, "prim::If", [], [], [], None, [len(records) - 1], None])
        records.append(["b", [], [len(records) - 1], []])
    step = {"graph": len(records) - 1, "which": "main", "pass": "Input", "changed": False, "seconds": 0.0}
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"format": "gradview-trace", "version": 2, "records": records, "steps": [step]}))
    with pytest.raises(TraceFormatError, match=r"record \d+: blocks nest more than 100 levels deep"):
        PassTrace.load(str(path))


def test_an_annotation_of_the_wrong_shape_is_refused_naming_it(tmp_path: Path, saved: dict) -> None:
    data = json.loads(json.dumps(saved))
    step = next(i for i, s in enumerate(data["steps"]) if "autograd_zero" in s.get("annotations", {}))
    data["steps"][step]["annotations"]["autograd_zero"]["__pairs__"][0][1] = {}
    with pytest.raises(TraceFormatError, match=rf"step {step} annotation 'autograd_zero' is not node or value ids to names"):
        PassTrace.load(_write(tmp_path, data))


@pytest.mark.parametrize("annotation", ["f32[8, 32][32, 9223372036854775808]cpu", "f32[99999999999999999999][1]cpu"])
def test_a_torch_trace_size_or_stride_beyond_int64_is_refused_where_it_is_read(annotation: str) -> None:
    from gradview.loaders.fx_tensor_types import AnnotationError, parse_annotation

    with pytest.raises(AnnotationError, match="beyond int64"):
        parse_annotation(annotation)
    parse_annotation("f32[8, 32][32, 1]cpu")


def test_differentiating_an_add_without_its_alpha_says_what_to_write_out() -> None:
    import numpy

    from gradview.runtime import GraphExecutor, Tensor
    from gradview.runtime.eager_ops import NotDifferentiableError

    graph = parse_ir("graph(%a : Tensor, %b : Tensor):\n  %c : Tensor = aten::add(%a, %b)\n  return (%c)\n")
    (out,) = GraphExecutor(graph).run([Tensor(numpy.ones(3))] * 2)  # no grad: the interpreter fills alpha in
    assert list(out.numpy()) == [2.0, 2.0, 2.0]
    inputs = [Tensor(numpy.ones(3), requires_grad=True) for _ in range(2)]
    with pytest.raises(NotDifferentiableError, match=r"aten::add gets 2 of its 3 arguments: write out alpha"):
        GraphExecutor(graph).run(inputs)[0].sum().backward()
