"""Inline: paste the bodies of called functions into the graph that calls them.

A TorchScript function that calls another function holds
``prim::CallFunction(%fn, args...)``, where ``%fn`` is a ``prim::Constant``
of type ``Function``. Optimizations cannot look inside a call, and the
interpreter cannot run one, so the executor first inlines every call: the
nodes of the callee's graph are copied in place of the call, with the
callee's inputs replaced by the arguments and the call's outputs replaced by
the copied results. A copied body can contain calls of its own; those are
inlined too, until no call with a known body is left.

gradview attaches a function's body to its ``%fn`` constant as a graph
attribute named ``Subgraph`` (printed as a ``with prim::Constant_0 = graph(...)``
section). TorchScript's text only names the function (``[name="g"]``); a
call whose constant has no body is left as it is. A function that calls
itself, directly or through others, can never be fully inlined: the pass
checks the calls first and raises :class:`InlineError`, naming the chain of
calls, before it changes anything. As in TorchScript, the
``%fn`` constants stay behind for dead code elimination.

Before::

    %fn : Function = prim::Constant_0[name="double"]()
    %y : Tensor = prim::CallFunction(%fn, %x)
    with prim::Constant_0 = graph(%a : Tensor):
      %b : Tensor = aten::add(%a, %a, %one)   # (the body's own constant omitted)
      return (%b)

After::

    %fn : Function = prim::Constant_0[name="double"]()
    %y : Tensor = aten::add(%x, %x, %one)
"""

from __future__ import annotations

from collections.abc import Iterator

from ..attributes import AttributeKind
from ..graph import Graph
from ..node import Node, Value
from ..printer import node_summary
from ..types import FunctionType

__all__ = ["inline", "InlineError", "function_body"]


class InlineError(ValueError):
    """A call cannot be inlined: recursion, or a body that does not fit the call."""


def function_body(call: Node) -> Graph | None:
    """The graph attached to the ``Function`` constant that ``call`` calls, if any."""
    if call.kind() != "prim::CallFunction" or not call.inputs():
        return None
    fn = call.inputs()[0]
    const = fn.node
    if const.kind() != "prim::Constant" or fn.type() != FunctionType():
        return None
    if not const.has_attribute("Subgraph") or const.attribute_kind("Subgraph") is not AttributeKind.g:
        return None
    return const.g("Subgraph")


def inline(graph: Graph) -> bool:
    """Inline every ``prim::CallFunction`` whose body is known, recursively.

    Returns True if any call was inlined. Raises InlineError, before changing
    anything, if a function calls itself or a body does not fit its call.
    """
    _check_calls(graph)
    changed = False
    work = list(graph.nodes())
    work.reverse()
    while work:
        node = work.pop()
        body = function_body(node)
        if body is None:
            for block in reversed(node.blocks()):
                work.extend(reversed(list(block.nodes())))
            continue
        # The pasted nodes may hold calls of their own, so they are visited next.
        work.extend(reversed(_inline_call(node, body)))
        changed = True
    return changed


def _calls(graph: Graph) -> Iterator[tuple[Node, Graph]]:
    for node in graph.all_nodes():
        body = function_body(node)
        if body is not None:
            yield node, body


def _check_calls(graph: Graph) -> None:
    """Walk the call graph depth-first: every call must fit its body, and no
    function may be reached again while it is being inlined (recursion)."""
    path: list[tuple[Graph, str]] = [(graph, "")]
    on_path: set[Graph] = {graph}
    checked: set[Graph] = set()
    pending: list[Iterator[tuple[Node, Graph]]] = [_calls(graph)]
    while pending:
        item = next(pending[-1], None)
        if item is None:
            pending.pop()
            body, _ = path.pop()
            on_path.discard(body)
            checked.add(body)
            continue
        call, body = item
        _check_arity(call, body)
        if body in on_path:
            chain = " -> ".join([name for _, name in path[1:]] + [_name(call)])
            raise InlineError(
                f"cannot inline `{node_summary(call)}`: function {_name(call)} calls itself ({chain}), "
                "so inlining it would never end"
            )
        if body not in checked:
            path.append((body, _name(call)))
            on_path.add(body)
            pending.append(_calls(body))


def _check_arity(call: Node, body: Graph) -> None:
    args, results = len(call.inputs()) - 1, len(call.outputs())
    if args != len(body.inputs()) or results != len(body.outputs()):
        raise InlineError(
            f"cannot inline `{node_summary(call)}`: the body of {_name(call)} takes "
            f"{len(body.inputs())} inputs and returns {len(body.outputs())} values, but the call "
            f"passes {args} arguments and expects {results} results"
        )


def _name(call: Node) -> str:
    const = call.inputs()[0].node
    if const.has_attribute("name") and const.attribute_kind("name") is AttributeKind.s:
        return repr(const.s("name"))
    return "%" + call.inputs()[0].debug_name()


def _inline_call(call: Node, body: Graph) -> list[Node]:
    """Copy ``body`` in place of ``call``; returns the copied top-level nodes."""
    args = call.inputs()[1:]
    graph = call.graph
    mapping: dict[Value, Value] = dict(zip(body.inputs(), args, strict=True))
    pasted: list[Node] = []
    for inner in body.nodes():
        # Attributes (Function bodies included) are shared, not copied, so a
        # recursive function still points at the same body after pasting.
        clone = graph.create_clone(inner, mapping.__getitem__)
        clone.insert_before(call)
        pasted.append(clone)
        mapping.update(zip(inner.outputs(), clone.outputs(), strict=True))
    created = {value for node in pasted for value in node.outputs()}
    for old, result in zip(call.outputs(), body.outputs(), strict=True):
        new = mapping[result]
        old.replace_all_uses_with(new)
        # Keep the caller's name for the result, unless the body just hands
        # back one of the caller's own values.
        if old.has_debug_name() and new in created:
            name = old.debug_name()
            old.set_debug_name(None)
            new.set_debug_name(name)
    call.destroy()
    return pasted
