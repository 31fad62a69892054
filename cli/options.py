"""Command-line options shared by several gradview commands."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

__all__ = [
    "AUTODIFF_CHOICES", "PYTORCH_INLINE_THRESHOLD", "PYTORCH_MIN_GROUP_SIZE", "add_autodiff_option", "add_compile_option",
    "add_inline_threshold_option", "add_inputs_option", "DETAIL_CHOICES", "add_detail_option", "add_pass_option",
    "PassName",
]

# gradview.autodiff.AutodiffMode's values and DEFAULT_INLINE_THRESHOLD
# (tests/cli/test_options.py keeps them equal); spelled out so that
# `gradview --help` does not import the autodiff stack.
AUTODIFF_CHOICES = ("torch", "extended")
PYTORCH_INLINE_THRESHOLD = 5
PYTORCH_MIN_GROUP_SIZE = 2  # CreateAutodiffSubgraphs' DEFAULT_THRESHOLD (minSubgraphSize)
# gradview.viewer.detail.Detail's values (tests/cli/test_options.py keeps them equal).
DETAIL_CHOICES = ("model", "ops", "ir")


def add_autodiff_option(parser: argparse.ArgumentParser) -> None:
    """``--autodiff torch|extended``: the executor's autodiff mode (PyTorch's by default)."""
    parser.add_argument(
        "--autodiff", choices=AUTODIFF_CHOICES, default=AUTODIFF_CHOICES[0],
        help="which ops symbolic autodiff takes: PyTorch's (default) or gradview's extended set, "
        "which also merges ops PyTorch leaves to eager autograd (sum, cat, select...)",
    )


def _threshold(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number, 0 or more, not {text!r}")
    return value


def _group_size(text: str) -> int:
    value = _threshold(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number, 1 or more, not {text!r}")
    return value


def add_inline_threshold_option(parser: argparse.ArgumentParser) -> None:
    """``--inline-threshold N`` (InlineAutodiffSubgraphs' threshold) and, beside it,
    ``--min-group-size N`` (CreateAutodiffSubgraphs'): PyTorch's by default."""
    parser.add_argument(
        "--inline-threshold", type=_threshold, metavar="N",
        help="paste DifferentiableGraphs with fewer than N nodes back after differentiating them "
        f"(default: PyTorch's {PYTORCH_INLINE_THRESHOLD}); 0 keeps every one, so a small function "
        "keeps its backward graph",
    )
    parser.add_argument(
        "--min-group-size", type=_group_size, metavar="N",
        help=f"form DifferentiableGraphs of N ops or more (default: PyTorch's {PYTORCH_MIN_GROUP_SIZE}); "
        "1 lets one op (x * w) form one, beyond PyTorch (InlineAutodiffSubgraphs may still paste "
        "a small one back: --inline-threshold 0 keeps it)",
    )


class PassName:
    """``--pass``'s type: a step name of the pipeline table in any spelling
    (``eliminate_dead_code``) becomes the table's (``EliminateDeadCode``); any
    other name is kept, for the steps a log names itself (AOTAutograd's graphs)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self._by_key = {_key(name): name for name in self.names}

    def __call__(self, text: str) -> str:
        return self._by_key.get(_key(text), text)


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())  # as gradview.runtime.normalize_pass_name


def add_pass_option(parser: argparse.ArgumentParser, names: Sequence[str]) -> None:
    """``--pass NAME``: only the steps of one pass; ``names`` (the runtime's
    pipeline table, ``gradview.runtime.pipeline_step_names()``) are its choices."""
    parser.add_argument(
        "--pass", dest="pass_name", metavar="NAME", type=PassName(names),
        help=f"only the steps of this pass, any spelling (eliminate_dead_code): one of the pipeline's {len(names)} "
        "steps (EliminateDeadCode, specializeAutogradZero, lambdaLiftReverse...) or a step the log names",
    )


def add_inputs_option(parser: argparse.ArgumentParser) -> None:
    """``--inputs SPEC``: example inputs for a graph or function (``none``: do not run it)."""
    parser.add_argument(
        "--inputs", metavar="SPEC",
        help="example inputs, one per graph input: a shape like 8x4 (optionally :f32, :i64...) or a number; "
        "a shape ending in :nograd (3x4:nograd) does not require grad; "
        "'none' runs no graph and shows the generic pass pipelines",
    )


def add_compile_option(parser: argparse.ArgumentParser) -> None:
    """``--compile``: open model.py:build as torch.compile compiles it (needs PyTorch)."""
    parser.add_argument(
        "--compile", action="store_true",
        help="for model.py:build: compile the model with torch.compile(backend='aot_eager'), run one "
        "forward and backward under a temporary TORCH_TRACE, and open AOTAutograd's graphs (needs PyTorch)",
    )


def add_detail_option(parser: argparse.ArgumentParser) -> None:
    """``--detail model|ops|ir``: how much of the IR the pictures show."""
    parser.add_argument(
        "--detail", choices=DETAIL_CHOICES, default=None,
        help="model: the model's modules as boxes (expand them to see inside), plumbing folded; "
        "ops: every op, constants, lists and sizes folded into the op that reads them; ir: every node "
        "(default: model when the graph comes from a PyTorch model with modules, else ir)",
    )
