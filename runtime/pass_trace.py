"""The pass trace: a snapshot of each graph after each pass, for the viewer to step through.

    trace = PassTrace()
    run_optimization(graph, record=trace.pipeline_recorder(graph))
    for step in trace:
        print(step.pass_name, step.changed, step.text())

:meth:`PassTrace.record` appends a :class:`Step`. Every Node and Value gets a
*stable id* the first time the trace sees it and keeps it while it lives, so a
node untouched by a pass has the same id before and after it; a node created by
a pass gets a new id. Snapshots are trees of immutable records
(:mod:`gradview.runtime.trace_records`) interned per id: a node whose record
did not change since the trace last saw it is stored once, however many steps
show it.

``which`` names the graph a step shows, a :class:`GraphName` (``main``,
``forward k``, ``backward k`` or ``backward executor k``). :class:`PassTrace` is
the :class:`~gradview.runtime.trace_types.Recorder` the executor and
``differentiate`` call. A disabled trace (``PassTrace(enabled=False)`` or :data:`NULL_TRACE`) records
nothing and costs one attribute test per call.

Traces save to and load from versioned JSON (``{"format": "gradview-trace",
"version": 2, ...}``; version 1 files, with legacy graph names, still load); a file that is not such a trace raises
:class:`TraceFormatError`, a ``ValueError`` with a one-line message.
"""

from __future__ import annotations

import difflib
import enum
import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gradview.ir.attributes import AttributeKind, format_attribute
from gradview.ir.nesting import MAX_RUNNABLE_NESTING

from .bounded_json import check_depth
from .note_shapes import check_notes
from .trace_records import BlockRecord, NodeRecord, ValueRecord, print_record, walk_records
from .trace_types import MAIN_GRAPH, GraphName, Note, notes_dict

if TYPE_CHECKING:
    from gradview.autodiff import Gradient
    from gradview.autodiff.differentiate import StepRecorder
    from gradview.autodiff.reverse import ReverseDetails
    from gradview.ir import Block, Graph, Node, Value

__all__ = [
    "FORMAT",
    "GraphName",
    "NULL_TRACE",
    "VERSION",
    "PassTrace",
    "Step",
    "TraceFormatError",
    "normalize_pass_name",
    "which_label",
]

FORMAT = "gradview-trace"
VERSION = 2
_READS = (1, 2)  # versions this gradview loads

class TraceFormatError(ValueError):
    """A file is not a trace this version can read; the message is one line naming the file."""


def normalize_pass_name(name: str) -> str:
    """``EliminateDeadCode``, ``eliminate_dead_code`` and ``eliminate-dead-code`` all give ``eliminatedeadcode``."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


def which_label(which: GraphName) -> str:
    """The printed form of a graph name (``main``, ``forward 0``): what ``==`` headers show."""
    return str(which)


@dataclass(frozen=True, eq=True)
class Step:
    """One snapshot: ``graph`` as it was after the pass ``pass_name`` ran on graph ``which``."""

    index: int
    pass_name: str
    which: GraphName
    graph: BlockRecord
    changed: bool
    seconds: float
    annotations: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.which, GraphName):
            raise TypeError(f"Step.which is a GraphName, not {self.which!r}")

    def text(self) -> str:
        """The graph in TorchScript's textual IR (parses back with :func:`gradview.ir.parse_ir`)."""
        return print_record(self.graph)

    def diff(self, previous: Step | None, context: int = 3) -> str:
        """A unified diff from ``previous``'s text to this step's ('' when equal)."""
        before = previous.text() if previous is not None else ""
        old_name = f"{previous.index} {previous.pass_name}" if previous is not None else "(none)"
        lines = difflib.unified_diff(
            before.splitlines(keepends=True),
            self.text().splitlines(keepends=True),
            fromfile=old_name,
            tofile=f"{self.index} {self.pass_name}",
            n=context,
        )
        return "".join(lines)

    def nodes(self) -> Iterator[NodeRecord]:
        """Every node record, nested blocks and subgraphs included."""
        return walk_records(self.graph)

    def node_ids(self) -> set[int]:
        return {n.id for n in self.nodes()}

    def value_ids(self) -> set[int]:
        ids = {v.id for v in self.graph.params}
        pending = [self.graph]
        while pending:
            block = pending.pop()
            ids.update(v.id for v in block.params)
            for node in block.nodes:
                ids.update(v.id for v in node.outputs)
                pending.extend(node.blocks)
                if node.subgraph is not None:
                    pending.append(node.subgraph)
        return ids

    def node(self, node_id: int) -> NodeRecord | None:
        for n in self.nodes():
            if n.id == node_id:
                return n
        return None


