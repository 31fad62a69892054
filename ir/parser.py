"""``parse_ir(text)``: read TorchScript's textual IR into a :class:`Graph`.

Accepts everything PyTorch prints for a graph: source comments (kept as
``node.source_location``), the ``, scope: __module.layer1`` of a traced
module's nodes (``node.scope``), nodes without outputs, ``Function``
constants, ``Tensor(requires_grad=0)`` and the legacy executor's
``Tensor(*, *)`` types, ``Enum<...>`` types, type-list attributes such as
``prim::RequiresGradCheck[types=[...]]``, dict attributes, ``annotate(...)``
constants, tensor constants (``<Tensor>`` and ``[<Tensors>]`` included), and
the ``with prim::DifferentiableGraph_0 = graph(...)`` sections of subgraphs.
It refuses what torch's parser refuses: a negative size in a tensor type, a
node with more outputs than its operator's schema returns.

Any malformed text raises :class:`IRParseError` with ``line:col``; nesting is
handled with explicit stacks or bounded depth, so no input reaches Python's
recursion limit. Tokens live in ``parse_tokens``, types in ``parse_types``,
attribute values in ``parse_attributes``.
"""

from __future__ import annotations

import re
from typing import Any

from .attributes import AttributeKind
from .collector import paused_gc
from .errors import IRParseError, IRVerifyError
from .graph import Graph
from .lint import lint
from .node import Node, Value
from .operators import schemas_for
from .parse_attributes import AttributeParsing, adopt_declared_type
from .parse_tokens import END, SCOPE_PREFIX, shorten
from .parse_types import MAX_NESTING
from .python_op import PYTHON_NAME, PYTHON_OP, PYTHON_SCALARS
from .types import TENSOR, Type

__all__ = ["parse_ir", "parse_type", "MAX_NESTING", "MAX_BLOCK_NESTING"]

# Blocks are read with an explicit stack, so this only bounds absurd input:
# torch prints (and its own parser reads) ifs nested thousands deep.
MAX_BLOCK_NESTING = 10_000
_GROUP_KIND = re.compile(r"^(.+)_(\d+)$")
_BLOCK_NAME = re.compile(r"^block\d+$")


