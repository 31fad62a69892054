"""One check of the OpInfo suite: a graph torch printed, differentiated by
gradview and run by gradview's interpreter, against eager PyTorch and against
``torch._C._jit_differentiate``.

``check_graph(text, reference)`` does, in order (each step names itself in the
failure, so a report can say where a sample breaks):

1. ``parse``: ``gradview.ir.parse_ir(text)``;
2. ``torch``: torch's own ``_jit_differentiate`` on the same text (accepted or
   refused, with its message);
3. ``differentiate``: gradview's ``differentiate(graph, mode="torch")``. Where
   torch refused, gradview must refuse too (DifferentiationError), and the
   numbers are then checked with ``mode="extended"``;
4. ``bookkeeping``: where torch accepted, ``f_real_outputs``,
   ``df_output_vjps`` and the real outputs among ``df_input_vjps`` equal torch's;
5. ``run f`` / ``run df``: gradview's ``run_graph`` of ``f`` and ``df`` (df gets
   the eager output gradients for the real outputs, None for temporaries, then
   the captured values, as the executor wires them);
6. ``numbers``: f's real outputs and df's vjps equal eager autograd's to
   rtol 1e-7, atol 1e-10; an input with an eager gradient must get one.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from gradview.autodiff import DifferentiationError, Gradient, differentiate
from gradview.ir import parse_ir
from gradview.runtime import run_graph

from .opinfo_cases import error_line, flatten

__all__ = ["CheckFailure", "Reference", "Outcome", "check_graph", "torch_differentiate"]

RTOL = 1e-7
ATOL = 1e-10


class CheckFailure(AssertionError):
    """A failed step of ``check_graph``; ``stage`` names the step."""

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(f"[{stage}] {message}")
        self.stage = stage
        self.message = message


@dataclass
class Reference:
    """Eager PyTorch on the graph's inputs.

    ``inputs``: one value per graph input (arrays, Python scalars, lists of
    arrays); ``outputs`` and ``output_grads``: the graph's outputs flattened to
    tensors and a gradient for each; ``input_grads``: per graph input, the eager
    gradient (an array, a list of arrays for a list input, None for none)."""

    inputs: list[Any]
    outputs: list[np.ndarray]
    output_grads: list[np.ndarray]
    input_grads: list[Any]


@dataclass
class Outcome:
    torch_accepted: bool
    torch_error: str
    mode: str


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Name the step: any error inside becomes a CheckFailure of that step."""
    try:
        yield
    except CheckFailure:
        raise
    except Exception as error:  # the report classifies every error
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise CheckFailure(name, f"{type(error).__name__}: {first}") from error


_REQUIRES_GRAD_ONLY = re.compile(r"(%[\w.]+) : Tensor\(requires_grad=([01])\)")


def torch_readable(text: str) -> str:
    """``text`` as torch's own parser reads it.

    The executor prints a section's inputs as ``Tensor(requires_grad=1)``, a
    type torch's parser rejects. ``Tensor`` says the same to differentiate (an
    unknown requires_grad counts as True); an input that does not require grad
    takes the type its ``prim::profile`` recorded, which says so too."""

    def replace(match: re.Match[str]) -> str:
        name, flag = match.groups()
        if flag == "1":
            return f"{name} : Tensor"
        profiled = re.search(rf"profiled_type=(\w+\([^()]*\)), seen_none=\d+\]\({re.escape(name)}\)", text)
        if profiled is None:
            raise AssertionError(f"harness: no profiled type for {name}, which does not require grad")
        return f"{name} : {profiled.group(1)}"

    return _REQUIRES_GRAD_ONLY.sub(replace, text)


def without_profiles(graph: Any) -> Any:
    """``graph`` (torch's) with its prim::profile nodes bypassed: they record types
    for the executor and crash torch's interpreter outside it."""
    for node in list(graph.findAllNodes("prim::profile", True)):
        node.output().replaceAllUsesWith(node.input())
        node.destroy()
    return graph


