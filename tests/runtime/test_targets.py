"""What ``load_target`` says about targets it cannot open as given."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.cli.main import main
from gradview.runtime.targets import TargetError, load_target


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "mlp.py"
    path.write_text(text)
    return str(path)


def test_a_python_file_without_a_function_says_it_needs_one_and_lists_them(tmp_path: Path) -> None:
    target = _file(
        tmp_path,
        "def mlp(x, w):\n    return x @ w\n\n\ndef _helper():\n    pass\n\n\n"
        "def mlp_example_inputs():\n    return []\n\n\nclass Model:\n    def forward(self):\n        pass\n\n\n"
        "def build():\n    raise SystemExit('never imported')\n",
    )
    with pytest.raises(TargetError) as caught:
        load_target(target)
    assert str(caught.value) == (
        f"{target}: a Python file needs a function: {target}:build or {target}:<fn> (it defines mlp, build)"
    )


def test_a_python_file_that_does_not_parse_still_gets_the_one_line(tmp_path: Path) -> None:
    target = _file(tmp_path, "def (:\n")
    with pytest.raises(TargetError, match=r"^.*mlp\.py: a Python file needs a function: .*:<fn>$"):
        load_target(target)


def test_a_python_file_without_functions_says_so(tmp_path: Path) -> None:
    target = _file(tmp_path, "X = 1\n")
    with pytest.raises(TargetError, match=r"\(it defines no function\)$"):
        load_target(target)


@pytest.mark.parametrize("command", ["trace", "view", "export", "saved"])
def test_every_command_gives_that_line_instead_of_no_jit_log_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    target = _file(tmp_path, "def mlp(x):\n    return x\n")
    arguments = [command, target] + (["--svg", str(tmp_path / "out")] if command == "export" else [])
    assert main(arguments) != 0
    err = capsys.readouterr().err
    assert "a Python file needs a function" in err and "JIT log" not in err
    assert len(err.strip().splitlines()) == 1