class _Parser(AttributeParsing):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.node_tokens: dict[Node, int] = {}
        self.numbered: list[tuple[Value, int]] = []
        self.named: list[tuple[Value, str]] = []
        self.anonymous: list[Value] = []  # %01, %²...: numbers that cannot be kept as they are
        self.hidden: dict[str, str] = {}  # names defined but out of scope here, and why
        self.section_depth = 0
        self.max_returns: dict[str, int | None] = {}  # kind -> most outputs its schemas return

    # -- graphs ----------------------------------------------------------------
    def parse_graph(self) -> Graph:
        if self.section_depth > MAX_NESTING:
            raise self.error(f"subgraph sections nest more than {MAX_NESTING} levels deep")
        graph = Graph()
        env: dict[str, Value] = {}
        defined_at: dict[str, int] = {}
        group_refs: dict[str, list[Node]] = {}
        self.hidden = {}
        if self.toks[self.i] != "graph":
            raise self.error(f"expected 'graph(' at the start, found {self.describe(self.toks[self.i])}")
        self.i += 1
        self.expect("(", "'(' after graph")
        first = True
        while not self.accept(")"):
            if not first:
                self.expect(",", "',' or ')' in the graph's inputs")
            first = False
            index = self.i
            name = self.value_name()
            type_ = self.parse_type() if self.accept(":") else TENSOR
            self.define(graph.block.add_input(type_=type_), name, index, env, defined_at)
        self.expect(":", "':' after the graph's inputs")
        self.parse_body(graph, env, defined_at, group_refs)
        self.attach_sections(group_refs)
        return graph

    def define(
        self,
        value: Value,
        name: str,
        index: int,
        env: dict[str, Value],
        defined_at: dict[str, int],
        scope: list[str] | None = None,
        visible: bool = True,
    ) -> None:
        """Bind ``%name``; ``scope`` lists the names of the open block, which go out of scope with it."""
        # Names are unique in the whole graph, also across sibling blocks.
        if name in defined_at:
            first_line = self.error("", defined_at[name]).line
            raise self.error(f"value %{shorten(name)} is defined twice (first on line {first_line})", index)
        if visible:
            env[name] = value
        else:  # a control-flow node's output: defined only after the node's blocks
            self.hidden[name] = "pending"
        defined_at[name] = index
        if scope is not None:
            scope.append(name)
        if not name.isdigit():
            self.named.append((value, name))
        elif name.isascii() and len(name) <= 18 and (name[0] != "0" or name == "0"):
            self.numbered.append((value, int(name)))
        else:
            self.anonymous.append(value)  # %01 is not %1 (as in torch); it gets a fresh number

    def lookup(self, env: dict[str, Value], defined_at: dict[str, int] | None = None) -> Value:
        index = self.i
        name = self.value_name()
        value = env.get(name)
        if value is None:
            reason = self.hidden.get(name) if defined_at is not None and name in defined_at else None
            if reason is None:
                raise self.error(f"undefined value %{shorten(name)}", index)
            line = self.error("", defined_at[name]).line  # type: ignore[index]
            if reason == "pending":
                raise self.error(f"value %{shorten(name)} is used inside a block of the node that defines it (line {line})",
                                 index)
            raise self.error(f"value %{shorten(name)} is used outside the block that defines it (line {line}); "
                             "pass it out through the block's '-> (...)'", index)
        return value

    def value_list(self, env: dict[str, Value], context: str, defined_at: dict[str, int] | None = None) -> list[Value]:
        self.expect("(", f"'(' to open {context}")
        values: list[Value] = []
        while not self.accept(")"):
            if values:
                self.expect(",", f"',' or ')' in {context}")
            values.append(self.lookup(env, defined_at))
        return values

    def parse_body(
        self, graph: Graph, env: dict[str, Value], defined_at: dict[str, int], group_refs: dict[str, list[Node]]
    ) -> None:
        """Statements, nested blocks and the final return, with an explicit block stack."""
        # Each frame: [block, last node parsed in it (may own the next blockN),
        # that node's outputs while its blocks are read, names defined in the block].
        stack: list[list[Any]] = [[graph.block, None, None, None]]
        toks = self.toks
        while True:
            tok = toks[self.i]
            frame = stack[-1]
            if frame[2] is not None and not _BLOCK_NAME.match(tok):
                # The owner's blocks are done: its outputs come into scope.
                for name, value in frame[2]:
                    env[name] = value
                    del self.hidden[name]
                frame[2] = None
            if tok == "return" and len(stack) == 1:
                self.node_tokens[graph.block.return_node] = self.i
                self.i += 1
                for value in self.value_list(env, "the graph's outputs", defined_at):
                    graph.block.register_output(value)
                return
            if tok == "->":
                if len(stack) == 1:
                    raise self.error("'->' outside of a block")
                self.node_tokens[frame[0].return_node] = self.i
                self.i += 1
                for value in self.value_list(env, "the block's outputs", defined_at):
                    frame[0].register_output(value)
                for name in frame[3]:  # the block's values go out of scope
                    del env[name]
                    self.hidden[name] = "closed"
                stack.pop()
                continue
            if _BLOCK_NAME.match(tok):
                owner = frame[1]
                if owner is None:
                    raise self.error(f"{shorten(tok)} must follow the node that owns it")
                if len(stack) > MAX_BLOCK_NESTING:
                    raise self.error(f"blocks nest more than {MAX_BLOCK_NESTING} levels deep")
                self.i += 1
                block = owner.add_block()
                tok = shorten(tok)
                self.expect("(", f"'(' after {tok}")
                scope: list[str] = []
                first = True
                while not self.accept(")"):
                    if not first:
                        self.expect(",", "',' or ')' in the block's parameters")
                    first = False
                    index = self.i
                    name = self.value_name()
                    type_ = self.parse_type() if self.accept(":") else TENSOR
                    self.define(block.add_input(type_=type_), name, index, env, defined_at, scope)
                self.expect(":", f"':' after {tok}(...)")
                stack.append([block, None, None, scope])
                continue
            if tok == END:
                what = "the block's '-> (...)'" if len(stack) > 1 else "'return (...)'"
                raise self.error(f"unexpected end of input: expected {what} (the text is cut short)")
            if tok == "return":
                raise self.error("'return' inside a block; blocks end with '-> (...)'")
            frame[1], frame[2] = self.parse_node(graph, frame[0], env, defined_at, group_refs, frame[3])

    def parse_node(
        self,
        graph: Graph,
        block: Any,
        env: dict[str, Value],
        defined_at: dict[str, int],
        group_refs: dict[str, list[Node]],
        scope: list[str] | None = None,
    ) -> tuple[Node, list[tuple[str, Value]] | None]:
        """One statement; also returns the outputs of a node with blocks, defined after them."""
        toks = self.toks
        start = self.i
        outputs: list[tuple[str, Type, int]] = []
        if toks[self.i] != "=":
            while True:
                index = self.i
                name = self.value_name()
                type_ = self.parse_type() if toks[self.i] == ":" and self._skip() else TENSOR
                outputs.append((name, type_, index))
                if toks[self.i] != ",":
                    break
                self.i += 1
        self.expect("=", "'=' after the node's outputs")
        kind_index = self.i
        if toks[self.i] == "^":
            node = self.python_op_head(graph)
            kind = short_kind = PYTHON_OP
        else:
            kind = self.take()
            short_kind = shorten(kind)
            if "::" not in kind or not (kind[0].isalpha() or kind[0] == "_"):
                raise self.error(f"expected an operator name such as aten::mul, found {self.describe(kind)}", kind_index)
            node = Node(graph, kind)
        if toks[self.i] == "[" and toks[self.i + 1] == "]" and kind == PYTHON_OP:
            self.i += 2  # a Python op always prints its attribute list, often empty
        elif toks[self.i] == "[":
            self.i += 1
            while True:
                name_index = self.i
                attr = self.take()
                if not (attr[0].isalpha() or attr[0] == "_"):
                    raise self.error(f"expected an attribute name, found {self.describe(attr)}", name_index)
                if attr in node._attrs:
                    raise self.error(f"attribute {shorten(attr)} is given twice", name_index)
                self.expect("=", f"'=' after attribute {shorten(attr)}")
                akind, avalue = self.attribute_value()
                node._attrs[attr] = (akind, avalue)
                if self.accept("]"):
                    break
                self.expect(",", "',' or ']' in the attribute list")
        if PYTHON_NAME in node._attrs:
            node._attrs[PYTHON_SCALARS] = (AttributeKind.s, self.python_scalars())
        self.expect("(", f"'(' to open the inputs of {short_kind}")
        if toks[self.i] != ")":
            while True:
                node.add_input(self.lookup(env, defined_at))
                if toks[self.i] != ",":
                    break
                self.i += 1
        self.expect(")", f"',' or ')' in the inputs of {short_kind}")
        tok = toks[self.i]
        if tok[0] == "," and tok.startswith(SCOPE_PREFIX):
            node.scope = tok[len(SCOPE_PREFIX):].rstrip()
            self.i += 1
        if outputs:
            most = self.max_returns.get(kind, -1)
            if most == -1 or (most is not None and len(outputs) > most):
                self.check_output_count(kind, outputs)
        location = self.comments.get(self.i) if self.comments else None
        if location is not None:
            node.source_location = location
        pending: list[tuple[str, Value]] | None = None
        if toks[self.i][:5] == "block" and _BLOCK_NAME.match(toks[self.i]):
            # Its blocks follow: they cannot use the node's own outputs.
            pending = []
            for name, type_, index in outputs:
                value = node.add_output(type_)
                self.define(value, name, index, env, defined_at, scope, visible=False)
                pending.append((name, value))
        else:
            for name, type_, index in outputs:
                self.define(node.add_output(type_), name, index, env, defined_at, scope)
        if kind == "prim::Constant" and len(outputs) == 1:
            adopt_declared_type(node)
        block.append_node(node)
        self.node_tokens[node] = start
        if kind[-1].isdigit() and _GROUP_KIND.match(kind):
            group_refs.setdefault(kind, []).append(node)
        return node, pending

    def python_op_head(self, graph: Graph) -> Node:
        """``^name``: a call of a Python function TorchScript could not compile
        (``@torch.jit.ignore``), read as ``prim::PythonOp`` keeping the name; its
        scalar arguments follow its attributes (``python_scalars``)."""
        self.i += 1  # "^"
        name_index = self.i
        name = self.take()
        if not (name[0].isalpha() or name[0] == "_"):
            raise self.error(f"expected a Python function's name after '^', found {self.describe(name)}", name_index)
        node = Node(graph, PYTHON_OP)
        node._attrs[PYTHON_NAME] = (AttributeKind.s, name)
        return node

    def python_scalars(self) -> str:
        """The text between a Python op's scalar-argument parentheses, as written."""
        open_index = self.i
        self.expect("(", "'(' to open a Python op's scalar arguments")
        depth = 1
        while depth:
            tok = self.toks[self.i]
            if tok == END or tok[0] == "%":  # scalars hold no values: the ')' is missing
                raise self.error("a Python op's scalar arguments are not closed with ')'", open_index)
            self.i += 1
            if tok in ("(", "[", "{"):
                depth += 1
            elif tok in (")", "]", "}"):
                depth -= 1
        start = self.stream_offset(open_index) + 1
        return self.text[start:self.stream_offset(self.i - 1)]

    def check_output_count(self, kind: str, outputs: list[tuple[str, Type, int]]) -> None:
        """Refuse more outputs than every schema of ``kind`` returns, as torch's parser does."""
        most = self.max_returns.get(kind, -1)
        if most == -1:  # not looked up yet in this parse
            schemas = schemas_for(kind)
            most = None if not schemas or any(s.is_varret for s in schemas) else max(
                len(s.returns) for s in schemas)
            self.max_returns[kind] = most
        if most is not None and len(outputs) > most:
            widest = max(schemas_for(kind), key=lambda s: len(s.returns))
            raise self.error(f"{shorten(kind)} returns {most} value{'s' if most != 1 else ''}, not "
                             f"{len(outputs)} (schema: {str(widest)[:60]})", outputs[most][2])

    def _skip(self) -> bool:
        self.i += 1
        return True

    def attach_sections(self, group_refs: dict[str, list[Node]]) -> None:
        """Read the ``with kind_N = graph(...)`` sections that belong to this graph."""
        while self.toks[self.i] == "with" and self.peek(1) in group_refs:
            self.i += 1
            name = self.take()
            self.expect("=", f"'=' after with {shorten(name)}")
            self.section_depth += 1
            subgraph = self.parse_graph()
            self.section_depth -= 1
            base = _GROUP_KIND.match(name).group(1)  # type: ignore[union-attr]
            for node in group_refs.pop(name):
                node.set_kind(base)
                node._attrs = {"Subgraph": (AttributeKind.g, subgraph), **node._attrs}

    def finish(self, graph: Graph) -> None:
        tok = self.toks[self.i]
        if tok == "with":
            raise self.error(f"section {self.describe(self.peek(1))} matches no node of the graph above it")
        if tok != END:
            raise self.error(f"unexpected {self.describe(tok)} after the graph's return")
        # Numbered values keep their numbers; the others get fresh numbers after them.
        top = max((n for _, n in self.numbered), default=-1) + 1
        graphs = {id(graph): graph}
        for value, number in self.numbered:
            value.unique = number
            graphs[id(value.graph)] = value.graph
        for value in self.anonymous:
            value.unique = top
            top += 1
            graphs[id(value.graph)] = value.graph
        for offset, (value, name) in enumerate(self.named):
            value.unique = top + offset
            value.graph._rename(value, name)
            graphs[id(value.graph)] = value.graph
        for each in graphs.values():
            each._next_unique = top + len(self.named)

    def verify(self, graph: Graph) -> None:
        try:
            lint(graph)
            for node in graph.all_nodes():
                if "Subgraph" in node._attrs and node._attrs["Subgraph"][0] is AttributeKind.g:
                    lint(node._attrs["Subgraph"][1])
        except IRVerifyError as exc:
            node = exc.node
            index = self.node_tokens.get(node, self.i) if isinstance(node, Node) else self.i
            raise self.error(str(exc).split(": at `")[0], index) from None


