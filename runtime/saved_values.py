"""What a compiled graph saves for backward, and why.

AOTAutograd splits a joint graph into a forward that returns, after the
real outputs, the values the backward needs (each marked
``SavedForBackwardsAOTOutput``), and a backward that takes them as its first
inputs, then the tangents. Every saved value costs memory from the forward
pass until the backward has run: this module lists them per graph with
their shape, dtype and bytes (elements times element size), the op that
made each in the forward (``input`` for a graph input saved as it is; the
multi-output op behind a ``getitem``) and the backward ops that read it,
biggest first, the shape ``gradview saved --json`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass

from .fx_graph_text import FxGraph, FxRef
from .fx_tensor_types import TensorAnnotation

__all__ = ["SavedValue", "GraphSaved", "saved_by_compiled_graph", "SavedValuesError"]

INPUT = "input"  # the producer of a saved graph input


class SavedValuesError(ValueError):
    """A forward and backward that do not fit together (the message names the value)."""


@dataclass(frozen=True)
class SavedValue:
    name: str
    shape: tuple[int, ...] | None  # None under symbolic sizes
    dtype: str | None
    bytes: int | None  # None where the size is symbolic or the value is not a tensor
    producer: str  # "aten::tanh", or "input"
    consumers: tuple[str, ...]  # the backward ops reading it, sorted, each once

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "shape": list(self.shape) if self.shape is not None else None,
            "dtype": self.dtype,
            "bytes": self.bytes,
            "producer": self.producer,
            "consumers": list(self.consumers),
        }


@dataclass(frozen=True)
class GraphSaved:
    name: str
    saved: tuple[SavedValue, ...]  # biggest first

    @property
    def total_bytes(self) -> int:
        return sum(value.bytes or 0 for value in self.saved)

    def as_json(self) -> dict[str, object]:
        return {"name": self.name, "saved": [value.as_json() for value in self.saved], "total_bytes": self.total_bytes}


def saved_by_compiled_graph(name: str, forward: FxGraph, backward: FxGraph) -> GraphSaved:
    """The values ``forward`` saves for ``backward`` (AOTAutograd's pair)."""
    saved_names = [o.name for o in forward.outputs if (o.descriptor or "").startswith("SavedForBackwardsAOTOutput")]
    backward_inputs = [i for i in backward.inputs if not (i.descriptor or "").startswith("TangentAOTInput")]
    if len(backward_inputs) != len(saved_names):
        raise SavedValuesError(
            f"{name}: the forward saves {len(saved_names)} values but the backward takes {len(backward_inputs)} besides its tangents"
        )
    producers = {value.name: INPUT for value in forward.inputs}
    nodes = {node.name: node for node in forward.nodes}
    for node in forward.nodes:
        if node.op == "getitem" and node.args and isinstance(node.args[0], FxRef):
            producers[node.name] = producers.get(node.args[0].name, node.op)  # the multi-output op
        else:
            producers[node.name] = node.op
    readers: dict[str, set[str]] = {}
    for node in backward.nodes:
        for used in node.inputs():
            readers.setdefault(used, set()).add(node.op)
    values = []
    for saved_name, taken in zip(saved_names, backward_inputs, strict=True):
        annotation = taken.annotation
        if annotation is None and saved_name in nodes:
            annotation = nodes[saved_name].annotation
        tensor = annotation if isinstance(annotation, TensorAnnotation) else None
        shape = tuple(tensor.sizes) if tensor is not None and all(isinstance(s, int) for s in tensor.sizes) else None
        values.append(
            SavedValue(
                saved_name,
                shape,  # type: ignore[arg-type]
                tensor.dtype if tensor is not None else None,
                tensor.nbytes if tensor is not None else None,
                producers.get(saved_name, INPUT),
                tuple(sorted(readers.get(taken.name, ()))),
            )
        )
    values.sort(key=lambda value: -(value.bytes or 0))  # stable: the forward's order among equals
    return GraphSaved(name, tuple(values))
