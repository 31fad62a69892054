"""torch.compile's TORCH_TRACE logs through the CLI: ``trace``, ``export``, ``saved``, and bad logs.

The fixtures are made by ``scripts/make_torch_traces.py`` (seven models with
``backend="aot_eager"``). The expectations are read from the logs' text here
with regular expressions, a reader independent of gradview's.
"""

from __future__ import annotations

import hashlib
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy
import pytest

from gradview.cli.main import main
from gradview.ir import parse_ir
from gradview.loaders.targets import example_inputs_for
from gradview.runtime import GraphExecutor, Tensor

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "tests" / "data" / "torch_trace"
FIXTURES = sorted(p.name for p in LOGS.glob("*.log"))
SVG = "{http://www.w3.org/2000/svg}svg"


def _compile_ids(text: str) -> list[str]:
    """Compile ids of the aot_forward_graph entries, in log order (``0/0``, ``0/0_1`` for attempt 1)."""
    ids = []
    for frame, compile_, attempt in re.findall(
        r'\{"aot_forward_graph": \{\}, "frame_id": (\d+), "frame_compile_id": (\d+), "attempt": (\d+)', text
    ):
        ids.append(f"{frame}/{compile_}" + (f"_{attempt}" if attempt != "0" else ""))
    return ids


def _payload_names(text: str, key: str) -> list[set[str]]:
    """Per entry ``key``, the names its FX code assigns (``name: "f32[...]" = torch.ops...``)."""
    found = []
    for block in re.findall(rf'\{{"{key}": \{{\}}.*?\n((?:\t.*\n)+)', text):
        found.append(set(re.findall(r"^\t\s+(\w+): \"[^\"]*\" = torch\.ops\.", block, re.M)))
    return found