def torch_differentiate(text: str) -> tuple[Any | None, str]:
    """torch's Gradient of the graph, or None and torch's error message."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch._C._jit_differentiate(torch._C.parse_ir(torch_readable(text))), ""
    except RuntimeError as error:
        return None, error_line(error)


def _real_vjps(grad: Any) -> list[int]:
    return [i for i in grad.df_input_vjps if i < grad.f_real_outputs]


def compare_bookkeeping(ours: Gradient, theirs: Any, follow_eager: bool = False) -> None:
    """The lists must be torch's; with ``follow_eager`` (where torch's JIT drops
    gradients eager autograd gives) df_output_vjps may list more inputs."""
    mine = (ours.f_real_outputs, list(ours.df_output_vjps), _real_vjps(ours))
    torch_lists = (theirs.f_real_outputs, list(theirs.df_output_vjps), _real_vjps(theirs))
    if follow_eager and set(torch_lists[1]) <= set(mine[1]):
        mine = (mine[0], torch_lists[1], mine[2])
    if mine != torch_lists:
        raise CheckFailure(
            "bookkeeping",
            f"(f_real_outputs, df_output_vjps, real df_input_vjps): gradview {mine}, torch {torch_lists}",
        )


def _structured(value: Any, supply: Iterator[np.ndarray]) -> Any:
    """Gradients shaped like ``value`` (an array, or a tuple/list of them)."""
    if isinstance(value, list | tuple):
        return type(value)(_structured(item, supply) for item in value)
    return next(supply)


def run_gradient(grad: Gradient, ref: Reference) -> tuple[list[Any], Any]:
    """f's real outputs (flattened) and df's packed vjps."""
    with stage("run f"):
        forward = run_graph(grad.f, ref.inputs)
    real = forward[: grad.f_real_outputs]
    flat = flatten(real)
    if len(flat) != len(ref.outputs):
        raise CheckFailure("numbers", f"f has {len(flat)} output tensors, eager {len(ref.outputs)}")
    supply = iter(ref.output_grads)
    structured = [_structured(value, supply) for value in real]
    vjps = [structured[i] if i < grad.f_real_outputs else None for i in grad.df_input_vjps]
    captured = [ref.inputs[i] for i in grad.df_input_captured_inputs]
    captured += [forward[i] for i in grad.df_input_captured_outputs]
    with stage("run df"):
        (packed,) = run_graph(grad.df, vjps + captured)
    return flat, packed


def _describe(ours: np.ndarray, theirs: np.ndarray) -> str:
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    if ours.shape != theirs.shape:
        return f"shape {ours.shape}, eager {theirs.shape}"
    diff = np.abs(ours - theirs)
    finite = np.isfinite(diff)
    if not finite.all() and not np.array_equal(np.isnan(ours), np.isnan(theirs)):
        return f"NaN where eager has {theirs[np.isnan(ours) != np.isnan(theirs)][:3]}"
    worst = int(np.argmax(np.where(finite, diff, 0)))
    return (
        f"max abs diff {np.where(finite, diff, 0).max():.3g} at flat index {worst} "
        f"(gradview {ours.flat[worst]:.10g}, eager {theirs.flat[worst]:.10g})"
    )


def _close(ours: Any, theirs: np.ndarray) -> bool:
    ours = np.asarray(ours)
    if ours.shape != theirs.shape:
        return False
    return bool(np.allclose(ours, theirs, rtol=RTOL, atol=ATOL, equal_nan=True))


def compare_numbers(grad: Gradient, ref: Reference, outputs: list[Any], packed: Any) -> None:
    for index, (ours, theirs) in enumerate(zip(outputs, ref.outputs, strict=True)):
        if not _close(ours, theirs):
            raise CheckFailure("numbers", f"output {index}: {_describe(ours, theirs)}")
    got = dict(zip(grad.df_output_vjps, packed, strict=True))
    for index, theirs in enumerate(ref.input_grads):
        ours = got.get(index)
        for k, (mine, eager) in enumerate(_pairs(ours, theirs, index in got)):
            where = f"gradient of input {index}" + (f"[{k}]" if isinstance(theirs, list) else "")
            if eager is None:
                if mine is not None and np.any(np.asarray(mine)):
                    raise CheckFailure("numbers", f"{where}: eager has none, gradview {mine!r:.60}")
            elif mine is None and index in got and not np.any(eager):
                continue  # an undefined gradient is autograd's zero, and eager's is all zeros
            elif mine is None:
                lost = "not in df_output_vjps" if index not in got else "undefined"
                raise CheckFailure("numbers", f"{where} lost ({lost}); eager computes one")
            elif not _close(mine, eager):
                raise CheckFailure("numbers", f"{where}: {_describe(mine, eager)}")


def _pairs(ours: Any, theirs: Any, present: bool) -> list[tuple[Any, Any]]:
    """(gradview, eager) pairs of one input: one pair, or one per element of a list input."""
    if isinstance(theirs, list):
        mine = list(ours) if present and ours is not None else [None] * len(theirs)
        return list(zip(mine, theirs, strict=True))
    return [(ours, theirs)]


def check_graph(
    text: str, ref: Reference, follow_eager: bool = False, torch_result: tuple[Any, str] | None = None
) -> Outcome:
    """Run every step on ``text``; raise CheckFailure at the first that fails.

    ``follow_eager``: torch's JIT is known to disagree with eager autograd on
    this graph; gradview follows eager (see ``compare_bookkeeping``).
    ``torch_result``: torch's (Gradient or None, error) when the caller has it
    from torch's own graph (torch's parser cannot read every text it prints)."""
    with stage("parse"):
        parse_ir(text)
    theirs, torch_error = torch_result if torch_result is not None else torch_differentiate(text)
    with stage("differentiate"):
        try:
            ours = differentiate(parse_ir(text), mode="torch")
        except DifferentiationError as error:
            if theirs is not None:
                raise
            refused = str(error)
        else:
            refused = ""
    if theirs is None and not refused:
        raise CheckFailure(
            "differentiate", f"torch refuses the graph ({torch_error}), gradview in torch mode accepts it"
        )
    mode = "torch"
    if theirs is not None:
        compare_bookkeeping(ours, theirs, follow_eager)
    else:
        mode = "extended"
        with stage("differentiate extended"):
            ours = differentiate(parse_ir(text), mode="extended")
    with stage("lint"):
        ours.f.lint()
        ours.df.lint()
    outputs, packed = run_gradient(ours, ref)
    compare_numbers(ours, ref, outputs, packed)
    return Outcome(theirs is not None, torch_error, mode)


def as_torch(value: Any, requires_grad: bool = False) -> Any:
    """A graph input for torch's interpreter: arrays become tensors."""
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value.copy()).requires_grad_(requires_grad)
    if isinstance(value, list) and value and isinstance(value[0], np.ndarray):
        return [as_torch(v, requires_grad) for v in value]
    return value


