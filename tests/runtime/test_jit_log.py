"""Reading PYTORCH_JIT_LOG_LEVEL dumps (fixtures captured from torch 2.13, legacy executor)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.ir import parse_ir
from gradview.runtime.jit_log import JitLogError, load_jit_log, parse_jit_log, pass_name_of

DATA = Path(__file__).parent / "data"


def test_graph_executor_log_pass_names():
    trace = load_jit_log(str(DATA / "jit_log_graph_executor.log"))
    names = [s.pass_name for s in trace]
    assert names[:11] == [
        "Input", "Inline", "LowerGradOf", "specializeAutogradZero", "LowerSimpleTuples",
        "ConstantPooling", "runRequiredPasses", "ConstantPropagation", "PropagateInputShapes",
        "PropagateRequiresGrad", "runOptimization",
    ]
    assert "EliminateCommonSubexpression" in names and "CreateAutodiffSubgraphs" in names
    assert names.count("Input") == 2 and names.count("compileSpec") == 2
    diff = [s for s in trace if s.pass_name == "Differentiate"]
    assert [s.which for s in diff] == [("forward", 0), ("backward", 0)]
    after = names.index("Differentiate") + 2
    assert trace[after].which == ("forward", 0) and trace[after].pass_name == "PropagateInputShapes"
    assert trace[names.index("InlineAutodiffSubgraphs")].which == "main"
    assert trace[1].changed and not trace[2].changed
    for step in trace:
        parse_ir(step.text())


def test_dead_code_elimination_log():
    trace = load_jit_log(str(DATA / "jit_log_dead_code_elimination.log"))
    assert len(trace) == 11 and {s.pass_name for s in trace} == {"EliminateDeadCode"}
    assert any("will be removed" in line for line in trace[0].annotations["log"])


@pytest.mark.parametrize(
    "header, name",
    [
        ("After EliminateCommonSubexpression , before PeepholeOptimize", "EliminateCommonSubexpression"),
        ("After CheckInplace (end of runOptimization)", "CheckInplace"),
        ("Before customPrePasses (beginning of runNondiffOptimization)", "runNondiffOptimization"),
        ("After EliminateDeadCode: ", "EliminateDeadCode"),
        ("After compileSpec optimizations:", "compileSpec"),
        ("Optimizing the following function:", "Input"),
    ],
)
def test_pass_name_of(header, name):
    assert pass_name_of(header) == name


def test_bad_logs():
    with pytest.raises(JitLogError, match="no graph dumps"):
        parse_jit_log("hello\n", "x.log")
    bad = "[DUMP a.cpp:1] After Foo\n[DUMP a.cpp:1] graph(%x : Tensor):\n[DUMP a.cpp:1]   %y = ???\n"
    with pytest.raises(JitLogError, match=r"^x.log:3: cannot parse"):
        parse_jit_log(bad, "x.log")
