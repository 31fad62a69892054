"""specializeAutogradZero: take the work for undefined gradients out of a backward graph.

**AutogradZero.** In a backward graph a gradient that nobody produced is not
a tensor of zeros but an *undefined* tensor (``prim::AutogradZero``; ``None``
when gradview runs the graph). It means "all zeros" and costs nothing: no
memory, no kernel. Autodiff cannot know, when it writes the backward graph,
which gradients will be undefined, so it writes code that checks at run time:

* ``prim::AutogradAdd(a, b)`` sums two gradients, skipping undefined ones;
* each formula sits in a ``prim::GradOf`` block that runs only if one of its
  incoming gradients is defined (after LowerGradOf: a ``prim::If`` on
  ``prim::AutogradAnyNonZero(...)``, whose else branch returns AutogradZero);
* ``aten::_grad_sum_to_size(g, size)`` undoes broadcasting, or does nothing
  when ``size`` is None.

**Specializing.** Once we know which gradients are undefined on the calls we
care about, those checks have known answers. This pass gives every value one
of three states, Zero (known undefined), Nonzero (known defined) or Unknown,
walks the graph in order and rewrites what the states decide:

* ``AutogradAdd(Zero, x)`` is ``x``; ``AutogradAdd(Nonzero, Nonzero)`` is a
  plain ``aten::add(a, b, 1)`` that other passes can optimize and fuse;
* ``AutogradAnyNonZero``/``AllZero``/``AllNonZero`` become constants when the
  states decide them, and an ``If`` on such a constant is replaced by its
  taken branch: a formula whose gradients are all Zero disappears (its
  results are Zero too), one whose gradients are all Nonzero runs without the
  ``If`` (and its results are Nonzero);
* an unlowered ``prim::GradOf`` is removed or inlined by the same rule;
* ``aten::_grad_sum_to_size`` of a Zero gradient, or with a size that is
  None, is its input.

Everything else gets Unknown outputs: the pass only follows what symbolic
autodiff emits. It runs only on backward graphs (those with AutogradAdd,
AutogradAnyNonZero, _grad_sum_to_size or GradOf nodes) and leaves the nodes
it makes dead (an unused AutogradZero) to dead code elimination.

**The two modes.** Where do the input states come from?

* default: from the input types alone, so the result is right on every
  call: ``Tensor[Undefined]`` is Zero, a complete tensor type (as profiling
  records a tensor it saw) is Nonzero, ``NoneType`` is Zero, the rest Unknown.
  This is TorchScript's legacy executor, which compiles one graph per pattern
  of defined/undefined inputs.
* ``guarded=True``: the profiling executor's way. Inputs Unknown by type but
  observed by profiling nodes (``prim::profile[profiled_type=...]`` on a
  tensor, ``prim::profile_ivalue[none_counts=...]`` on an optional size) take
  the profiled state, and because a profile is only a guess about the next
  call, the graph is versioned::

      %ok : bool = prim::AutogradAllNonZero(%profiled_defined...)   # and AllZero, is None...
      %out = prim::If(%ok)
        block0():   the graph specialized on the profiles
        block1():   prim::FallbackGraph_0(inputs...)  # the original, unspecialized graph

**States on screen.** The viewer marks every value of the resulting graph
(inputs, node outputs, block parameters) Zero, Nonzero or Unknown. Values that are not tensors
are Unknown, except None constants and ``NoneType`` values (Zero) and, in
guarded mode, optional inputs whose profile decided them.

Differences from TorchScript: its parser types every tensor as defined, so a
plain ``Tensor`` input is Nonzero there and Unknown here. Its guarded mode
ignores types, counts unprofiled inputs as Nonzero and guards only when a
tensor was profiled; here types still apply, unprofiled inputs stay Unknown,
any profiled input (an optional size too) gets a guard, profiles that saw
only present values are checked with ``aten::__isnot__``, and the checks are
joined with ``aten::__and__`` (TorchScript: ``aten::all`` of a bool list).
This pass also folds the defined checks into constants, runs a formula
unconditionally when one of its gradients is defined (TorchScript needs all
of them), handles unlowered GradOf nodes, removes ``_grad_sum_to_size`` wherever
its rules apply (TorchScript: only inside a formula's ``If``), treats None
constants as Zero, and looks into nested blocks.

Example (``%dz`` known undefined, ``%dy`` known defined)::

    %1 : bool = prim::AutogradAnyNonZero(%dz)
    %a : Tensor = prim::If(%1)
      block0():
        %t : Tensor = aten::mul(%dz, %w)
        -> (%t)
      block1():
        %z : Tensor = prim::AutogradZero()
        -> (%z)
    %g : Tensor = prim::AutogradAdd(%a, %dy)
    return (%g)

becomes ::

    %z : Tensor = prim::AutogradZero()
    return (%dy)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from gradview.ir import Block, Graph, Node, TensorType, Value
from gradview.ir.constants import constant_value

from .autograd_zero_guard import (
    NONZERO,
    UNKNOWN,
    ZERO,
    guard_specializations,
    is_known_none,
    type_state,
)

__all__ = [
    "specialize_autograd_zero", "specialize_autograd_zero_with_notes", "AutogradZeroNotes",
    "is_backward_graph", "ZERO", "NONZERO", "UNKNOWN",
]

BACKWARD_KINDS = frozenset(
    {"prim::AutogradAnyNonZero", "prim::AutogradAdd", "aten::_grad_sum_to_size", "prim::GradOf"}
)


@dataclass(frozen=True)
class AutogradZeroNotes:
    """The state of every value of the resulting graph, for the viewer (the
    field name is the trace's annotation key)."""

    autograd_zero: Mapping[Value, str]


def specialize_autograd_zero(graph: Graph, *, guarded: bool = False) -> bool:
    """Specialize a backward graph on which gradients are undefined (Zero).

    ``guarded`` selects the profiling executor's mode (see the module
    docstring). Returns True if the graph changed.
    """
    return _specialize(graph, guarded).changed


def specialize_autograd_zero_with_notes(
    graph: Graph, *, guarded: bool = False
) -> tuple[bool, AutogradZeroNotes]:
    """:func:`specialize_autograd_zero`, also giving the state (``"Zero"``,
    ``"Nonzero"`` or ``"Unknown"``) of every value of the resulting graph."""
    spec = _specialize(graph, guarded)
    return spec.changed, AutogradZeroNotes(MappingProxyType(_states(graph, spec.state)))


def _specialize(graph: Graph, guarded: bool) -> _Specializer:
    spec = _Specializer(graph)
    for value in graph.inputs():
        spec.state[value] = type_state(value.type())
    if is_backward_graph(graph):
        root: Block = graph.block
        if guarded:
            versioning_if = guard_specializations(graph, spec.state, spec.profiled_none)
            if versioning_if is not None:
                spec.changed = True
                root = versioning_if.blocks()[0]
        spec.visit_block(root)
    return spec


def is_backward_graph(graph: Graph) -> bool:
    """Does ``graph`` hold any of the nodes autodiff writes into backward graphs?"""
    return any(node.kind() in BACKWARD_KINDS for node in graph.all_nodes())


def _merge(a: str, b: str) -> str:
    """The state of a value that is either ``a`` or ``b``."""
    return a if a == b else UNKNOWN


class _Specializer:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.state: dict[Value, str] = {}
        self.profiled_none: set[Value] = set()
        # Conditions this pass folded to constants, and those of them that
        # came from an AutogradAnyNonZero whose inputs were all Nonzero.
        self.folded: dict[Value, bool] = {}
        self.all_defined: set[Value] = set()
        self.changed = False

    def get(self, value: Value) -> str:
        return self.state.get(value, UNKNOWN)

    def visit_block(self, block: Block) -> None:
        # block.nodes() tolerates destroying the node it just yielded.
        for node in block.nodes():
            _HANDLERS.get(node.kind(), _Specializer.other)(self, node)

    # -- node handlers ---------------------------------------------------------
    def other(self, node: Node) -> None:
        # Values from outside a nested block keep their states inside it.
        for block in node.blocks():
            self.visit_block(block)
        for out in node.outputs():
            self.state[out] = UNKNOWN

    def constant(self, node: Node) -> None:
        out = node.output()
        if constant_value(out) is None:
            self.state[out] = ZERO  # None passed as a tensor is an undefined one
        else:
            self.state[out] = NONZERO if isinstance(out.type(), TensorType) else UNKNOWN

    def autograd_zero(self, node: Node) -> None:
        for out in node.outputs():
            self.state[out] = ZERO

    def identity(self, node: Node) -> None:
        """Profiling nodes pass their input through."""
        if len(node.inputs()) == len(node.outputs()) == 1:
            self.state[node.output()] = self.get(node.input(0))
        else:
            self.other(node)

    def autograd_add(self, node: Node) -> None:
        if len(node.inputs()) != 2:
            return self.other(node)
        a, b = node.inputs()
        sa, sb = self.get(a), self.get(b)
        out = node.output()
        if sa == ZERO:  # Zero + b == b (b may be Zero too)
            self._replace(node, b)
        elif sb == ZERO:
            self._replace(node, a)
        elif sa == sb == NONZERO and isinstance(a.type(), TensorType) and isinstance(b.type(), TensorType):
            # No undefined operand to skip: a plain add, which later passes understand.
            with self.graph.insert_point(node):
                one = self.graph.insert_constant(1)
                add = self.graph.insert_node(self.graph.create("aten::add", [a, b, one]))
            add.output().set_type(out.type())
            self.state[add.output()] = NONZERO
            name = out.debug_name() if out.has_debug_name() else None
            self._replace(node, add.output())
            add.output().set_debug_name(name)
        else:
            # Still a run-time check; one defined operand makes a defined sum.
            self.state[out] = NONZERO if NONZERO in (sa, sb) else UNKNOWN
        return None

    def check(self, node: Node) -> None:
        """AutogradAnyNonZero / AllZero / AllNonZero: fold when the states decide."""
        found = [self.get(v) for v in node.inputs()]
        every_zero = all(s == ZERO for s in found)
        every_nonzero = all(s == NONZERO for s in found)
        answer: bool | None
        if node.kind() == "prim::AutogradAnyNonZero":
            answer = True if NONZERO in found else False if every_zero else None
        elif node.kind() == "prim::AutogradAllZero":
            answer = False if NONZERO in found else True if every_zero else None
        else:
            answer = False if ZERO in found else True if every_nonzero else None
        if answer is None or len(node.outputs()) != 1:
            return self.other(node)
        with self.graph.insert_point(node):
            constant = self.graph.insert_constant(answer, node.output().type())
        self.state[constant] = UNKNOWN
        self.folded[constant] = answer
        if node.kind() == "prim::AutogradAnyNonZero" and found and every_nonzero:
            self.all_defined.add(constant)
        self._replace(node, constant)
        return None

    def if_(self, node: Node) -> None:
        condition = node.input(0)
        taken = self.folded.get(condition)
        if taken is not None:
            branch = node.blocks()[0 if taken else 1]
            self.visit_block(branch)
            self._inline(node, branch, promote=condition in self.all_defined)
            if not condition.has_uses():
                condition.node.destroy()
            return
        for block in node.blocks():
            self.visit_block(block)
        then_out, else_out = (block.outputs() for block in node.blocks())
        for out, a, b in zip(node.outputs(), then_out, else_out, strict=True):
            self.state[out] = _merge(self.get(a), self.get(b))

    def grad_of(self, node: Node) -> None:
        """The block runs iff some input is defined; if none is, the outputs are Zero."""
        found = [self.get(v) for v in node.inputs()]
        if all(s == ZERO for s in found):
            if node.outputs():
                with self.graph.insert_point(node):
                    zero = self.graph.insert_node(self.graph.create("prim::AutogradZero"))
                zero.output().set_type(node.output(0).type())
                self.state[zero.output()] = ZERO
                for out in node.outputs():
                    out.replace_all_uses_with(zero.output())
            node.destroy()
            self.changed = True
            return
        (body,) = node.blocks()
        self.visit_block(body)
        if NONZERO in found:
            self._inline(node, body, promote=all(s == NONZERO for s in found))
            return
        for out, inner in zip(node.outputs(), body.outputs(), strict=True):
            self.state[out] = _merge(self.get(inner), ZERO)

    def grad_sum_to_size(self, node: Node) -> None:
        if len(node.inputs()) != 2:
            return self.other(node)
        grad, size = node.inputs()
        if self.get(grad) == ZERO or is_known_none(size, self.profiled_none):
            self._replace(node, grad)  # nothing to sum: the gradient itself
        else:
            self.state[node.output()] = self.get(grad)
        return None

    # -- rewriting -------------------------------------------------------------
    def _replace(self, node: Node, value: Value) -> None:
        """Every use of ``node``'s only output reads ``value``; ``node`` goes."""
        node.output().replace_all_uses_with(value)
        node.destroy()
        self.changed = True

    def _inline(self, node: Node, block: Block, promote: bool) -> None:
        """Replace ``node`` by the (already visited) nodes of ``block``.

        ``promote``: all gradients flowing into this formula are defined, so
        the results it computes are defined too (they stay Zero if proved so).
        """
        inside: set[Value] = set()
        for inner in list(block.nodes()):
            inside.update(inner.outputs())
            inner.move_before(node)
        for out, result in zip(node.outputs(), block.outputs(), strict=True):
            if promote and result in inside and self.get(result) == UNKNOWN:
                self.state[result] = NONZERO
            out.replace_all_uses_with(result)
            if out.has_debug_name() and not result.has_debug_name() and result in inside:
                name = out.debug_name()
                out.set_debug_name(None)
                result.set_debug_name(name)
        node.destroy()
        self.changed = True


_HANDLERS: dict[str, Callable[[_Specializer, Node], None]] = {
    "prim::Constant": _Specializer.constant,
    "prim::AutogradZero": _Specializer.autograd_zero,
    "prim::profile": _Specializer.identity,
    "prim::profile_ivalue": _Specializer.identity,
    "prim::AutogradAdd": _Specializer.autograd_add,
    "prim::AutogradAnyNonZero": _Specializer.check,
    "prim::AutogradAllZero": _Specializer.check,
    "prim::AutogradAllNonZero": _Specializer.check,
    "prim::If": _Specializer.if_,
    "prim::GradOf": _Specializer.grad_of,
    "aten::_grad_sum_to_size": _Specializer.grad_sum_to_size,
}


def _states(graph: Graph, state: dict[Value, str]) -> dict[Value, str]:
    out: dict[Value, str] = {}
    for value in graph.inputs():
        out[value] = state.get(value, UNKNOWN)
    for node in graph.all_nodes():
        for block in node.blocks():
            for value in block.inputs():
                out[value] = state.get(value, UNKNOWN)
        for value in node.outputs():
            out[value] = state.get(value, UNKNOWN)
    return out