def run_torch_gradient(theirs: Any, ref: Reference) -> tuple[list[Any], list[Any]]:
    """torch's own f and df (from _jit_differentiate) on the reference inputs, by
    torch's interpreter: its forward outputs (flattened) and vjps by input."""
    f_graph = without_profiles(theirs.f.copy())
    f_graph.makeMultiOutputIntoTuple()
    f = torch._C._create_function_from_graph("f", f_graph)
    # df already returns one tuple, with a gradient per entry of df_output_vjps.
    df = torch._C._create_function_from_graph("df", without_profiles(theirs.df.copy()))
    inputs = [as_torch(v) for v in ref.inputs]
    with torch.no_grad(), torch.jit.optimized_execution(False):
        forward = list(f(*inputs))
        real = forward[: theirs.f_real_outputs]
        supply = iter(torch.from_numpy(g) for g in ref.output_grads)
        structured = [_structured(value, supply) for value in real]
        vjps = [structured[i] if i < theirs.f_real_outputs else None for i in theirs.df_input_vjps]
        captured = [inputs[i] for i in theirs.df_input_captured_inputs]
        captured += [forward[i] for i in theirs.df_input_captured_outputs]
        packed = list(df(*vjps, *captured))
    return flatten(real), packed


def torch_jit_status(text: str, ref: Reference) -> str:
    """Whether torch's own JIT autodiff of the graph agrees with eager autograd:
    "ok", "refused" (torch does not differentiate it), or what goes wrong."""
    theirs, _ = torch_differentiate(text)
    if theirs is None:
        return "refused"
    try:
        outputs, packed = run_torch_gradient(theirs, ref)
    except Exception as error:  # reported with torch's message
        return f"fails: {error_line(error)}"
    as_np = [o.numpy() for o in outputs]
    np_packed = [_to_np(v) for v in packed]
    try:
        compare_numbers(_Lists(theirs), ref, as_np, np_packed)
    except CheckFailure as failure:
        return f"differs: {failure.message}"
    return "ok"


def _to_np(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.numpy()
    if isinstance(value, list | tuple):
        return [_to_np(v) for v in value]
    return value


@dataclass
class _Lists:
    """The bookkeeping of torch's Gradient, as compare_numbers reads it."""

    theirs: Any

    @property
    def df_output_vjps(self) -> list[int]:
        return list(self.theirs.df_output_vjps)


def inputs_requiring_grad(values: Sequence[Any]) -> list[bool]:
    return [isinstance(v, np.ndarray) and v.dtype.kind == "f" for v in values]
