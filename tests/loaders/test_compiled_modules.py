"""Module paths of a compiled graph's nodes, as PyTorch recorded them (``--compile``'s logs)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from gradview.ir.module_scope import module_path, owner_of_parameter
from gradview.loaders.compiled_modules import ARTIFACT, module_paths, stack_path
from gradview.loaders.compiled_trace import load_compiled_trace
from gradview.loaders.torch_trace_log import read_torch_trace
from gradview.runtime.trace_types import GraphName
from gradview.runtime.value_names import name_table

from ..runtime.test_value_names import MODEL

LOGS = Path(__file__).resolve().parent.parent / "data" / "torch_trace"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("L['self'].layer1.0.conv1", "layer1.0.conv1"),
        ("L['self']._modules['layer1']._modules['0']", "layer1.0"),
        ("L['fn'].dec", "dec"),
        ("L['self']", ""),
    ],
)
def test_a_stack_entry_is_a_module_path(path: str, expected: str) -> None:
    assert stack_path(path) == expected


def _artifact(payload: str, line: int) -> str:
    envelope = {
        "artifact": {"name": ARTIFACT, "encoding": "json"}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0,
        "has_payload": hashlib.md5(payload.encode("utf-8")).hexdigest(),  # PyTorch's checksum
    }
    return f"V1128 04:18:41.165000 1 x.py:{line}] {json.dumps(envelope)}\n\t{payload}\n"


def test_the_artifacts_of_a_compile_are_read_together_and_a_broken_one_is_not() -> None:
    forward = json.dumps({"graph": "forward", "nodes": {"addmm": "fc"}, "modules": {"fc": "Linear", "": "Net"}})
    backward = json.dumps({"graph": "backward", "nodes": {"mm": "fc"}, "modules": {"fc": "Linear"}})
    text = _artifact(forward, 1) + _artifact(backward, 2) + _artifact("{not json", 3)
    found = module_paths(read_torch_trace(text, "x.log"))
    assert found == {("x.log", "0/0"): ({"addmm": "fc", "mm": "fc"}, {"fc": "Linear", "": "Net"})}


def test_a_log_without_them_names_no_nodes_module() -> None:
    """PyTorch's own TORCH_TRACE graphs print no module stack: nothing is guessed."""
    for log in sorted(LOGS.glob("*.log")):
        compiled = load_compiled_trace(log)
        assert compiled.trace.module_types == {}
        assert all(node.scope is None for step in compiled.trace for node in step.graph.nodes), log.name


# -- against PyTorch ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, Any]:
    torch = pytest.importorskip("torch")
    from gradview.loaders.compile_model import compile_and_trace

    folder = tmp_path_factory.mktemp("net")
    (folder / "net.py").write_text(MODEL, encoding="utf-8")
    compile_and_trace(f"{folder / 'net.py'}:build", folder / "trace")
    namespace: dict[str, Any] = {}
    exec(compile(MODEL, "net.py", "exec"), namespace)  # the test's own model
    model, inputs = namespace["build"]()
    return load_compiled_trace(folder / "trace").trace, model, torch.jit.trace(model, inputs)


def test_forward_ops_are_in_the_modules_torchscripts_tracer_names(compiled: tuple[Any, Any, Any]) -> None:
    """The modules the compiled forward's ops are in are those PyTorch's tracer prints as the
    scopes of the same model's ops (``scope: __module.enc.lin``), the model itself included."""
    trace, _, traced = compiled
    forward = next(step for step in trace if step.which == GraphName.forward(0))
    ours = {module_path(node.scope) for node in forward.graph.nodes if node.kind != "prim::Constant"}
    theirs = {module_path(node.scopeName()) for node in traced.inlined_graph.nodes() if node.kind() != "prim::Constant"}
    assert ours == theirs == {"", "enc", "enc.lin", "enc.norm", "dec.0", "dec.0.lin", "dec.0.norm", "dec.1"}


def test_an_op_reading_a_parameter_is_in_the_module_that_owns_it(compiled: tuple[Any, Any, Any]) -> None:
    """Parameter names come from Dynamo's sources, node modules from nn_module_stack: two
    records that agree wherever a forward op reads a parameter, and wherever a backward op
    makes a parameter's gradient (PyTorch maps it to the forward op it differentiates)."""
    trace, model, _ = compiled
    modules = {path for path, _ in model.named_modules()}
    checked = 0
    for which in (GraphName.forward(0), GraphName.backward(0)):
        step = next(s for s in trace if s.which == which)
        names = name_table(trace, step.index)
        owners = {
            param.id: owner_of_parameter(names.of(param.id).user_name or "", modules)
            for param in step.graph.params
            if names.of(param.id).user_name in dict(model.named_parameters())
        }
        made = {output.id: node for node in step.graph.nodes for output in node.outputs}
        for node in step.graph.nodes:
            for value in node.inputs:
                if value in owners and which.is_forward:
                    assert module_path(node.scope) == owners[value], (node.kind, names.of(value).text())
                    checked += 1
        for value in step.graph.returns:
            grad = names.of(value).user_name or ""
            if grad.endswith(".grad") and value in made:
                owner = owner_of_parameter(grad.removesuffix(".grad"), modules)
                assert module_path(made[value].scope) == owner, grad
                checked += 1
    assert checked >= 10


def test_the_module_classes_are_the_models(compiled: tuple[Any, Any, Any]) -> None:
    trace, model, _ = compiled
    classes = {path: type(module).__name__ for path, module in model.named_modules()}
    assert trace.module_types and all(classes[path] == kind for path, kind in trace.module_types.items())
    assert trace.module_types[""] == "Net" and trace.module_types["dec.0"] == "Block"
