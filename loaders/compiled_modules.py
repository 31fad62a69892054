"""Which module each node of a compiled graph comes from, as PyTorch records it.

AOTAutograd's forward nodes carry FX's ``nn_module_stack`` (the modules whose
``forward`` was running when the op was traced: ``L['self'].layer1.0.conv1``),
and each backward node the stack of the forward node it differentiates
(``fwd_nn_module_stack``, matched by ``seq_nr``). PyTorch 2.13 does not print
either in a TORCH_TRACE log's graphs, so a log alone names no node's module
(only its parameters': :mod:`gradview.loaders.compiled_names`).

``--compile`` (:mod:`gradview.loaders.compile_child`) therefore compiles with
aot_eager exactly as ``backend="aot_eager"`` does, and its forward and backward
compilers write what the graphs carry into the same log, one
``gradview_module_paths`` artifact per graph (JSON: ``{"graph": "forward" or
"backward", "nodes": {node name: module path}, "modules": {module path: class
name}}``). Reading a log uses them where present; there is nothing to guess
where they are not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from .torch_trace_log import TraceEntry

__all__ = ["ARTIFACT", "module_paths", "stack_path", "logging_backend"]

ARTIFACT = "gradview_module_paths"
_ROOT = re.compile(r"^[LG]\['[^']+'\]")
_MODULES = re.compile(r"\._modules\['([^']+)'\]")


def stack_path(path: str) -> str:
    """An ``nn_module_stack`` entry's path as ``named_modules()`` writes it:
    ``L['self'].layer1.0.conv1`` or ``L['self']._modules['layer1']._modules['0']`` -> ``layer1.0.conv1``."""
    rest = _ROOT.sub("", path)
    rest = _MODULES.sub(lambda match: "." + match.group(1), rest)
    return rest.removeprefix(".")


def module_paths(entries: Sequence[TraceEntry]) -> dict[tuple[str, str], tuple[dict[str, str], dict[str, str]]]:
    """Per (log file, compile id): node name -> module path (forward and backward graphs
    together: AOTAutograd names a node alike in the joint graph and the one it lands in),
    and module path -> class name."""
    found: dict[tuple[str, str], tuple[dict[str, str], dict[str, str]]] = {}
    for entry in entries:
        if entry.key != "artifact" or not isinstance(entry.value, dict) or entry.value.get("name") != ARTIFACT:
            continue
        try:
            data = json.loads(entry.payload)
        except ValueError:
            continue  # not ours after all: nothing is read from it
        nodes, modules = data.get("nodes"), data.get("modules")
        if not isinstance(nodes, dict) or not isinstance(modules, dict):
            continue
        paths, types = found.setdefault((entry.source, entry.compile_id or ""), ({}, {}))
        paths.update({str(name): str(path) for name, path in nodes.items()})
        types.update({str(path): str(kind) for path, kind in modules.items()})
    return found


def logging_backend(torch: Any, root_type: str | None = None) -> Callable[..., Any]:
    """aot_eager, whose compilers also log each graph's module paths (needs PyTorch);
    ``root_type``: the compiled model's class, the module path ``""``'s."""
    from torch._dynamo.backends.debugging import aot_eager, boxed_nop

    def compiler(graph: str, key: str) -> Callable[..., Any]:
        def compile_graph(gm: Any, example_inputs: Any) -> Any:
            nodes: dict[str, str] = {}
            modules = {"": root_type} if root_type else {}
            for node in gm.graph.nodes:
                stack = node.meta.get(key)
                if not stack:
                    continue
                for path, kind in stack.values():
                    modules[stack_path(str(path))] = getattr(kind, "__name__", str(kind))
                nodes[node.name] = stack_path(str(list(stack.values())[-1][0]))
            payload = json.dumps({"graph": graph, "nodes": nodes, "modules": modules})
            torch._logging.trace_structured(
                "artifact",
                metadata_fn=lambda: {"name": ARTIFACT, "encoding": "json"},
                payload_fn=lambda: payload,
            )
            return boxed_nop(gm, example_inputs)

        return compile_graph

    def backend(gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        return aot_eager(
            gm, example_inputs, fw_compiler=compiler("forward", "nn_module_stack"),
            bw_compiler=compiler("backward", "fwd_nn_module_stack"), **kwargs,
        )

    return backend