class PassTrace:
    """Records a :class:`Step` per :meth:`record` call; iterate it or index it for the steps."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.steps: list[Step] = []
        self._ids: dict[Any, int] = {}  # live Node/Value -> stable id (identity hashing)
        self._next_id = 0
        self._last: dict[int, NodeRecord] = {}  # node id -> the record last built for it
        self._strings: dict[str, str] = {}
        self._type_text: dict[Any, str] = {}
        self._prune_at = 4096
        self._clock: float | None = None
        # Graph name (printed, "forward 0") -> (shape, dtype name) of each value its
        # DifferentiableGraph's first run captured for backward, in the Gradient's
        # order (captured inputs, then captured outputs); (None, None) for a non-array.
        self.saved_measured: dict[str, list[tuple[tuple[int, ...] | None, str | None]]] = {}
        # The model's modules, when the graph came from one: dotted path (as
        # ``named_modules()`` and ``gradview.ir.module_scope.module_path`` write it;
        # "" for the model itself) -> the module's class name (``BasicBlock``).
        self.module_types: dict[str, str] = {}

    # -- sequence protocol -----------------------------------------------------
    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self) -> Iterator[Step]:
        return iter(self.steps)

    def __getitem__(self, index: int) -> Step:
        return self.steps[index]

    def autodiff_mode(self) -> str | None:
        """The autodiff mode the executor sliced with ("torch" or "extended"), as its
        CreateAutodiffSubgraphs step recorded it; None when no step says (a JIT log)."""
        for step in self.steps:
            mode = step.annotations.get(Note.AUTODIFF_MODE)
            if isinstance(mode, str):
                return mode
        return None

    def inline_threshold(self) -> int | None:
        """The threshold InlineAutodiffSubgraphs ran with, as its step recorded it;
        None when no step says (nothing was differentiated, or a JIT log)."""
        for step in self.steps:
            threshold = step.annotations.get(Note.INLINE_THRESHOLD)
            if isinstance(threshold, int) and not isinstance(threshold, bool):
                return threshold
        return None

    def min_group_size(self) -> int | None:
        """The minimum group size CreateAutodiffSubgraphs ran with, as its step recorded
        it; None when no step says (nothing needed grad, or a JIT log)."""
        for step in self.steps:
            size = step.annotations.get(Note.MIN_GROUP_SIZE)
            if isinstance(size, int) and not isinstance(size, bool):
                return size
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PassTrace) and self.steps == other.steps

    __hash__ = None  # type: ignore[assignment]

    # -- ids -------------------------------------------------------------------
    def id_of(self, obj: Node | Value) -> int:
        """The stable id of a live Node or Value, assigning the next one on first sight."""
        ident = self._ids.get(obj)
        if ident is None:
            ident = self._ids[obj] = self._next_id
            self._next_id += 1
        return ident

    def inherit_ids(self, copies: dict[Any, Any]) -> None:
        """Give each copy the id of its original (a pass that clones nodes, like
        lambdaLiftReverse, then reads as moving them, not as new nodes)."""
        for original, copy in copies.items():
            ident = self._ids.get(original)
            if ident is not None and copy not in self._ids:
                self._ids[copy] = ident

    def _prune(self) -> None:
        """Forget ids of destroyed nodes and erased values (their objects can then be freed)."""
        from gradview.ir import Node

        dead = []
        for obj in self._ids:
            if isinstance(obj, Node):
                alive = obj.owning_block is not None
            else:
                node = obj.node
                alive = (
                    node.owning_block is not None
                    and obj.offset < len(node._outputs)
                    and node._outputs[obj.offset] is obj
                )
            if not alive:
                dead.append(obj)
        for obj in dead:
            ident = self._ids.pop(obj)
            self._last.pop(ident, None)
        self._prune_at = max(4096, 2 * len(self._ids))

    # -- snapshots -------------------------------------------------------------
    def _intern(self, text: str) -> str:
        return self._strings.setdefault(text, text)

    def _type_str(self, type_: Any) -> str:
        try:
            text = self._type_text.get(type_)
        except TypeError:
            return self._intern(str(type_))
        if text is None:
            text = self._type_text[type_] = self._intern(str(type_))
        return text

    def _values(self, values: list[Value]) -> tuple[ValueRecord, ...]:
        return tuple(
            ValueRecord(self.id_of(v), self._intern(v.debug_name()), self._type_str(v._type)) for v in values
        )

    def _node(self, node: Node) -> NodeRecord:
        nid = self.id_of(node)
        attrs = []
        subgraph = None
        for name, (kind, value) in node._attrs.items():
            if name == "Subgraph" and kind is AttributeKind.g:
                subgraph = self._block(value.block)
            else:
                attrs.append((name, self._intern(format_attribute(kind, value))))
        record = NodeRecord(
            nid,
            node._kind,
            tuple(self.id_of(v) for v in node._inputs),
            self._values(node._outputs),
            tuple(attrs),
            node.source_location,
            tuple(self._block(b) for b in node._blocks),
            subgraph,
            node.scope,
        )
        previous = self._last.get(nid)
        if previous is not None and previous == record:
            return previous
        self._last[nid] = record
        return record

    def _block(self, block: Block) -> BlockRecord:
        return BlockRecord(
            self._values(block.param_node._outputs),
            tuple(self._node(n) for n in block.nodes()),
            tuple(self.id_of(v) for v in block.return_node._inputs),
        )

    def snapshot(self, graph: Graph) -> BlockRecord:
        """An immutable record of ``graph`` (ids assigned to what the trace has not seen yet)."""
        return self._block(graph.block)

    # -- recording ---------------------------------------------------------------
    def record(
        self,
        pass_name: str,
        graph: Graph,
        *,
        which: GraphName = MAIN_GRAPH,
        changed: bool = True,
        seconds: float = 0.0,
        annotations: Any = None,
    ) -> Step | None:
        """Append a snapshot of ``graph`` after ``pass_name``; returns the step (None when disabled).

        ``annotations`` is a mapping keyed by :class:`Note` or an annotation
        dataclass (:mod:`gradview.runtime.trace_types`)."""
        if not self.enabled:
            return None
        if len(self._ids) > self._prune_at:
            self._prune()
        step = Step(
            index=len(self.steps),
            pass_name=pass_name,
            which=which,
            graph=self.snapshot(graph),
            changed=bool(changed),
            seconds=float(seconds),
            annotations=self._plain(notes_dict(annotations)) if annotations else {},
        )
        self.steps.append(step)
        return step

    def _plain(self, obj: Any) -> Any:
        """Annotations made immutable and JSON-friendly: Nodes/Values become their ids, lists tuples."""
        from gradview.ir import Node, Value

        if obj is None or isinstance(obj, (bool, int, float)):
            return obj
        if isinstance(obj, str):
            return str.__str__(obj)  # a Note key is stored as its plain text
        if isinstance(obj, (Node, Value)):
            return self.id_of(obj)
        if isinstance(obj, enum.Enum):
            return obj.value if isinstance(obj.value, str) else obj.name
        if isinstance(obj, Mapping):  # a pass's read-only mapping too
            return {self._plain(k): self._plain(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple, set, frozenset)):
            items = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
            return tuple(self._plain(v) for v in items)
        if hasattr(obj, "item") and callable(obj.item):
            try:
                return self._plain(obj.item())
            except (TypeError, ValueError):
                pass
        return repr(obj)

    def pipeline_recorder(
        self, graph: Graph, which: GraphName = MAIN_GRAPH
    ) -> Callable[[str, bool], None] | None:
        """A ``record(name, changed)`` callback for the pipelines in :mod:`gradview.ir.passes.pipelines`.

        A step's time is the wall time since the previous callback (or since this
        call), so it covers the pass and not the recording. None when disabled.
        """
        if not self.enabled:
            return None
        clock = [time.perf_counter()]

        def record(name: str, changed: bool) -> None:
            seconds = time.perf_counter() - clock[0]
            self.record(name, graph, which=which, changed=changed, seconds=seconds)
            clock[0] = time.perf_counter()

        return record

    def autodiff_recorder(self, k: int = 0) -> StepRecorder | None:
        """A ``record(step_name, gradient, reverse_details, changed)`` callback for ``differentiate``.

        Each call records the forward graph as ``GraphName.forward(k)`` and, once it
        exists, the backward graph as ``GraphName.backward(k)``, with the gradient's
        vjp and capture indices as annotations, and ``grad_of``: each
        ``prim::GradOf`` node's id -> the id of the forward node it
        differentiates (df's copies of GradOf nodes keep the reverse block's ids).
        """
        if not self.enabled:
            return None
        clock = [time.perf_counter()]
        # Read while the reverse block is alive; lambdaLiftReverse destroys it,
        # and its copies in df then carry the same ids.
        grad_of: dict[int, int] = {}

        def record(name: str, gradient: Gradient, rev: ReverseDetails | None, changed: bool) -> None:
            seconds = time.perf_counter() - clock[0]
            notes: dict[str, Any] = {
                Note.F_REAL_OUTPUTS: gradient.f_real_outputs,
                Note.DF_INPUT_VJPS: gradient.df_input_vjps,
                Note.DF_INPUT_CAPTURED_INPUTS: gradient.df_input_captured_inputs,
                Note.DF_INPUT_CAPTURED_OUTPUTS: gradient.df_input_captured_outputs,
                Note.DF_OUTPUT_VJPS: gradient.df_output_vjps,
            }
            if rev is not None and not rev.lifted:
                grad_of.clear()
                grad_of.update(_live_grad_of_links(self, rev.primal_of))
            if grad_of:
                notes[Note.GRAD_OF] = dict(grad_of)
            self.record(name, gradient.f, which=GraphName.forward(k), changed=changed, seconds=seconds, annotations=notes)
            if gradient.df is not None:
                if rev is not None and rev.lifted:
                    self.inherit_ids(rev.lifted)  # df's copies keep the reverse block's ids
                self.record(name, gradient.df, which=GraphName.backward(k), changed=changed, seconds=0.0, annotations=notes)
            elif rev is not None:
                # Before lambdaLiftReverse the backward pass is the detached
                # reverse block: show it, with the forward values it reads.
                view = _ReverseBlockView(rev.reverse_block)
                notes = {**notes, Note.READS_FROM_FORWARD: [self.id_of(v) for v in view.outside]}
                self.record(name, view, which=GraphName.backward(k), changed=changed, seconds=0.0, annotations=notes)
            clock[0] = time.perf_counter()

        return record

    # -- queries -------------------------------------------------------------------
    def record_saved(self, which: GraphName, metas: list[tuple[tuple[int, ...] | None, str | None]]) -> None:
        """Remember the shapes and dtypes a DifferentiableGraph's first run saved for
        backward (``which``: its forward graph); later runs do not replace them."""
        if self.enabled:
            self.saved_measured.setdefault(str(which), [(tuple(s) if s is not None else None, d) for s, d in metas])

    def previous(self, step: Step) -> Step | None:
        """The latest step before ``step`` that shows the same graph."""
        for earlier in reversed(self.steps[: step.index]):
            if earlier.which == step.which:
                return earlier
        return None

    def select(self, pass_name: str | None = None, which: GraphName | None = None) -> list[Step]:
        """Steps whose pass matches ``pass_name`` (any spelling) and whose graph is ``which``."""
        wanted = normalize_pass_name(pass_name) if pass_name else None
        return [
            s
            for s in self.steps
            if (wanted is None or normalize_pass_name(s.pass_name) == wanted)
            and (which is None or s.which == which)
        ]

    # -- save / load -----------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        table: list[list[Any]] = []
        index: dict[int, int] = {}

        def ref(record: NodeRecord | BlockRecord) -> int:
            key = id(record)
            if key not in index:
                if isinstance(record, NodeRecord):
                    entry = [
                        "n",
                        record.id,
                        record.kind,
                        list(record.inputs),
                        [list(v) for v in record.outputs],
                        [list(a) for a in record.attrs],
                        record.source,
                        [ref(b) for b in record.blocks],
                        None if record.subgraph is None else ref(record.subgraph),
                    ]
                    if record.scope is not None:  # only traced modules' nodes have one
                        entry.append(record.scope)
                else:
                    entry = [
                        "b",
                        [list(v) for v in record.params],
                        [ref(n) for n in record.nodes],
                        list(record.returns),
                    ]
                index[key] = len(table)
                table.append(entry)
            return index[key]

        steps = [
            {
                "pass": s.pass_name,
                "which": str(s.which),
                "graph": ref(s.graph),
                "changed": s.changed,
                "seconds": s.seconds,
                "annotations": _encode(s.annotations),
            }
            for s in self.steps
        ]
        out = {"format": FORMAT, "version": VERSION, "records": table, "steps": steps}
        if self.saved_measured:
            out["saved_measured"] = {
                which: [[list(shape) if shape is not None else None, dtype] for shape, dtype in metas]
                for which, metas in self.saved_measured.items()
            }
        if self.module_types:
            out["module_types"] = dict(self.module_types)
        return out

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(self.to_json(), handle, separators=(",", ":"))

    @classmethod
    def from_json(cls, data: Any, source: str = "<trace>") -> PassTrace:
        def fail(what: str) -> TraceFormatError:
            return TraceFormatError(f"{source}: malformed trace: {what}")

        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise TraceFormatError(f"{source}: not a gradview trace (no \"format\": \"{FORMAT}\" header)")
        version = data.get("version")
        if version not in _READS:
            raise TraceFormatError(
                f"{source}: unsupported trace version {version!r} (this gradview reads {', '.join(map(str, _READS))})"
            )
        trace = cls()
        try:
            built: list[NodeRecord | BlockRecord] = []
            depths: dict[int, int] = {}  # id(record) -> blocks nested in it, itself included
            for position, entry in enumerate(data["records"]):
                built.append(_decode_record(entry, built, position))
                _check_nesting(built[-1], depths, position)
            for position, raw in enumerate(data["steps"]):
                graph = built[raw["graph"]] if isinstance(raw["graph"], int) and raw["graph"] >= 0 else None
                if not isinstance(graph, BlockRecord):
                    raise ValueError(f"step {position} graph is not a graph record")
                try:
                    which = GraphName.of(raw["which"])
                except ValueError:
                    raise ValueError(f"step {position} has a bad 'which' {raw['which']!r}") from None
                if not isinstance(raw["pass"], str):
                    raise ValueError(f"step {position} pass name is not a string")
                check_depth(raw.get("annotations", {}))  # _decode recurses per level
                notes = _decode(raw.get("annotations", {}))
                if not isinstance(notes, dict):
                    raise ValueError(f"step {position} annotations are not an object")
                check_notes(notes, position)
                trace.steps.append(
                    Step(
                        index=position,
                        pass_name=raw["pass"],
                        which=which,
                        graph=graph,
                        changed=bool(raw["changed"]),
                        seconds=float(raw["seconds"]),
                        annotations=notes,
                    )
                )
            for which, metas in dict(data.get("saved_measured", {})).items():
                trace.saved_measured[str(GraphName.of(which))] = [
                    (_sizes(shape) if shape is not None else None, None if dtype is None else str(dtype))
                    for shape, dtype in metas
                ]
            module_types = data.get("module_types", {})
            if not isinstance(module_types, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in module_types.items()
            ):
                raise ValueError("module_types is not an object of strings")
            trace.module_types = dict(module_types)
        except KeyError as exc:
            raise fail(f"missing field {exc}") from None
        except (TypeError, ValueError, IndexError, AttributeError, OverflowError) as exc:
            raise fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
        ids = [n.id for s in trace.steps for n in s.nodes()] + [v for s in trace.steps for v in s.value_ids()]
        trace._next_id = max(ids, default=-1) + 1
        return trace

    @classmethod
    def load(cls, path: str) -> PassTrace:
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except RecursionError:
            raise TraceFormatError(f"{path}: malformed trace: JSON nested too deeply") from None
        except json.JSONDecodeError as exc:
            raise TraceFormatError(f"{path}: malformed trace: invalid JSON at line {exc.lineno} column {exc.colno}") from None
        except UnicodeDecodeError:
            raise TraceFormatError(f"{path}: malformed trace: not UTF-8 text") from None
        return cls.from_json(data, path)


class _NullTrace(PassTrace):
    """The disabled trace: every record call returns at once."""

    def __init__(self) -> None:
        super().__init__(enabled=False)

    def record(self, *args: Any, **kwargs: Any) -> None:
        return None


NULL_TRACE: PassTrace = _NullTrace()


# -- JSON helpers -----------------------------------------------------------------------


def _encode(obj: Any) -> Any:
    if isinstance(obj, dict):
        if all(isinstance(k, str) for k in obj) and "__pairs__" not in obj:
            return {k: _encode(v) for k, v in obj.items()}
        return {"__pairs__": [[_encode(k), _encode(v)] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return [_encode(v) for v in obj]
    return obj


def _decode(obj: Any) -> Any:
    if isinstance(obj, dict):
        if set(obj) == {"__pairs__"}:
            return {_hashable(_decode(k)): _decode(v) for k, v in obj["__pairs__"]}
        return {k: _decode(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return tuple(_decode(v) for v in obj)
    return obj


def _hashable(obj: Any) -> Any:
    hash(obj)
    return obj


def _check_nesting(record: NodeRecord | BlockRecord, depths: dict[int, int], position: int) -> None:
    """Blocks nested as deep as the IR parser reads them (what walks a trace recurses per level)."""
    if isinstance(record, BlockRecord):
        depth = 1 + max((depths[id(node)] for node in record.nodes), default=0)
    else:
        inner = [*record.blocks, *([record.subgraph] if record.subgraph is not None else [])]
        depth = max((depths[id(block)] for block in inner), default=0)
    if depth > MAX_RUNNABLE_NESTING + 1:
        raise ValueError(f"record {position}: blocks nest more than {MAX_RUNNABLE_NESTING} levels deep")
    depths[id(record)] = depth


def _sizes(raw: Any) -> tuple[int, ...]:
    """A measured shape: sizes are whole numbers, 0 or more (not 1e999, not -1)."""
    if not isinstance(raw, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in raw):
        raise ValueError(f"bad measured shape {str(raw)[:60]}")
    return tuple(raw)


def _values(raw: Any) -> tuple[ValueRecord, ...]:
    out = []
    for v in raw:
        ident, name, type_ = v
        if not isinstance(ident, int) or not isinstance(name, str) or not isinstance(type_, str):
            raise ValueError(f"bad value record {v!r}")
        out.append(ValueRecord(ident, name, type_))
    return tuple(out)


def _ints(raw: Any) -> tuple[int, ...]:
    if not isinstance(raw, list) or not all(isinstance(i, int) for i in raw):
        raise ValueError(f"bad id list {raw!r}")
    return tuple(raw)


def _decode_record(entry: Any, built: list[Any], position: int) -> NodeRecord | BlockRecord:
    def earlier(i: Any, want: type) -> Any:
        if not isinstance(i, int) or not 0 <= i < position or not isinstance(built[i], want):
            raise ValueError(f"record {position} refers to a bad record {i!r}")
        return built[i]

    if not isinstance(entry, list) or not entry:
        raise ValueError(f"record {position} is not a list")
    tag = entry[0]
    if tag == "n" and len(entry) in (9, 10):
        _, ident, kind, inputs, outputs, attrs, source, blocks, subgraph = entry[:9]
        scope = entry[9] if len(entry) == 10 else None
        if not isinstance(ident, int) or not isinstance(kind, str) or not (source is None or isinstance(source, str)):
            raise ValueError(f"record {position} is a bad node record")
        if not (scope is None or isinstance(scope, str)):
            raise ValueError(f"record {position} is a bad node record")
        attr_pairs = []
        for a in attrs:
            if not (isinstance(a, list) and len(a) == 2 and all(isinstance(x, str) for x in a)):
                raise ValueError(f"record {position} has a bad attribute {a!r}")
            attr_pairs.append((a[0], a[1]))
        return NodeRecord(
            ident,
            kind,
            _ints(inputs),
            _values(outputs),
            tuple(attr_pairs),
            source,
            tuple(earlier(b, BlockRecord) for b in blocks),
            None if subgraph is None else earlier(subgraph, BlockRecord),
            scope,
        )
    if tag == "b" and len(entry) == 4:
        _, params, nodes, returns = entry
        return BlockRecord(_values(params), tuple(earlier(n, NodeRecord) for n in nodes), _ints(returns))
    raise ValueError(f"record {position} has an unknown shape")


def _live_grad_of_links(trace: PassTrace, primal_of: dict[Any, Any]) -> dict[int, int]:
    """GradOf node id -> primal node id, for the pairs whose nodes are both still in a graph."""
    return {
        trace.id_of(grad_of): trace.id_of(primal)
        for grad_of, primal in primal_of.items()
        if grad_of.owning_block is not None and primal.owning_block is not None
    }


class _ReverseBlockView:
    """autodiff's detached reverse block seen as a graph: its parameters (the
    output gradients) followed by the forward values its nodes read, which
    become the Gradient's captures. Nodes and values are the live objects, so
    their trace ids stay the same from step to step."""

    def __init__(self, block: Block) -> None:
        defined: set[Value] = set(block.param_node._outputs)
        outside: dict[Value, None] = {}
        work = [block]
        while work:
            current = work.pop()
            defined.update(current.param_node._outputs)
            for node in current.nodes():
                for value in node._inputs:
                    if value not in defined:
                        outside[value] = None
                defined.update(node._outputs)
                work.extend(node._blocks)
        for value in block.return_node._inputs:
            if value not in defined:
                outside[value] = None
        self.outside = list(outside)
        self.block = _BlockView(block, list(block.param_node._outputs) + self.outside)


class _BlockView:
    __slots__ = ("_block", "param_node", "return_node")

    def __init__(self, block: Block, params: list[Value]) -> None:
        self._block = block
        self.param_node = _Params(params)
        self.return_node = block.return_node

    def nodes(self) -> Any:
        return self._block.nodes()


class _Params:
    __slots__ = ("_outputs",)

    def __init__(self, outputs: list[Value]) -> None:
        self._outputs = outputs
