"""Reading PYTORCH_JIT_LOG_LEVEL dumps.

Fixtures captured from torch 2.13 (legacy executor), and live logs: a Python
subprocess per executor (the profiling executor, torch's default, and the
legacy one) trains every scriptable module of ``nn_modules`` for two steps with
``PYTORCH_JIT_LOG_LEVEL`` set, and gradview reads what it wrote to stderr.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gradview.ir import parse_ir
from gradview.loaders.jit_log import (
    JitLogError,
    load_jit_log,
    parse_jit_log,
    pass_name_of,
    split_messages,
)
from gradview.runtime import GraphName

DATA = Path(__file__).resolve().parents[1] / "runtime" / "data"
ROOT = Path(__file__).resolve().parents[2]

# Trains the scripted modules; argv: executor ("profiling" or "legacy"), steps, module names (all if none).
TRAIN = """
import sys, torch
from tests.runtime.nn_modules import CASES, build_case
if sys.argv[1] == "legacy":
    torch._C._jit_set_profiling_executor(False)
for name in sys.argv[3:] or [n for n, case in CASES.items() if case.scripts]:
    module, inputs = build_case(name)
    scripted = torch.jit.script(module)
    if "forward__0" in scripted._c._method_names():  # LSTM, GRU: forward is overloaded
        forward = lambda *args: scripted._c._get_method("forward__0")(*args, None)
    else:
        forward = scripted
    params = list(scripted.parameters())
    optimizer = torch.optim.SGD(params, lr=0.01) if params else None
    for _ in range(int(sys.argv[2])):
        args = [x.clone().requires_grad_() if x.is_floating_point() else x for x in inputs]
        out = forward(*args)
        while isinstance(out, (tuple, list)):
            out = out[0]
        if optimizer:
            optimizer.zero_grad()
        out.sum().backward()
        if optimizer:
            optimizer.step()
