"""Read PyTorch's ``PYTORCH_JIT_LOG_LEVEL`` output into a :class:`PassTrace`.

TorchScript writes each ``GRAPH_DUMP``/``GRAPH_UPDATE``/``GRAPH_DEBUG``
message of the source files the variable names to stderr, every line
prefixed with ``[LEVEL file.cpp:LINE] ``. Which level shows the pipeline
depends on the executor (see the README's table): on torch's default
(profiling) executor ``'>>profiling_graph_executor_impl'``, on the legacy
executor (``torch._C._jit_set_profiling_executor(False)``)
``'>>graph_executor'``; per-pass files (``'>>dead_code_elimination'``...)
work on both::

    [DUMP graph_executor.cpp:693] Optimizing the following function:
    [DUMP graph_executor.cpp:693] graph(%x.1 : Tensor,
    ...
    [DEBUG graph_executor.cpp:699] After Inline, before LowerGradOf
    [DEBUG graph_executor.cpp:699] graph(%x.1 : Float(*, requires_grad=1, device=cpu),
    ...

A message is a header line and, for dumps, a graph (the graph may start on
the header's own line: ``After EliminateDeadCodegraph(%x ...``). Each message
with a graph becomes one step, named after the pass the header says just ran:

* ``Optimizing the following function:`` -> ``Input`` (a new compilation starts);
* ``After X, before Y`` / ``After X`` / ``After X: `` / ``After X (end of ...)`` -> ``X``;
* ``Before X (beginning of F)`` -> ``F`` (the graph as F starts);
* ``Forward graph:`` / ``Backward graph:`` -> ``Differentiate``, on
  ``GraphName.forward(k)`` / ``GraphName.backward(k)``; the dumps between
  ``Optimizing diff node k`` and ``Finished optimizing diff node k`` show
  ``GraphName.forward(k)``, except the profiling executor's dumps of the whole
  graph there (``Optimizing diff node k in graph(...)``, ``After guardDifferentiableGraph``,
  ``Could not guardDifferentiableGraph k in graph(...)``);
* ``After compileSpec optimizations:`` -> ``compileSpec``;
* anything else (``NoOpt Graph:``, ``Profiled Graph:``) -> the header itself.

Messages without a graph (``[UPDATE ...] Node ... will be removed``) are kept in
the next step's ``annotations[Note.LOG]``. ``changed`` is whether the text differs
from the previous step of the same graph. Each step's annotations also carry
the header (``Note.HEADER``), the compilation number and the log line; on the
profiling executor a compilation is one executor (``Running
ProfilingGraphExecutorImpl 0x...`` names it before each run).

Each graph is named by its role and its compilation: the first compilation's
graphs are ``main``, ``forward k``, ``backward k``; a later one's carry its
number (``main (compilation 2)``: on the legacy executor, typically the
backward graph's own executor). Consecutive dumps of one graph are matched
structurally (:mod:`gradview.runtime.graph_match`), so a node keeps its id
from dump to dump and an unchanged dump reads ``+0 -0``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gradview.ir import Graph, IRParseError, IRVerifyError, check_block_depth, parse_ir
from gradview.runtime.graph_match import match_graphs
from gradview.runtime.pass_trace import PassTrace, TraceFormatError
from gradview.runtime.trace_types import GraphName, Note

__all__ = ["JitLogError", "LogMessage", "parse_jit_log", "load_jit_log", "split_messages", "pass_name_of"]

_PREFIX = re.compile(r"^\[(?P<level>[A-Z]+) (?P<where>[^\]\s]+:\d+)\] ?(?P<text>.*)$")
_DIFF_NODE = re.compile(r"^Optimizing diff node (\d+)")
# "graph(%x : ..." or "graph():" after a header's last word, on the header's own line.
_INLINE_GRAPH = re.compile(r"graph\((?:%|\):)")
# Dumps of the whole graph made while a diff node is being optimized (profiling executor).
_WHOLE_GRAPH_HEADERS = ("Optimizing diff node", "After guardDifferentiableGraph", "Could not guardDifferentiableGraph")
_FINISHED = re.compile(r"^Finished optimizing diff node (\d+)")
_RUNNING = re.compile(r"^Running ProfilingGraphExecutorImpl (0x[0-9a-fA-F]+)")
_PLAN_DONE = ("NoOpt Graph", "Profiled Graph", "Optimized Graph")  # a profiling executor's plan is made


class JitLogError(TraceFormatError):
    """A JIT log that cannot be read (no dumps, or a dumped graph that does not parse)."""


@dataclass
class LogMessage:
    level: str
    where: str
    line: int  # 1-based line of the header in the log
    header: str
    graph: str | None  # the graph text, when the message dumps one


def _is_graph_line(text: str) -> bool:
    return text.startswith((" ", "graph(", "with ", ")"))


def split_messages(text: str) -> list[LogMessage]:
    """The log's messages; lines without a ``[LEVEL file:line]`` prefix are ignored.

    A header may run into its graph on one line (``After EliminateDeadCodegraph(%x ...``,
    ``Optimizing diff node 0 in graph(...``): the graph starts at its ``graph(``.
    """
    messages: list[LogMessage] = []
    current: LogMessage | None = None
    graph_lines: list[str] = []

    def close() -> None:
        nonlocal current
        if current is not None:
            current.graph = "\n".join(graph_lines) + "\n" if graph_lines else None
            messages.append(current)
        current = None
        graph_lines.clear()

    prefix = "\x00"  # the previous line's "[LEVEL file:line] ": most lines repeat it
    level = where = ""
    for number, raw in enumerate(text.splitlines(), 1):
        if raw.startswith(prefix):
            body = raw[len(prefix):]
            same = current is not None
        else:
            match = _PREFIX.match(raw)
            if match is None:
                continue
            level, where, body = match["level"], match["where"], match["text"]
            start = match.start("text")
            prefix = raw[:start] if raw[start - 1] == " " else "\x00"
            same = current is not None and current.where == where and current.level == level
        if same and (graph_lines or body.startswith("graph(")) and _is_graph_line(body):
            graph_lines.append(body)
            continue
        close()
        inline = _INLINE_GRAPH.search(body)
        if body.startswith("graph("):
            # A dump without a header line (GRAPH_DUMP("", graph)).
            current = LogMessage(level, where, number, "", None)
            graph_lines.append(body)
        elif inline is not None:
            current = LogMessage(level, where, number, body[: inline.start()].rstrip(), None)
            graph_lines.append(body[inline.start():])
        else:
            current = LogMessage(level, where, number, body.rstrip(), None)
    close()
    return messages


def pass_name_of(header: str) -> str:
    """The pass a dump's header says just ran (see the module docstring)."""
    text = header.strip()
    if text.startswith("Optimizing the following function"):
        return "Input"
    match = _DIFF_NODE.match(text)
    if match:
        return match[0]
    if text.startswith(("Forward graph", "Backward graph")):
        return "Differentiate"
    match = re.match(r"^Before (\S+?)\s*\(beginning of (\w+)\)", text)
    if match:
        return match[2]
    match = re.match(r"^After (.+?)\s*(?:,\s*before\b.*|\(.*\)|:.*)?$", text)
    if match:
        name = match[1].strip().rstrip(":").strip()
        if name == "compileSpec optimizations":
            return "compileSpec"
        return name or text
    return text.rstrip(":").strip() or "Dump"


def parse_jit_log(text: str, source: str = "<log>") -> PassTrace:
    """A trace with one step per dumped graph of a ``PYTORCH_JIT_LOG_LEVEL`` log."""
    trace = PassTrace()
    compilation = 0
    diff_node: int | None = None
    pending_log: list[str] = []
    last: dict[GraphName, tuple[str, Graph]] = {}  # each graph's previous dump: text, parsed
    executors: dict[str, int] = {}  # profiling executor's address -> its compilation number
    running: list[int] = []  # profiling executors whose plan is being made, innermost last
    address: str | None = None  # the profiling executor that ran last
    messages = split_messages(text)
    for message in messages:
        header = message.header
        if message.graph is None:
            if header.startswith("Optimizing the following function"):
                compilation = max([compilation, *executors.values()]) + 1
            match = _RUNNING.match(header)
            if match:
                # The profiling executor names itself before each run; a pass of one
                # executor (DecomposeOps) may run another, whose dumps come in between.
                address = match[1]
                if match[1] not in executors:
                    executors[match[1]] = max([compilation, *executors.values()]) + 1
                compilation = executors[match[1]]
                if compilation in running:
                    del running[running.index(compilation) + 1:]
                else:
                    running.append(compilation)
                diff_node = None
                continue
            match = _DIFF_NODE.match(header)
            if match:
                diff_node = int(match[1])
            elif _FINISHED.match(header):
                diff_node = None
            elif header:
                pending_log.append(f"[{message.level} {message.where}] {header}")
            continue
        name = pass_name_of(header)
        if name == "Input":
            compilation += 1
            diff_node = None
        match = _DIFF_NODE.match(header)
        if match:  # "Optimizing diff node k in graph(...)": the whole graph, before k's turn
            diff_node = int(match[1])
        number = compilation if compilation > 1 else None  # the first compilation's graphs go unnumbered
        which = GraphName.main(number)
        if header.startswith("Backward graph"):
            which = GraphName.backward(diff_node or 0, number)
        elif diff_node is not None and not header.startswith(_WHOLE_GRAPH_HEADERS):
            which = GraphName.forward(diff_node, number)
        previous = last.get(which)
        if previous is not None and previous[0] == message.graph:
            graph = previous[1]  # passes that change nothing dump the same text again
        else:
            try:
                graph = parse_ir(message.graph)
                check_block_depth(graph)  # what reads a trace walks blocks recursively
            except IRParseError as exc:
                line = message.line + exc.line - (0 if header and not _INLINE_GRAPH.search(header) else 1)
                raise JitLogError(
                    f"{source}:{line}: cannot parse the graph dumped after {header!r}: {exc.message}"
                ) from None
            except IRVerifyError as exc:
                raise JitLogError(f"{source}:{message.line}: the graph dumped after {header!r}: {exc}") from None
            if previous is not None and address is not None and which.is_main and _inputs(previous[1]) != _inputs(graph):
                # A freed executor's address reused by the next one (a helper graph's
                # executor, then the user's): the same graph never changes its inputs.
                compilation = max([compilation, *executors.values()]) + 1
                executors[address] = compilation
                if running:
                    running[-1] = compilation
                which, previous = GraphName.main(compilation), None
            if previous is not None:
                trace.inherit_ids(match_graphs(previous[1], graph))
        annotations: dict[str, object] = {
            Note.HEADER: header,
            Note.COMPILATION: compilation,
            Note.LOG_LINE: message.line,
        }
        if pending_log:
            annotations[Note.LOG] = list(pending_log)
            pending_log.clear()
        step = trace.record(
            name,
            graph,
            which=which,
            changed=previous is not None and previous[0] != message.graph,
            seconds=0.0,
            annotations=annotations,
        )
        assert step is not None
        last[which] = (message.graph, graph)
        if running and header.startswith(_PLAN_DONE):  # back to the executor that ran this one
            running.pop()
            compilation = running[-1] if running else compilation
    if not trace.steps:
        raise JitLogError(f"{source}: {_why_no_graphs(messages)}")
    return trace


def _inputs(graph: Graph) -> list[str]:
    return [value.debug_name() for value in graph.inputs()]


def _why_no_graphs(messages: list[LogMessage]) -> str:
    """What a log without graph dumps holds, and which level would have shown graphs."""
    hint = (
        "graphs are dumped by PYTORCH_JIT_LOG_LEVEL='>>profiling_graph_executor_impl' on torch's default "
        "(profiling) executor, '>>graph_executor' on the legacy one (torch._C._jit_set_profiling_executor(False))"
    )
    if not messages:
        return f"no JIT log lines ('[DUMP file.cpp:123] ...'); {hint}; the log goes to stderr"
    files: dict[str, int] = {}
    for message in messages:
        name = message.where.rsplit(":", 1)[0]
        files[name] = files.get(name, 0) + 1
    where = ", ".join(f"{count} from {name}" for name, count in files.items())
    example = next((m.header for m in messages if m.header), "")
    text = f"the log has {len(messages)} message{'s' if len(messages) != 1 else ''} ({where}) but no graph dump"
    if example:
        text += f", e.g. {example[:60]!r}"
    if "graph_executor.cpp" in files:
        text += "; '>>graph_executor' shows graphs only on the legacy executor"
    return f"{text}; {hint}"


def load_jit_log(path: str) -> PassTrace:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            text = handle.read()
    except OSError as exc:
        raise JitLogError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return parse_jit_log(text, path)