@pytest.mark.parametrize("log", FIXTURES)
def test_trace_lists_every_graphs_forward_and_backward(log: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = (LOGS / log).read_text(encoding="utf-8")
    ids = _compile_ids(text)
    assert main(["trace", str(LOGS / log)]) == 0
    out = capsys.readouterr().out
    headers = re.findall(r"^== \d+ (\S+) \[([^\]]+)\]", out, re.M)
    forwards = [which for name, which in headers if which.startswith("forward ") and name == "partition"]
    backwards = [which for name, which in headers if which.startswith("backward ") and name == "partition"]
    assert forwards == [f"forward {k}" for k in range(len(ids))]
    assert backwards == [f"backward {k}" for k in range(len(ids))]
    assert [name for name, which in headers if which.startswith("main")] == ["aot_joint_graph"] * len(ids)
    # Each step prints every op node of its graph under the FX name.
    sections = re.split(r"^== .*$", out, flags=re.M)[1:]
    by_which = {which: section for (name, which), section in zip(headers, sections, strict=True) if name != "inductor_post_grad_graph"}
    for key, role in (("aot_forward_graph", "forward"), ("aot_backward_graph", "backward")):
        for k, names in enumerate(_payload_names(text, key)):
            printed = set(re.findall(r"^\s+%(\w+) : ", by_which[f"{role} {k}"], re.M))
            assert names <= printed, (role, k, names - printed)


@pytest.mark.parametrize("log", FIXTURES)
def test_export_all_writes_valid_svgs_in_every_view(log: str, tmp_path: Path) -> None:
    text = (LOGS / log).read_text(encoding="utf-8")
    count = len(_compile_ids(text))
    post_grad = text.count('{"artifact": {"name": "inductor_post_grad_graph"')
    out = tmp_path / "whole"
    assert main(["export", str(LOGS / log), "--svg", str(out), "--all"]) == 0
    # joint, forward, backward per compiled graph, and Inductor's post-grad graphs
    assert len(list(out.iterdir())) == 3 * count + post_grad
    for dg in range(count):
        joint = tmp_path / f"joint{dg}"
        assert main(["export", str(LOGS / log), "--svg", str(joint), "--all", "--view", "joint", "--dg", str(dg)]) == 0
        files = sorted(joint.iterdir())
        assert files
        for path in [*out.iterdir(), *files]:
            root = ET.parse(path).getroot()
            assert root.tag == SVG, path
        # The joint view draws the saved values' edges and says which graph it is.
        last = files[-1].read_text(encoding="utf-8")
        assert "compiled graph" in last and "captured" in last


def test_inductors_post_grad_graphs_are_steps_after_the_partition(capsys: pytest.CaptureFixture[str]) -> None:
    log = LOGS / "mlp_inductor.log"
    text = log.read_text(encoding="utf-8")
    assert main(["trace", str(log), "--changes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" [")[0].split(" ", 1)[1] + " [" + line.split(" [")[1].split("]")[0] + "]" for line in lines] == [
        "aot_joint_graph [main]", "partition [forward 0]", "partition [backward 0]",
        "inductor_post_grad_graph [forward 0]", "inductor_post_grad_graph [backward 0]",
    ]
    # Each post-grad step prints the graph the artifact holds: the same op nodes, by name.
    blocks = re.findall(r'\{"artifact": \{"name": "inductor_post_grad_graph".*?\n((?:\t.*\n)+)', text)
    assert len(blocks) == 2
    assert main(["trace", str(log), "--pass", "inductor_post_grad_graph"]) == 0
    out = capsys.readouterr().out
    sections = re.split(r"^== .*$", out, flags=re.M)[1:]
    for block, section in zip(blocks, sections, strict=True):
        names = set(re.findall(r"^\t\s+(\w+): \"[^\"]*\" = torch\.ops\.", block, re.M))
        assert names and names == set(re.findall(r"^\s+%(\w+) : \S.* = aten::", section, re.M))


def test_saved_on_the_bundled_example_equals_what_the_executor_kept(capsys: pytest.CaptureFixture[str]) -> None:
    """Acceptance 2: the DifferentiableGraph's captured tensors, as bytes, against the arrays a run keeps."""
    example = ROOT / "examples" / "mlp.ir"
    assert main(["saved", str(example), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    [graph] = printed["graphs"]
    # A run of our own: the executor, one forward with every input requiring grad (as the loader runs it).
    source = parse_ir(example.read_text(encoding="utf-8"))
    inputs = example_inputs_for(source, seed=0)
    executor = GraphExecutor(source)
    outputs = executor.run([Tensor(value, requires_grad=True) for value in inputs])
    kept = []
    pending = [out._grad_fn for out in outputs if out._grad_fn is not None]
    seen = set()
    while pending:
        node = pending.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.name == "DifferentiableGraphBackward":
            kept.extend(node.backward_fn.captured)
        pending.extend(edge[0] for edge in node.next_edges)
    arrays = [value for value in kept if isinstance(value, numpy.ndarray)]
    assert arrays, "the run kept no arrays: the example has no DifferentiableGraph"
    assert sorted((a.nbytes, tuple(a.shape), str(a.dtype)) for a in arrays) == sorted(
        (item["bytes"], tuple(item["shape"]), item["dtype"]) for item in graph["saved"]
    )
    assert graph["total_bytes"] == sum(a.nbytes for a in arrays)
    producers = {item["name"]: item["producer"] for item in graph["saved"]}
    assert producers == {"h.3": "aten::relu", "w1.1": "input", "w2.1": "input", "x.1": "input"}


def test_saved_table_names_the_graph_and_the_total(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["saved", str(LOGS / "graph_break.log")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "compiled graph 0/0_1: 3 saved tensors, 512 bytes"
    assert "compiled graph 1/0: 2 saved tensors, 256 bytes" in out
    assert re.search(r"^  total\s+512$", out, re.M)


def test_saved_without_a_run_says_how_to_get_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["saved", str(ROOT / "examples" / "mlp.ir"), "--inputs", "none"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--inputs" in err and "Traceback" not in err


# -- bad logs ------------------------------------------------------------------------------------
def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("gradview: error: ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("command", ["trace", "saved", "view"])
def test_a_cut_log_is_refused_naming_the_line(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = (LOGS / "mlp.log").read_text(encoding="utf-8").splitlines(keepends=True)
    envelope = next(i for i, line in enumerate(lines) if '"aot_forward_graph"' in line)
    cut = tmp_path / "cut.log"
    cut.write_text("".join(lines[: envelope + 6]), encoding="utf-8")  # the forward's payload cut short
    assert main([command, str(cut)]) == 1
    assert f"cut.log:{envelope + 1}" in _one_line_error(capsys)


def test_a_graph_that_is_not_python_is_refused_naming_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (LOGS / "mlp.log").read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    envelope = next(i for i, line in enumerate(lines) if '"aot_backward_graph"' in line)
    broken_at = next(i for i in range(envelope, len(lines)) if "torch.ops.aten.mm.default(" in lines[i])
    lines[broken_at] = lines[broken_at].replace("torch.ops.aten.mm.default(", "torch.ops.aten.mm.default((", 1)
    # Keep the payload's checksum honest, so the error is the graph's, not the envelope's.
    first_after = next(i for i in range(envelope + 1, len(lines)) if not lines[i].startswith("\t"))
    payload = "".join(line[1:] for line in lines[envelope + 1 : first_after])
    digest = hashlib.md5(payload.removesuffix("\n").encode("utf-8")).hexdigest()  # PyTorch's checksum
    lines[envelope] = re.sub(r'"has_payload": "[0-9a-f]+"', f'"has_payload": "{digest}"', lines[envelope])
    bad = tmp_path / "bad.log"
    bad.write_text("".join(lines), encoding="utf-8")
    assert main(["trace", str(bad)]) == 1
    error = _one_line_error(capsys)
    assert re.search(rf"bad\.log:{broken_at + 1}(:\d+)?: aot_backward_graph", error), error


def test_unknown_entries_are_skipped_with_a_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (LOGS / "mlp.log").read_text(encoding="utf-8")
    extra = 'V1126 22:44:54.299000 14092 torch/_logging/_internal.py:1328] {"some_future_key": {}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0}\n'
    log = tmp_path / "more.log"
    log.write_text(extra + text, encoding="utf-8")
    assert main(["trace", str(log), "--changes"]) == 0
    with_extra = capsys.readouterr()
    assert main(["trace", str(LOGS / "mlp.log"), "--changes"]) == 0
    plain = capsys.readouterr()
    assert with_extra.out == plain.out
    count = int(re.search(r"(\d+) log entries that are not AOTAutograd's graphs skipped", plain.err).group(1))
    assert f"{count + 1} log entries that are not AOTAutograd's graphs skipped" in with_extra.err


def test_a_log_directory_opens_like_its_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "dedicated_log_torch_trace_rank_0.log").write_bytes((LOGS / "lstm_cell.log").read_bytes())
    assert main(["saved", str(tmp_path), "--json"]) == 0
    from_dir = capsys.readouterr().out
    assert main(["saved", str(LOGS / "lstm_cell.log"), "--json"]) == 0
    assert from_dir == capsys.readouterr().out


# -- --compile -----------------------------------------------------------------------------------
_MODEL = '''
import torch

def build():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    return model, (torch.randn(3, 6),)

def broken():
    raise ValueError("no model today")
'''


def test_compile_runs_torch_compile_and_opens_its_graphs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--compile`` on model.py:build: AOTAutograd's graphs of the model, as a log would give them."""
    model = tmp_path / "model.py"
    model.write_text(_MODEL, encoding="utf-8")
    assert main(["saved", f"{model}:build", "--compile", "--json"]) == 0
    captured = capsys.readouterr()
    [graph] = json.loads(captured.out)["graphs"]
    assert graph["name"] == "compiled graph 0/0"
    rows = {row["name"]: row for row in graph["saved"]}
    # Linear -> tanh -> Linear saves the input, the second weight and tanh's output (as PyTorch's eager autograd would).
    assert {(row["producer"], tuple(row["shape"])) for row in rows.values()} >= {
        ("input", (3, 6)), ("input", (2, 5)), ("aten::tanh", (3, 5))
    }
    assert "torch.compile" in captured.err


def test_compile_refuses_a_failing_builder_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "model.py"
    model.write_text(_MODEL, encoding="utf-8")
    assert main(["trace", f"{model}:broken", "--compile"]) == 1
    error = _one_line_error(capsys)
    assert "broken() failed: ValueError: no model today" in error


def test_compile_needs_a_builder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["saved", str(LOGS / "mlp.log"), "--compile"]) == 1
    assert "--compile takes model.py:build" in _one_line_error(capsys)


def test_saved_on_a_jit_log_says_what_the_log_lacks(capsys: pytest.CaptureFixture[str]) -> None:
    """A PYTORCH_JIT_LOG_LEVEL log prints f and df but not the Gradient's lists: refused, not guessed."""
    log = ROOT / "tests" / "runtime" / "data" / "jit_log_graph_executor.log"
    assert main(["saved", str(log)]) == 1
    error = _one_line_error(capsys)
    assert f"{log}: DifferentiableGraph 0:" in error and "(.ir or model.py)" in error


def test_binary_files_and_ignored_flags_get_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gz = tmp_path / "trace.log.gz"
    gz.write_bytes(b"\x1f\x8b\x08\x00" + bytes(range(40)))
    assert main(["saved", str(gz)]) == 1
    assert "a gzip-compressed file: decompress it first" in _one_line_error(capsys)
    binary = tmp_path / "blob.log"
    binary.write_bytes(b"ab\x00cd")
    assert main(["trace", str(binary)]) == 1
    assert "not a text file" in _one_line_error(capsys)
    assert main(["saved", str(LOGS / "mlp.log"), "--inputs", "3x4"]) == 0
    assert "note: --inputs is ignored" in capsys.readouterr().err
    assert main(["export", str(LOGS / "graph_break.log"), "--svg", str(tmp_path / "o"), "--view", "joint", "--dg", "5"]) == 1
    assert "there is no compiled graph 5: this log has 2 (0 to 1)" in _one_line_error(capsys)


def test_the_readmes_saved_table_is_what_saved_prints(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["saved", str(LOGS / "layernorm_gelu.log")]) == 0
    table = capsys.readouterr().out.rstrip("\n")
    assert "```\n" + table + "\n```" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_compile_without_pytorch_names_the_extra(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from gradview.loaders.compile_child import main\n"
        f"main({str(tmp_path / 'model.py')!r}, 'build')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    assert done.stderr.strip() == "gradview-compile-error: --compile needs PyTorch: pip install 'gradview[torch]'"
