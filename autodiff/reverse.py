"""addReverseInline: write the backward pass next to the forward graph.

Reverse mode walks the forward graph from its last node to its first,
keeping ``grad_map``: for each forward value, the gradient flowing into it so
far. Each node that needs a gradient gets a ``prim::GradOf[name="aten::..."]``
block in a separate ``prim::Reverse`` block; inside it the node's formula
turns the gradients of its outputs into gradients of its inputs. A value used
twice receives two contributions, summed by ``prim::AutogradAdd``; a value
nobody sends a gradient to reads ``prim::AutogradZero`` (an undefined
tensor, which costs nothing).

The reverse block is deliberately not inserted into the graph, so forward
passes (like dead code elimination) cannot touch it; its nodes still use the
forward values they need, which later become the Gradient's captures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gradview.ir import Block, Graph, Node, TensorType, Value, node_summary
from gradview.ops import Emitter, formula_for
from gradview.ops.errors import DifferentiationError

from .autodiff_mode import DEFAULT_AUTODIFF_MODE, AutodiffMode
from .differentiable import is_differentiable, need_trim_grad
from .gradient import Gradient

__all__ = ["ReverseDetails", "add_reverse_inline", "output_requires_grad", "DifferentiationError"]


@dataclass
class ReverseDetails:
    grad_map: dict[Value, Value]
    reverse_block: Block
    # Filled by lambdaLiftReverse: each reverse-block node and value -> its copy
    # in df (a trace keeps their ids, so the viewer sees the same nodes).
    lifted: dict[Any, Any] = field(default_factory=dict)
    # Each prim::GradOf node -> the forward node whose gradient it computes
    # (the trace records it so the viewer can link the two).
    primal_of: dict[Node, Node] = field(default_factory=dict)


def output_requires_grad(output: Value) -> bool:
    """TorchScript's rule for a graph output: a known flag wins, else a profiled one, else True."""
    type_ = output.type()
    if not isinstance(type_, TensorType):
        return output.requires_grad()
    if type_.requires_grad is not None:
        return type_.requires_grad
    node = output.node
    if node.kind() == "prim::profile" and node.has_attribute("profiled_type"):
        profiled = node.ty("profiled_type")
        return not isinstance(profiled, TensorType) or profiled.requires_grad is not False
    return True


def add_reverse_inline(grad: Gradient, mode: AutodiffMode = DEFAULT_AUTODIFF_MODE) -> ReverseDetails:
    """Build the reverse block for ``grad.f`` and fill ``df_input_vjps``/``df_output_vjps``."""
    graph = grad.f
    reverse_node = graph.create("prim::Reverse", (), 0)
    reverse_block = reverse_node.add_block()
    grad_map: dict[Value, Value] = {}
    primal_of: dict[Node, Node] = {}

    def get_grad(value: Value) -> Value:
        found = grad_map.get(value)
        if found is None:
            zero = graph.create("prim::AutogradZero")
            graph.insert_node(zero)
            found = grad_map[value] = zero.output()
        return found

    def set_grad(value: Value, gradient: Value) -> None:
        previous = grad_map.get(value)
        if previous is None:
            grad_map[value] = gradient
        else:
            add = graph.create("prim::AutogradAdd", [previous, gradient])
            add.output().set_type(previous.type())  # a list's gradients sum to a list
            graph.insert_node(add)
            grad_map[value] = add.output()

    with graph.insert_point(reverse_block):
        for index, output in enumerate(graph.outputs()):
            if not output_requires_grad(output):
                continue
            vjp = reverse_block.add_input(type_=output.type())
            set_grad(output, vjp)
            grad.df_input_vjps.append(index)
        for node in list(graph.block.reverse_nodes()):
            if not any(v.requires_grad() for v in node.outputs()):
                continue
            input_grads = _linear_gradient(graph, node, [get_grad(v) for v in node.outputs()], primal_of, mode)
            for value, gradient in zip(node.inputs(), input_grads, strict=True):
                if gradient is not None and value.requires_grad():
                    set_grad(value, gradient)
        for index, value in enumerate(graph.inputs()):
            if value.requires_grad() and value in grad_map:
                reverse_block.register_output(get_grad(value))
                grad.df_output_vjps.append(index)
    return ReverseDetails(grad_map, reverse_block, primal_of=primal_of)


