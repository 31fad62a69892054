"""Read PyTorch's ``PYTORCH_JIT_LOG_LEVEL`` output into a :class:`PassTrace`.

With ``PYTORCH_JIT_LOG_LEVEL=">>graph_executor"`` (or ``>>dead_code_elimination``
and so on) TorchScript writes each ``GRAPH_DUMP``/``GRAPH_DEBUG`` message to
stderr, every line prefixed with ``[LEVEL file.cpp:LINE] ``::

    [DUMP graph_executor.cpp:693] Optimizing the following function:
    [DUMP graph_executor.cpp:693] graph(%x.1 : Tensor,
    ...
    [DEBUG graph_executor.cpp:699] After Inline, before LowerGradOf
    [DEBUG graph_executor.cpp:699] graph(%x.1 : Float(*, requires_grad=1, device=cpu),
    ...

A message is a header line and, for dumps, a graph. Each message with a graph
becomes one step, named after the pass the header says just ran:

* ``Optimizing the following function:`` -> ``Input`` (a new compilation starts);
* ``After X, before Y`` / ``After X`` / ``After X: `` / ``After X (end of ...)`` -> ``X``;
* ``Before X (beginning of F)`` -> ``F`` (the graph as F starts);
* ``Forward graph:`` / ``Backward graph:`` -> ``Differentiate``, on
  ``("forward", k)`` / ``("backward", k)``; the dumps between ``Optimizing diff
  node k`` and ``Finished optimizing diff node k`` show ``("forward", k)``;
* ``After compileSpec optimizations:`` -> ``compileSpec``.

Messages without a graph (``[UPDATE ...] Node ... will be removed``) are kept in
the next step's ``annotations["log"]``. ``changed`` is whether the text differs
from the previous step of the same graph. Each step's annotations also carry
the header (``"header"``), the compilation number and the log line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gradview.ir import IRParseError, parse_ir

from .pass_trace import PassTrace, TraceFormatError, Which

__all__ = ["JitLogError", "LogMessage", "parse_jit_log", "load_jit_log", "split_messages", "pass_name_of"]

_PREFIX = re.compile(r"^\[(?P<level>[A-Z]+) (?P<where>[^\]\s]+:\d+)\] ?(?P<text>.*)$")
_DIFF_NODE = re.compile(r"^Optimizing diff node (\d+)")
_FINISHED = re.compile(r"^Finished optimizing diff node (\d+)")


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
    """The log's messages; lines without a ``[LEVEL file:line]`` prefix are ignored."""
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

    for number, raw in enumerate(text.splitlines(), 1):
        match = _PREFIX.match(raw)
        if match is None:
            continue
        level, where, body = match["level"], match["where"], match["text"]
        same = current is not None and current.where == where and current.level == level
        if same and (graph_lines or body.startswith("graph(")) and _is_graph_line(body):
            graph_lines.append(body)
            continue
        if same and not graph_lines and body.startswith("graph("):
            graph_lines.append(body)
            continue
        close()
        if body.startswith("graph("):
            # A dump without a header line (GRAPH_DUMP("", graph)).
            current = LogMessage(level, where, number, "", None)
            graph_lines.append(body)
        else:
            current = LogMessage(level, where, number, body.rstrip(), None)
    close()
    return messages


def pass_name_of(header: str) -> str:
    """The pass a dump's header says just ran (see the module docstring)."""
    text = header.strip()
    if text.startswith("Optimizing the following function"):
        return "Input"
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
    last_text: dict[tuple[int, Which], str] = {}
    for message in split_messages(text):
        header = message.header
        if message.graph is None:
            if header.startswith("Optimizing the following function"):
                compilation += 1
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
        which: Which = "main"
        if header.startswith("Backward graph"):
            which = ("backward", diff_node or 0)
        elif diff_node is not None:
            which = ("forward", diff_node)
        try:
            graph = parse_ir(message.graph)
        except IRParseError as exc:
            line = message.line + exc.line - (0 if header else 1)
            raise JitLogError(
                f"{source}:{line}: cannot parse the graph dumped after {header!r}: {exc.message}"
            ) from None
        key = (compilation, which)
        previous = last_text.get(key)
        annotations: dict[str, object] = {
            "header": header,
            "compilation": compilation,
            "log_line": message.line,
        }
        if pending_log:
            annotations["log"] = list(pending_log)
            pending_log.clear()
        step = trace.record(
            name,
            graph,
            which=which,
            changed=previous is not None and previous != message.graph,
            seconds=0.0,
            annotations=annotations,
        )
        assert step is not None
        last_text[key] = message.graph
    if not trace.steps:
        raise JitLogError(f"{source}: no graph dumps found (is this PYTORCH_JIT_LOG_LEVEL output?)")
    return trace


def load_jit_log(path: str) -> PassTrace:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            text = handle.read()
    except OSError as exc:
        raise JitLogError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return parse_jit_log(text, path)
