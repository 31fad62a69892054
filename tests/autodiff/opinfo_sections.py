"""The DifferentiableGraph sections torch's profiling executor differentiates
for the scripted calls of PyTorch's OpInfo suite (as ``test_ops_jit`` builds them).

For each sample and each variant ``test_ops_jit`` scripts (the function
``torch.<op>(...)`` and the method ``x.<op>(...)``, lambdas excepted), this
module compiles the call with ``jit_metaprogramming_utils.gen_script_fn_and_args``
and runs it twice on inputs requiring grad, with autodiff subgraph inlining
off as ``test_ops_jit`` does: the first run profiles, the second builds the
optimized plan, in which the executor slices DifferentiableGraphs and hands
each to ``differentiate``.

Which text is the graph ``differentiate`` receives? ``last_executed_optimized_graph()``
holds each DifferentiableGraph's ``Subgraph`` *after* differentiation (the
forward ``f``, with the captured temporaries as extra outputs), so it is not
it. The executor's debug log is: at ``PYTORCH_JIT_LOG_LEVEL=">autodiff"``
(GRAPH_DUMP, the lowest level, of autodiff.cpp) ``differentiate`` prints its
input as ``grad_desc.f:`` before it changes anything, profiled types
(``prim::profile``) included. (``>profiling_graph_executor_impl`` prints only
whole graphs; ``>>>profiling_graph_executor_impl`` shows the sections inside
each full graph, after the guards.) The log level is read once per process,
so this runs in a subprocess: ``python -m tests.autodiff.opinfo_sections OUT``
writes one JSON record per (sample, variant) to OUT.

The values of each section's inputs are found in the optimized graph: the
k-th DifferentiableGraph node's inputs, followed back through the guards
(``prim::RequiresGradCheck``, ``prim::TypeCheck``), are inputs of the
scripted function, elements of its list inputs, or constants.

Each record also says whether the scripted call's outputs and gradients
(torch's JIT autodiff at work) equal eager autograd's.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

LOG_LEVEL = ">autodiff"
_DUMP = re.compile(r"^\[DUMP autodiff\.cpp:(\d+)\] ?(.*)$")
_GUARDS = ("prim::RequiresGradCheck", "prim::TypeCheck", "prim::profile")
ROOT = Path(__file__).resolve().parents[2]

__all__ = ["collect_sections", "script_variants", "sections_from_log", "LOG_LEVEL"]


def sections_from_log(log: str) -> list[str]:
    """The graphs autodiff.cpp dumped as ``grad_desc.f:`` (one per differentiate call)."""
    sections: list[list[str]] = []
    current: str | None = None
    for line in log.splitlines():
        match = _DUMP.match(line)
        if match is None:
            current = None
            continue
        where, text = match.groups()
        if text.strip() == "grad_desc.f:":
            sections.append([])
            current = where
        elif current == where:
            sections[-1].append(text)
        else:
            current = None
    return ["\n".join(lines) + "\n" for lines in sections]


def script_variants(op: Any) -> list[str]:
    """The variants test_ops_jit scripts: 'function' and 'method', unless absent or a
    lambda (not scriptable); none for ``torch.ops`` overloads or ops that opt out."""
    import torch
    from torch.testing._internal.jit_utils import is_lambda

    if not op.supports_scripting or isinstance(op.get_op(), torch._ops.OpOverload):
        return []
    variants = {"function": op.get_op(), "method": op.get_method()}
    return [name for name, fn in variants.items() if fn is not None and not is_lambda(fn)]


@contextmanager
def _stderr_into(sink: Any) -> Iterator[None]:
    """Send file descriptor 2 (where torch's C++ log goes) to the emptied file ``sink``."""
    sink.seek(0)
    sink.truncate()
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(sink.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def _source(value: Any) -> Any:
    """Where a DifferentiableGraph input comes from: ["input", i], ["element", i, j]
    or ["constant", value]; ["unknown", kind] otherwise."""
    node = value.node()
    while node.kind() in _GUARDS:
        value = list(node.inputs())[value.offset()]
        node = value.node()
    if node.kind() == "prim::Param":
        return ["input", value.offset()]
    if node.kind() == "prim::ListUnpack":
        parent = node.input()
        if parent.node().kind() == "prim::Param":
            return ["element", parent.offset(), value.offset()]
    if node.kind() == "prim::Constant":
        constant = value.toIValue()
        if constant is None or isinstance(constant, int | float | bool | str | list):
            return ["constant", constant]
    return ["unknown", node.kind()]


def _diff_nodes(block: Any) -> Iterator[Any]:
    for node in block.nodes():
        if node.kind() == "prim::DifferentiableGraph":
            yield node
        for inner in node.blocks():
            yield from _diff_nodes(inner)


def _compare_with_eager(case: Any, fn: Any, tensors: list[Any], outputs: Any) -> str:
    """"ok" when the scripted call's outputs and gradients equal eager autograd's."""
    import torch

    from .opinfo_cases import GRAD_SEED, flatten, output_grads_like

    eager = case.eager()
    ours = flatten(outputs)
    if len(ours) != len(eager.outputs):
        return f"differs: {len(ours)} outputs, eager {len(eager.outputs)}"
    for index, (o, e) in enumerate(zip(ours, eager.outputs, strict=True)):
        if not torch.allclose(o.detach(), torch.from_numpy(e), rtol=1e-7, atol=1e-10, equal_nan=True):
            return f"differs: output {index}"
    grads = output_grads_like(ours, seed=GRAD_SEED + case.index)
    pairs = [(o, torch.from_numpy(g)) for o, g in zip(ours, grads, strict=True) if o.requires_grad]
    leaves = [t for item in tensors for t in (item if isinstance(item, list) else [item])]
    leaves = [t for t in leaves if t.requires_grad]
    if not pairs:
        return "ok"
    found = torch.autograd.grad([p[0] for p in pairs], leaves, [p[1] for p in pairs], allow_unused=True)
    expected = [g for t, g in zip(case.leaf_inputs(), eager.input_grads, strict=True) if t.requires_grad]
    for index, (mine, theirs) in enumerate(zip(found, expected, strict=True)):
        if theirs is None:
            continue
        if mine is None:
            return f"differs: gradient of tensor {index} lost"
        if not torch.allclose(mine, torch.from_numpy(theirs), rtol=1e-7, atol=1e-10, equal_nan=True):
            return f"differs: gradient of tensor {index}"
    return "ok"


def _script_case(case: Any, variant: str, log: Any) -> dict[str, Any]:
    """Script, run twice, and collect the sections of one (sample, variant)."""
    import torch
    from torch.testing._internal.jit_metaprogramming_utils import gen_script_fn_and_args

    from .opinfo_cases import error_line
    from .opinfo_forms import script_tensors

    record: dict[str, Any] = {"case": case.case_id, "variant": variant, "sections": []}
    args = (case.sample.input, *case.sample.args)
    try:
        fn, _ = gen_script_fn_and_args(case.op.name, variant, *args, **case.sample.kwargs)
    except Exception as error:  # torch's failure is the record
        record.update(status="script fails", error=error_line(error))
        return record
    tensors = script_tensors(case)
    try:
        with _stderr_into(log):
            fn(*tensors)
            outputs = fn(*tensors)
    except Exception as error:  # torch's failure is the record
        record.update(status="run fails", error=error_line(error))
        return record
    log.seek(0)
    texts = sections_from_log(log.read().decode(errors="replace"))
    nodes = list(_diff_nodes(torch.jit.last_executed_optimized_graph().block()))
    if len(nodes) != len(texts):
        record.update(status="harness", error=f"{len(texts)} sections logged, {len(nodes)} in the plan")
        return record
    for text, node in zip(texts, nodes, strict=True):
        record["sections"].append({"text": text, "sources": [_source(v) for v in node.inputs()]})
    try:
        record["jit"] = _compare_with_eager(case, fn, tensors, outputs)
    except Exception as error:  # torch's failure is the record
        record["jit"] = f"fails: {error_line(error)}"
    record["status"] = "ok"
    return record


def main(out: str, *labels: str) -> None:
    """Write the records of every case (or of the OpInfos named) to ``out`` as JSON."""
    import torch
    from torch.testing._internal.common_utils import enable_profiling_mode
    from torch.testing._internal.jit_utils import disable_autodiff_subgraph_inlining

    from .opinfo_cases import all_cases

    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    records = []
    with (
        open(Path(out).with_suffix(".log"), "w+b") as log,
        enable_profiling_mode(),
        disable_autodiff_subgraph_inlining(),
    ):
        for case in all_cases():
            if labels and case.label not in labels:
                continue
            for variant in script_variants(case.op):
                records.append(_script_case(case, variant, log))
    Path(out).with_suffix(".log").unlink()
    Path(out).write_text(json.dumps(records))


def start_collecting(out: Path, labels: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
    """Start the subprocess that writes the records to ``out`` (see ``main``)."""
    env = dict(os.environ, PYTORCH_JIT_LOG_LEVEL=LOG_LEVEL)
    command = [sys.executable, "-m", "tests.autodiff.opinfo_sections", str(out), *labels]
    return subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE)


def collect_sections(process: subprocess.Popen[bytes], out: Path) -> dict[str, list[dict[str, Any]]]:
    """Wait for the subprocess; its records by case id."""
    _, errors = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"collecting the scripted sections failed:\n{errors.decode()[-3000:]}")
    by_case: dict[str, list[dict[str, Any]]] = {}
    for record in json.loads(out.read_text()):
        by_case.setdefault(record["case"], []).append(record)
    return by_case


if __name__ == "__main__":
    main(*sys.argv[1:])
