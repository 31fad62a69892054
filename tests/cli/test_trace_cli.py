"""``gradview trace``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from gradview.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "runtime" / "data" / "jit_log_graph_executor.log"
IR = """graph(%x : Tensor, %y : Tensor):
  %a : Tensor = aten::mul(%x, %y)
  %dead : Tensor = aten::sin(%x)
  return (%a)
"""
HEADER = re.compile(r"^== \d+ \S+ \[[^\]]+\] (changed|unchanged) \(\d+\.\d+ ms\)$")


def test_ir_file(tmp_path, capsys):
    path = tmp_path / "g.ir"
    path.write_text(IR)
    assert main(["trace", str(path)]) == 0
    out = capsys.readouterr().out
    headers = [line for line in out.splitlines() if line.startswith("== ")]
    assert headers[0].startswith("== 0 Input [main] unchanged")
    assert all(HEADER.match(h) for h in headers)
    assert any("EliminateDeadCode [main] changed" in h for h in headers)


def test_pass_filter_and_diff(tmp_path, capsys):
    path = tmp_path / "g.ir"
    path.write_text(IR)
    assert main(["trace", str(path), "--pass", "eliminate_dead_code", "--diff"]) == 0
    out = capsys.readouterr().out
    headers = [line for line in out.splitlines() if line.startswith("== ")]
    assert headers and all("EliminateDeadCode" in h for h in headers)
    assert "-  %dead : Tensor = aten::sin(%x)" in out


def test_log_and_saved_trace(tmp_path, capsys):
    assert main(["trace", str(LOG), "--pass", "ConstantPooling"]) == 0
    out = capsys.readouterr().out
    assert out.count("== ") >= 2 and "graph(" in out
    from gradview.loaders.jit_log import load_jit_log

    saved = tmp_path / "t.json"
    load_jit_log(str(LOG)).save(str(saved))
    assert main(["trace", str(saved), "--diff"]) == 0
    assert "[forward 0]" in capsys.readouterr().out


def test_errors(tmp_path, capsys):
    assert main(["trace", str(tmp_path / "missing.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.json" in err
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "gradview-trace", "version": 7}')
    assert main(["trace", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.json" in err and "version 7" in err
    ir = tmp_path / "bad.ir"
    ir.write_text("graph(%x : Tensor):\n  %y = ???\n")
    assert main(["trace", str(ir)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.ir:2:" in err
    assert main(["trace", str(LOG), "--pass", "NoSuchPass"]) == 1
    assert "no step of pass" in capsys.readouterr().err


def test_subprocess_no_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    result = subprocess.run(
        [sys.executable, "-m", "gradview.cli", "trace", str(bad)], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "bad.json" in result.stderr


MODEL = '''import torch


def forward(x: torch.Tensor, n: int) -> torch.Tensor:
    y = x
    for i in range(n):
        y = torch.tanh(y) * 2
    dead = x * 0
    return y + 1


def broken(x):
    with torch.no_grad():
        return x
'''


def test_python_function(tmp_path, capsys):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    assert main(["trace", f"{path}:forward"]) == 0
    out = capsys.readouterr().out
    headers = [line for line in out.splitlines() if line.startswith("== ")]
    assert headers[0].startswith("== 0 Input [main] unchanged")
    assert all(HEADER.match(h) for h in headers)
    assert "prim::Loop" in out and f"# {path}:6:4" in out
    assert any("EliminateDeadCode [main] changed" in h for h in headers)
    assert main(["trace", f"{path}:broken"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "model.py:13:5: unsupported Python syntax: With" in err
    assert main(["trace", f"{path}:missing"]) == 1
    assert "no function named 'missing'" in capsys.readouterr().err


def test_ir_file_with_complete_types_gives_the_executor_trace_view_shows(capsys):
    """examples/mlp.ir has complete input types: trace runs the executor's training step, as view does."""
    from gradview.loaders.targets import load_target

    path = str(ROOT / "examples" / "mlp.ir")
    assert main(["trace", path, "--changes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    steps = load_target(path).trace
    assert len(lines) == len(steps) > 15
    assert [line.split(" [")[0] for line in lines] == [f"{s.index} {s.pass_name}" for s in steps]
    assert any("[backward executor 0]" in line for line in lines)
    # --inputs none: the generic pipelines only.
    assert main(["trace", path, "--inputs", "none"]) == 0
    captured = capsys.readouterr()
    headers = [line for line in captured.out.splitlines() if line.startswith("== ")]
    assert headers and all("[main]" in h for h in headers) and len(headers) < len(steps)