def _linear_gradient(
    graph: Graph, node: Node, output_grads: list[Value], primal_of: dict[Node, Node], mode: AutodiffMode
) -> list[Value | None]:
    """Wrap the node's formula in ``prim::GradOf``; returns one gradient per input.

    ``primal_of`` learns which forward node the new GradOf differentiates.
    """
    # PyTorch's message for a node outside the mode's set. In extended mode a
    # formula that exists but cannot handle this node explains why itself
    # (e.g. "needs constant dims") when it runs below.
    refused = not is_differentiable(node, mode)
    if refused and (mode == AutodiffMode.TORCH or formula_for(node) is None):
        hint = ""
        if mode == AutodiffMode.TORCH and formula_for(node) is not None:
            hint = " (PyTorch's JIT leaves it to eager autograd; gradview's extended autodiff mode differentiates it)"
        raise DifferentiationError(
            f"differentiation of {node.kind()} is not supported, or it is missing necessary type "
            f"information{hint}: `{node_summary(node)}`"
        )
    grads_in = output_grads[:1] if need_trim_grad(node) else output_grads
    grad_of = graph.create("prim::GradOf", grads_in, 0)
    grad_of.s_("name", node.kind())
    graph.insert_node(grad_of)
    primal_of[grad_of] = node
    block = grad_of.add_block()
    results = _gradient_of(graph, node, block, output_grads)
    outputs: list[Value | None] = []
    for result in results:
        if result is None or _must_be_none(result):
            outputs.append(None)
            continue
        block.register_output(result)
        out = grad_of.add_output(result.type())
        if result.has_debug_name():
            out.set_debug_name(result.debug_name())
        outputs.append(out)
    return outputs


def _gradient_of(graph: Graph, node: Node, block: Block, output_grads: list[Value]) -> list[Value | None]:
    kind = node.kind()
    emit = Emitter(graph)
    if kind in ("prim::Constant", "prim::AutogradZero"):
        return []
    if kind == "prim::AutogradAdd":
        return [output_grads[0], output_grads[0]]
    if kind == "prim::profile":
        return [output_grads[0]]
    formula = formula_for(node)
    if formula is None:
        raise DifferentiationError(f"no gradient formula for {kind}")
    try:
        # The forward half goes right after the node, in the forward graph.
        with graph.insert_point(node.next if node.next is not None else node.owning_block):  # type: ignore[arg-type]
            saved = formula.run_forward(emit, node)
        with graph.insert_point(block):
            results = formula.backward(emit, node, saved, output_grads)
    except IndexError:
        missing = _missing_arguments(node)
        if missing is None:
            raise
        raise DifferentiationError(missing) from None
    return _checked(kind, node, results)


def _missing_arguments(node: Node) -> str | None:
    """Why a formula read past the node's inputs, when hand-written IR left out trailing
    defaults (the interpreter fills them in, a formula reads every argument); else None."""
    schema = node.maybe_schema()
    count = len(node.inputs())
    if schema is None or count >= len(schema.arguments):
        return None
    missing = ", ".join(arg.name for arg in schema.arguments[count:])
    return (
        f"{node.kind()} gets {count} of its {len(schema.arguments)} arguments: write out {missing} "
        f"(as TorchScript prints them) to differentiate it: at `{node_summary(node)}`"
    )


def _checked(kind: str, node: Node, results: list[Value | None]) -> list[Value | None]:
    if len(results) != len(node.inputs()):
        raise DifferentiationError(
            f"the formula for {kind} returned {len(results)} gradients for {len(node.inputs())} inputs"
        )
    return results


def _must_be_none(value: Value) -> bool:
    node = value.node
    return node.kind() == "prim::Constant" and "value" not in node.attribute_names() and str(value.type()) == "NoneType"