def parse_ir(text: str | bytes) -> Graph:
    """Parse TorchScript's textual IR; raise IRParseError (a ValueError) with line:col on bad input."""
    if isinstance(text, (bytes, bytearray)):
        data = bytes(text)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            # Report the line and column of the bad byte, not 1:<byte offset>.
            before = data[: exc.start].decode("utf-8")
            line_start = before.rfind("\n") + 1
            line_end = data.find(b"\n", exc.start)
            source = data[:line_end if line_end >= 0 else len(data)].decode("utf-8", "replace")[line_start:]
            raise IRParseError(
                f"input is not UTF-8 text (byte {exc.start} is 0x{data[exc.start]:02x})",
                before.count("\n") + 1, len(before) - line_start + 1, source,
            ) from None
    if not isinstance(text, str):
        raise TypeError(f"parse_ir expects text, got {type(text).__name__}")
    parser = _Parser(text)
    try:
        with paused_gc():
            graph = parser.parse_graph()
        parser.finish(graph)
        parser.verify(graph)
    except IRParseError:
        raise
    except (RecursionError, MemoryError):
        raise parser.error("input is nested too deeply or too large to parse") from None
    except Exception as exc:  # a parser bug must still come out as a parse error
        raise parser.error(f"cannot parse here ({type(exc).__name__}: {shorten(str(exc))})") from None
    return graph


def parse_type(text: str) -> Type:
    """Parse one type, e.g. ``Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)``."""
    parser = _Parser(text)
    try:
        result = parser.parse_type()
        if parser.peek() != END:
            raise parser.error(f"unexpected {parser.describe(parser.peek())} after the type")
        return result
    except IRParseError:
        raise
    except Exception as exc:
        raise parser.error(f"cannot parse type ({type(exc).__name__}: {shorten(str(exc))})") from None
