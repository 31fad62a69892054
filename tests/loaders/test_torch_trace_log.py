"""Reading PyTorch structured traces (TORCH_TRACE) as text: the fixtures from
scripts/make_torch_traces.py, and broken logs refused with their line."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.loaders.torch_trace_log import TorchTraceError, load_torch_trace, read_torch_trace

LOGS = Path(__file__).resolve().parent.parent / "data" / "torch_trace"
NAMES = ["mlp", "layernorm_gelu", "attention", "conv_bn_relu", "lstm_cell", "float64", "graph_break"]
GRAPHS = ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph")


@pytest.mark.parametrize("name", NAMES)
def test_every_fixture_has_each_compiled_graphs_joint_forward_and_backward(name: str) -> None:
    entries = load_torch_trace(LOGS / f"{name}.log")
    by_compile: dict[str | None, list[str]] = {}
    for entry in entries:
        if entry.key in GRAPHS:
            by_compile.setdefault(entry.compile_id, []).append(entry.key)
            assert entry.payload.startswith("class ") and "def forward(" in entry.payload, entry.where
    assert all(sorted(keys) == sorted(GRAPHS) for keys in by_compile.values()), by_compile
    # A graph break compiles two frames; the other models one.
    assert len(by_compile) == (2 if name == "graph_break" else 1), by_compile
    # The forward graph's metadata shares the prefix and is an artifact, not a graph.
    metadata = [e for e in entries if e.key == "artifact" and e.value.get("name") == "aot_forward_graph_fw_metadata"]
    assert len(metadata) == len(by_compile)
    # Every envelope line of the file is an entry (the glog prefix starts those lines, payload lines a tab).
    text = (LOGS / f"{name}.log").read_text()
    envelopes = [line for line in text.split("\n") if line and not line.startswith("\t")]
    assert len(entries) == len(envelopes)


def test_a_directory_reads_every_log_in_it(tmp_path: Path) -> None:
    for name in ("mlp", "float64"):
        (tmp_path / f"{name}.log").write_text((LOGS / f"{name}.log").read_text())
    entries = load_torch_trace(tmp_path)
    assert {Path(entry.source).name for entry in entries} == {"mlp.log", "float64.log"}


def _forward_entry_lines(text: str) -> tuple[list[str], int]:
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if '{"aot_forward_graph": ' in line)
    return lines, start


def test_a_cut_payload_is_refused_at_its_entry() -> None:
    lines, start = _forward_entry_lines((LOGS / "mlp.log").read_text())
    del lines[start + 3]  # a line of the forward graph's code is lost
    with pytest.raises(TorchTraceError, match=rf"^mlp\.log:{start + 1}: the payload .* does not match its checksum"):
        read_torch_trace("\n".join(lines), "mlp.log")


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ("this is not a trace", r"^t\.log:LINE:1: not a structured trace line"),
        ('V1126 22:44:56.384000 14092 x.py:1] {"aot_forward_graph": {}, "frame_id": 0', r"^t\.log:LINE:1: not a structured"),
        ('V1126 22:44:56.384000 14092 x.py:1] {"aot_forward_graph": {}, "frame_id": }', r"^t\.log:LINE:\d+: the entry's JSON does not parse"),
    ],
)
def test_a_malformed_line_is_refused_with_its_place(broken: str, message: str) -> None:
    lines, start = _forward_entry_lines((LOGS / "mlp.log").read_text())
    lines.insert(start, broken)
    with pytest.raises(TorchTraceError, match=message.replace("LINE", str(start + 1))):
        read_torch_trace("\n".join(lines), "t.log")


def test_payload_before_any_entry_and_missing_paths_are_refused(tmp_path: Path) -> None:
    with pytest.raises(TorchTraceError, match=r"^t\.log:1: a payload line before any entry"):
        read_torch_trace("\tclass GraphModule:", "t.log")
    with pytest.raises(TorchTraceError, match="no such file or directory"):
        load_torch_trace(tmp_path / "missing")
    with pytest.raises(TorchTraceError, match=r"no \*\.log files"):
        load_torch_trace(tmp_path)