"""

# The levels the README names: on torch's default (profiling) executor
# '>>profiling_graph_executor_impl' dumps the pipeline, on the legacy one
# '>>graph_executor'. One run per executor sets both (each source file logs on
# its own); the tests below read each file's lines as if it alone was set.
LEVELS = ">>graph_executor:>>profiling_graph_executor_impl"


def run_logged(executor: str, level: str, steps: int, *names: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTORCH_JIT_LOG_LEVEL": level, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", TRAIN, executor, str(steps), *names],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


@pytest.fixture(scope="module")
def module_logs() -> dict[str, str]:
    """stderr of both executors training every scriptable module (run side by side)."""
    runs = {executor: run_logged(executor, LEVELS, 2) for executor in ("profiling", "legacy")}
    logs = {}
    for executor, run in runs.items():
        _, stderr = run.communicate(timeout=1200)
        assert run.returncode == 0, stderr[-2000:]
        logs[executor] = stderr
    return logs


def lines_of(log: str, source_file: str, dumps_only: bool = False) -> str:
    """The log lines one source file wrote (what PYTORCH_JIT_LOG_LEVEL=>>file alone gives)."""
    tag = "[DUMP " if dumps_only else "["
    return "".join(
        line for line in log.splitlines(keepends=True)
        if line.startswith(tag) and f" {source_file}.cpp:" in line.split("]", 1)[0]
    )


def check_every_step_prints_back(log: str, source: str) -> None:
    """Each step prints its graph byte for byte as torch dumped it."""
    trace = parse_jit_log(log, source)
    dumped = {m.line: m.graph for m in split_messages(log) if m.graph is not None}
    assert len(trace) == len(dumped)
    for step in trace:
        assert step.text() == dumped[step.annotations["log_line"]], (source, step.index, step.pass_name)


def test_profiling_executor_log(module_logs: dict[str, str]) -> None:
    log = lines_of(module_logs["profiling"], "profiling_graph_executor_impl")
    check_every_step_prints_back(log, "profiling.log")
    trace = parse_jit_log(log, "profiling.log")
    names = {s.pass_name for s in trace}
    assert {"NoOpt Graph", "Profiled Graph", "Optimized Graph", "CreateAutodiffSubgraphs", "Differentiate",
            "guardDifferentiableGraph", "UpdateDifferentiableGraphRequiresGrad", "Optimizing diff node 0"} <= names
    # While diff node k is optimized, the whole graph is dumped too: it is not k's forward graph.
    for step in trace:
        header = step.annotations["header"]
        if header.startswith(("Optimizing diff node", "After guardDifferentiableGraph", "Could not guard")):
            assert step.which.is_main
        elif header.startswith(("Forward graph", "After UpdateDifferentiableGraphRequiresGrad")):
            assert step.which.is_forward
        elif header.startswith("Backward graph"):
            assert step.which.is_backward
    # Optional inputs are profiled with a dict attribute, as torch prints it.
    assert 'prim::profile_ivalue[none_counts={"num_none": ' in log
    none_counts = [
        n.attribute("none_counts") for s in trace if "profile_ivalue" in s.text()
        for n in parse_ir(s.text()).all_nodes() if n.kind() == "prim::profile_ivalue"
    ]
    assert none_counts and all(set(c) == {"num_none", "num_present"} for c in none_counts)
    # The DUMP level alone ('profiling_graph_executor_impl', no '>>') gives the three plans.
    dumps = parse_jit_log(lines_of(module_logs["profiling"], "profiling_graph_executor_impl", True))
    assert {s.pass_name for s in dumps} == {"NoOpt Graph", "Profiled Graph", "Optimized Graph"}


def test_legacy_executor_log(module_logs: dict[str, str]) -> None:
    log = lines_of(module_logs["legacy"], "graph_executor")
    check_every_step_prints_back(log, "legacy.log")
    trace = parse_jit_log(log, "legacy.log")
    names = [s.pass_name for s in trace]
    assert names[0] == "Input" and "CreateAutodiffSubgraphs" in names and "Differentiate" in names
    # Its types have ranks without dtypes.
    assert "Tensor(*, *)" in log


def test_graph_executor_level_on_the_default_executor(module_logs: dict[str, str]) -> None:
    # '>>graph_executor' on torch's default executor logs messages, no graph: say so, and what to use.
    log = lines_of(module_logs["profiling"], "graph_executor")
    assert log and "graph(" not in log
    with pytest.raises(JitLogError) as info:
        parse_jit_log(log, "x.log")
    message = str(info.value)
    assert "from graph_executor.cpp" in message and "Running DifferentiableGraphBackward" in message
    assert "'>>profiling_graph_executor_impl'" in message and "legacy" in message
    # The legacy executor writes nothing for '>>profiling_graph_executor_impl'.
    assert lines_of(module_logs["legacy"], "profiling_graph_executor_impl") == ""
    with pytest.raises(JitLogError, match="no JIT log lines.*'>>graph_executor' on the legacy one"):
        parse_jit_log("", "y.log")


@pytest.mark.parametrize("executor", ["profiling", "legacy"])
def test_per_pass_levels(executor: str) -> None:
    """Per-pass source files log on both executors; their headers may run into the graph."""
    level = ">>dead_code_elimination:>>create_autodiff_subgraphs:>>autodiff"
    run = run_logged(executor, level, 2, "LayerNorm", "GRUCell")
    _, log = run.communicate(timeout=600)
    assert run.returncode == 0, log[-2000:]
    check_every_step_prints_back(log, f"{executor}.log")
    names = {s.pass_name for s in parse_jit_log(log)}
    assert {"EliminateDeadCode", "creating autodiff subgraphs"} <= names


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
    assert [s.which for s in diff] == [GraphName.forward(0), GraphName.backward(0)]
    after = names.index("Differentiate") + 2
    assert trace[after].which == GraphName.forward(0) and trace[after].pass_name == "PropagateInputShapes"
    assert trace[names.index("InlineAutodiffSubgraphs")].which == GraphName.main()
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
        ("Optimizing diff node 2 in", "Optimizing diff node 2"),
        ("NoOpt Graph:", "NoOpt Graph"),
    ],
)
def test_pass_name_of(header, name):
    assert pass_name_of(header) == name


def test_bad_logs():
    with pytest.raises(JitLogError, match="^x.log: no JIT log lines"):
        parse_jit_log("hello\n", "x.log")
    bad = "[DUMP a.cpp:1] After Foo\n[DUMP a.cpp:1] graph(%x : Tensor):\n[DUMP a.cpp:1]   %y = ???\n"
    with pytest.raises(JitLogError, match=r"^x.log:3: cannot parse"):
        parse_jit_log(bad, "x.log")


# The profiling executor compiles a helper graph (no inputs, constants out) before
# the user's; the next executor can reuse the freed one's address.
_P = "[DEBUG profiling_graph_executor_impl.cpp:{}] "
HELPER_FIRST = "\n".join(
    [
        _P.format(623) + "Running ProfilingGraphExecutorImpl 0x5609865c1600",
        _P.format(630) + "Before LowerGradOf (beginning of runNooptPassPipeline)",
        _P.format(630) + "graph():",
        _P.format(630) + "  %0 : (bool, bool) = prim::Constant[value=(False, False)]()",
        _P.format(630) + "  return (%0)",
        "[DUMP profiling_graph_executor_impl.cpp:636] NoOpt Graph: ",
        "[DUMP profiling_graph_executor_impl.cpp:636] graph():",
        "[DUMP profiling_graph_executor_impl.cpp:636]   %0 : (bool, bool) = prim::Constant[value=(False, False)]()",
        "[DUMP profiling_graph_executor_impl.cpp:636]   return (%0)",
        _P.format(623) + "Running ProfilingGraphExecutorImpl 0x5609865c1600",
        _P.format(545) + "Before inlining (beginning of runProfilingInsensitiveOptimizations)",
        _P.format(545) + "graph(%x.1 : Tensor,",
        _P.format(545) + "      %w.1 : Tensor):",
        _P.format(545) + "  %y.1 : Tensor = aten::mul(%x.1, %w.1)",
        _P.format(545) + "  %z.1 : Tensor = aten::tanh(%y.1)",
        _P.format(545) + "  return (%z.1)",
        _P.format(553) + "After inlining, before ClearProfilingInformation",
        _P.format(553) + "graph(%x.1 : Tensor,",
        _P.format(553) + "      %w.1 : Tensor):",
        _P.format(553) + "  %y.1 : Tensor = aten::mul(%x.1, %w.1)",
        _P.format(553) + "  %z.1 : Tensor = aten::tanh(%y.1)",
        _P.format(553) + "  return (%z.1)",
        "",
    ]
)


def test_an_executor_reusing_a_freed_ones_address_is_a_new_compilation() -> None:
    trace = parse_jit_log(HELPER_FIRST)
    assert [(s.pass_name, str(s.which)) for s in trace] == [
        ("runNooptPassPipeline", "main"),
        ("NoOpt Graph", "main"),
        ("runProfilingInsensitiveOptimizations", "main (compilation 2)"),
        ("inlining", "main (compilation 2)"),
    ]
    # The user's graph is not drawn as a change of the helper's.
    assert not trace[2].changed and not trace[3].changed


@pytest.mark.parametrize("executor", ["profiling", "legacy"])
def test_every_step_of_a_live_log_has_a_description(module_logs: dict[str, str], executor: str) -> None:
    """The viewer's step docs (gradview.viewer.pass_docs) know every name both executors log."""
    from gradview.viewer.pass_docs import pass_doc  # the viewer reads this layer's traces

    names = {step.pass_name for step in parse_jit_log(module_logs[executor], f"{executor}.log")}
    assert names and {name for name in names if not pass_doc(name)} == set()
