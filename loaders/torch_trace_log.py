"""The entries of a PyTorch structured trace (``TORCH_TRACE=DIR``), read as text.

``TORCH_TRACE=DIR python train.py`` makes PyTorch write a log per process in
``DIR``. Each entry is an *envelope*, one glog-style line whose message is a
JSON object, followed by its *payload*: zero or more lines, each indented by
one tab. The envelope's first key names what the entry is
(``aot_forward_graph``, ``aot_backward_graph``, ``artifact``,
``compilation_metrics``, …); ``frame_id``, ``frame_compile_id`` and
``attempt`` say which compiled graph it belongs to (``0/0``, ``2/0``; a
retried compile has an attempt above 0); ``has_payload`` is the MD5 of the
payload, which lets a truncated or edited log be caught here rather than
misread later::

    V1126 22:44:56.384000 14092 torch/_functorch/_aot_autograd/graph_compile.py:1886] {"aot_forward_graph": {}, "frame_id": 0, ...}
    \tclass GraphModule(torch.nn.Module):
    \t    def forward(self, primals_1: "f32[32, 16][16, 1]cpu", ...

Reading needs no PyTorch. Entries of every kind are returned; which of them
make graphs is the caller's business (an entry's :attr:`TraceEntry.key` is
matched exactly: ``aot_forward_graph_fw_metadata`` is not a forward graph).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gradview.runtime.bounded_json import JSONTooDeepError, loads_bounded
from gradview.runtime.pass_trace import TraceFormatError

__all__ = ["TorchTraceError", "TraceEntry", "read_torch_trace", "load_torch_trace", "looks_like_torch_trace"]

# glog's prefix: level and date, time, thread id, file:line, then "] " and the message.
_GLOG_PREFIX = r"[IWEVD]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]]*\] "
_ENVELOPE = re.compile(rf"^{_GLOG_PREFIX}(?P<json>\{{.*\}})\s*$")
_STARTS_AN_ENTRY = re.compile(rf"^{_GLOG_PREFIX}\{{".encode())
_METADATA = ("frame_id", "frame_compile_id", "attempt", "has_payload")


class TorchTraceError(TraceFormatError):
    """A structured trace that cannot be read: the message names the file and line."""


@dataclass(frozen=True)
class TraceEntry:
    """One envelope and its payload."""

    key: str  # what the entry is: the envelope's first key that is not metadata
    value: Any  # that key's value (``{}`` for graphs, ``{"name": ...}`` for artifacts)
    envelope: dict[str, Any] = field(repr=False)
    payload: str = field(repr=False)
    source: str  # the file
    line: int  # of the envelope, 1-based

    @property
    def compile_id(self) -> str | None:
        """``frame_id/frame_compile_id`` (``0/0``), with ``_<attempt>`` after a retried compile; None outside a compile."""
        frame, compile_ = self.envelope.get("frame_id"), self.envelope.get("frame_compile_id")
        if frame is None or compile_ is None:
            return None
        attempt = self.envelope.get("attempt") or 0
        return f"{frame}/{compile_}" + (f"_{attempt}" if attempt else "")

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"


def read_torch_trace(text: str, source: str = "<trace>") -> list[TraceEntry]:
    """Every entry of a structured trace log, in order.

    A line that is neither an envelope, a payload line (tab-indented) nor empty,
    an envelope whose JSON does not parse, payload before any envelope, or a
    payload whose MD5 differs from its envelope's ``has_payload`` raises
    :class:`TorchTraceError` naming ``source`` and the line."""
    entries: list[TraceEntry] = []
    current: tuple[int, dict[str, Any]] | None = None
    payload: list[str] = []

    def finish() -> None:
        if current is None:
            return
        line, envelope = current
        body = "\n".join(payload)
        expected = envelope.get("has_payload")
        if expected is not None and hashlib.md5(body.encode("utf-8")).hexdigest() != expected:  # PyTorch's checksum
            raise TorchTraceError(
                f"{source}:{line}: the payload of this entry does not match its checksum "
                f"({len(payload)} lines read): the log is cut short or was edited"
            )
        if expected is None and payload:
            raise TorchTraceError(f"{source}:{line + 1}: payload lines after an entry that announces none")
        key = next((name for name in envelope if name not in _METADATA), None)
        if key is None:
            raise TorchTraceError(f"{source}:{line}: an entry without a kind (only {', '.join(envelope) or 'nothing'})")
        entries.append(TraceEntry(key, envelope[key], envelope, body, source, line))

    for number, text_line in enumerate(text.split("\n"), start=1):
        if text_line.startswith("\t"):
            if current is None:
                raise TorchTraceError(f"{source}:{number}: a payload line before any entry")
            payload.append(text_line[1:])
            continue
        if not text_line.strip():
            continue
        match = _ENVELOPE.match(text_line)
        if match is None:
            raise TorchTraceError(
                f"{source}:{number}:1: not a structured trace line (expected a glog line with a JSON message, "
                f"or a tab-indented payload line): {text_line[:60]!r}"
            )
        finish()
        try:
            envelope = loads_bounded(match.group("json"))
        except json.JSONDecodeError as exc:
            column = match.start("json") + exc.colno
            raise TorchTraceError(f"{source}:{number}:{column}: the entry's JSON does not parse: {exc.msg}") from None
        except JSONTooDeepError as exc:
            raise TorchTraceError(f"{source}:{number}: the entry's JSON is {exc}") from None
        if not isinstance(envelope, dict):
            raise TorchTraceError(f"{source}:{number}: the entry's JSON is not an object")
        current, payload = (number, envelope), []
    finish()
    return entries


def looks_like_torch_trace(start: bytes) -> bool:
    """Does a file starting with ``start`` look like a TORCH_TRACE log (an envelope first)?"""
    return _STARTS_AN_ENTRY.match(start.lstrip()) is not None


def load_torch_trace(path: str | Path) -> list[TraceEntry]:
    """The entries of a log file, or of every ``*.log`` in a TORCH_TRACE directory (by name)."""
    target = Path(path)
    if target.is_dir():
        files = sorted(target.glob("*.log"))
        if not files:
            raise TorchTraceError(f"{target}: no *.log files in this directory (TORCH_TRACE writes one per process)")
    elif target.is_file():
        files = [target]
    else:
        raise TorchTraceError(f"{target}: no such file or directory")
    entries: list[TraceEntry] = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise TorchTraceError(f"{file}: not UTF-8 text (byte {exc.start})") from None
        entries += read_torch_trace(text, str(file))
    return entries
