"""The fuzzer: seeded mutants of every input kind run through gradview's commands in process.

Each input kind has seeds (real fixtures: ``.ir`` graphs, both executors' JIT
logs, TORCH_TRACE logs, a saved trace, ``--inputs`` specs, a ``model.py``) and a
way to mutate them (:mod:`tests.fuzz.mutations`). A mutant is written to a
temporary folder and run through ``check`` (graphs), ``trace``, ``saved`` and
``export`` by calling :func:`gradview.cli.main.main` with argv, each call with a
time budget (a timer interrupts it) and a memory budget (an address-space
limit while it runs; example inputs are capped lower than the default). Every
call ends as one of

* ``ok``: exit status 0;
* ``error``: a non-zero status with a message (what gradview promises for bad input);
* ``traceback``: an exception escaped, or a traceback was printed;
* ``hang``: the time budget ran out;
* ``empty``: a non-zero status with no message.

The last three are failures: the mutant is saved under a temporary folder, with
the command and what happened, for a regression fixture.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy

from . import mutations

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
REGRESSIONS = Path(__file__).resolve().parent / "regressions"

__all__ = ["KINDS", "Kind", "Outcome", "Report", "fuzz", "run_command", "FAILURES", "ROOT", "REGRESSIONS", "commands_for"]

FAILURES = ("traceback", "hang", "empty")
# Example inputs a mutant may make: far below the 1 GiB default, so a fuzz run stays light.
FUZZ_EXAMPLE_BYTES = 64 << 20
# The address space a command may add while it runs (the memory budget).
MEMORY_HEADROOM = 3 << 30


class _Hang(BaseException):
    """Raised by the timer; a BaseException so that gradview's ``except Exception`` lets it through."""


@dataclass(frozen=True)
class Outcome:
    kind: str  # ok, error, traceback, hang, empty
    detail: str = ""  # the message, or the traceback


@contextlib.contextmanager
def _time_budget(seconds: float) -> Iterator[None]:
    def fire(signum: int, frame: Any) -> None:
        raise _Hang

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _address_space() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@contextlib.contextmanager
def _memory_budget(extra: int) -> Iterator[None]:
    """An address-space limit ``extra`` bytes above what the process maps now (Linux)."""
    try:
        import resource  # POSIX only
    except ImportError:
        yield
        return
    used = _address_space()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if not used or (hard != resource.RLIM_INFINITY and used + extra > hard):
        yield
        return
    resource.setrlimit(resource.RLIMIT_AS, (used + extra, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@contextlib.contextmanager
def _small_examples() -> Iterator[None]:
    from gradview.runtime import example_inputs

    before = example_inputs.MAX_EXAMPLE_BYTES
    example_inputs.MAX_EXAMPLE_BYTES = FUZZ_EXAMPLE_BYTES
    try:
        yield
    finally:
        example_inputs.MAX_EXAMPLE_BYTES = before


def run_command(argv: list[str], seconds: float) -> Outcome:
    """``gradview ARGV`` in process, classified (see the module's docstring)."""
    from gradview.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with (
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _small_examples(),
            _memory_budget(MEMORY_HEADROOM), _time_budget(seconds),
        ):
            status = main(argv)
    except _Hang:
        return Outcome("hang", f"still running after {seconds:g} s")
    except SystemExit as exc:  # argparse's usage errors
        status = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # whatever escaped is the finding
        return Outcome("traceback", traceback.format_exc())
    message = err.getvalue()
    if "Traceback (most recent call last)" in message:
        return Outcome("traceback", message)
    if status == 0:
        return Outcome("ok")
    said = message.strip().removeprefix("gradview: error:").strip()
    return Outcome("error", message.strip()) if said else Outcome("empty", f"exit status {status}, stderr {message!r}")


# -- input kinds ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Kind:
    """An input kind: its seeds, how a mutant is made, and the file name a mutant gets."""

    name: str
    seeds: Callable[[], list[tuple[str, bytes]]]  # (label, content)
    mutate: Callable[[numpy.random.Generator, bytes, int], bytes]
    file_name: str  # the mutant's file; "spec" kinds write the spec here and run a fixed target
    target: Callable[[Path, str], tuple[str, list[str]]] | None = None  # (target, extra argv) per mutant file


def _files(*patterns: str) -> Callable[[], list[tuple[str, bytes]]]:
    def seeds() -> list[tuple[str, bytes]]:
        found = []
        for pattern in patterns:
            for path in sorted(ROOT.glob(pattern)):
                found.append((str(path.relative_to(ROOT)), path.read_bytes()))
        return found

    return seeds


def _saved_trace_seed() -> list[tuple[str, bytes]]:
    import json

    from gradview.loaders.targets import load_target

    trace = load_target(str(ROOT / "examples" / "mlp.ir")).trace
    return [("examples/mlp.ir saved", json.dumps(trace.to_json()).encode())]


_SPECS = [
    ("examples/mlp.ir", "8x4,4x16,16,16x3,3"),
    ("examples/mlp.py:mlp", "x=8x4,w1=4x16,b1=16,w2=16x3,b2=3"),
    ("examples/mlp_loss.ir", "8x4,8x3:f32,4x16,16,16x3,3,3x3,3"),
]


def _spec_seeds() -> list[tuple[str, bytes]]:
    return [(f"{target} --inputs", f"{target}\n{spec}".encode()) for target, spec in _SPECS]


def _mutate_spec(rng: numpy.random.Generator, data: bytes, scale: int) -> bytes:
    target, _, spec = data.decode().partition("\n")
    return f"{target}\n{mutations.mutate_spec(rng, spec, scale)}".encode()


def _spec_target(path: Path, base: str) -> tuple[str, list[str]]:
    target, _, spec = path.read_text(encoding="utf-8", errors="replace").partition("\n")
    return str(ROOT / target), [f"--inputs={spec}"]


def _python_target(path: Path, base: str) -> tuple[str, list[str]]:
    return f"{path}:mlp", []


def _mutate_ir(rng: numpy.random.Generator, data: bytes, scale: int) -> bytes:
    return mutations.mutate(rng, data, scale, mutations.IR_MUTATORS)


def _text_or_json(rng: numpy.random.Generator, data: bytes, scale: int) -> bytes:
    return mutations.mutate_json(rng, data, scale) if rng.integers(2) else mutations.mutate(rng, data, scale)


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind("ir", _files("examples/*.ir", "tests/data/torch_prints/*.ir", "tests/data/conformance/cases/*.ir"),
             _mutate_ir, "graph.ir"),
        Kind("jit_log_profiling", _files("tests/fuzz/data/jit_log_profiling.log"), mutations.mutate, "profiling.log"),
        Kind("jit_log_legacy", _files("tests/runtime/data/jit_log_*.log"), mutations.mutate, "legacy.log"),
        Kind("torch_trace", _files("tests/data/torch_trace/mlp.log", "tests/data/torch_trace/float64.log"),
             mutations.mutate, "torch_trace.log"),
        Kind("torch_trace_md5", _files("tests/data/torch_trace/mlp.log", "tests/data/torch_trace/slice_write.log"),
             mutations.mutate_payloads, "torch_trace.log"),
        Kind("saved_trace", _saved_trace_seed, _text_or_json, "trace.json"),
        Kind("inputs_spec", _spec_seeds, _mutate_spec, "spec.txt", _spec_target),
        Kind("model_py", _files("examples/mlp.py"), mutations.mutate, "model.py", _python_target),
    )
}


def commands_for(kind: Kind, path: Path, out: Path) -> list[list[str]]:
    """The gradview commands a mutant at ``path`` goes through (exports into ``out``)."""
    target, extra = kind.target(path, kind.name) if kind.target is not None else (str(path), [])
    commands = [["check", target]] if kind.name == "ir" else []
    commands += [["trace", target, "--changes", *extra], ["saved", target, *extra]]
    commands.append(["export", target, "--svg", str(out / "svg"), *extra])
    return commands


# -- running ---------------------------------------------------------------------------
@dataclass
class Report:
    """Counts per outcome, and each failure with the folder its mutant was saved in."""

    kind: str
    runs: int = 0
    mutants: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(("ok", "error", *FAILURES), 0))
    failures: list[str] = field(default_factory=list)

    def line(self) -> str:
        parts = ", ".join(f"{name} {count}" for name, count in self.counts.items())
        return f"{self.kind}: {self.mutants} mutants, {self.runs} runs: {parts}"


def _save(kind: Kind, name: str, mutant: bytes, argv: list[str], outcome: Outcome, keep: Path) -> Path:
    folder = keep / f"{kind.name}-{name}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / kind.file_name).write_bytes(mutant)
    (folder / "what-happened.txt").write_text(
        f"gradview {' '.join(argv)}\n{outcome.kind}\n{outcome.detail}\n", encoding="utf-8", errors="replace"
    )
    return folder


def fuzz(
    kind_name: str, seed: int, count: int | None = None, seconds: float | None = None, scale: int = 1,
    budget: float = 20.0, keep: Path | None = None, report: Report | None = None,
) -> Report:
    """Run ``count`` mutants (or as many as ``seconds`` allow) of one input kind, from ``seed``.

    ``budget`` is each command's time budget; failures are saved under ``keep``
    (a new temporary folder when None)."""
    kind = KINDS[kind_name]
    seeds = kind.seeds()
    rng = numpy.random.default_rng(seed)
    report = report or Report(kind_name)
    keep = keep or Path(tempfile.mkdtemp(prefix="gradview-fuzz-"))
    start = time.monotonic()
    number = 0
    while (count is None or number < count) and (seconds is None or time.monotonic() - start < seconds):
        label, content = seeds[int(rng.integers(len(seeds)))]
        mutant = kind.mutate(rng, content, scale)
        number += 1
        report.mutants += 1
        with tempfile.TemporaryDirectory(prefix="gradview-mutant-") as work:
            path = Path(work) / kind.file_name
            path.write_bytes(mutant)
            for argv in commands_for(kind, path, Path(work)):
                outcome = run_command(argv, budget)
                report.runs += 1
                report.counts[outcome.kind] += 1
                if outcome.kind in FAILURES:
                    saved = _save(kind, f"seed{seed}-{number:04d}", mutant, argv, outcome, keep)
                    first = outcome.detail.strip().splitlines()[-1] if outcome.detail.strip() else outcome.kind
                    report.failures.append(f"{outcome.kind} in `gradview {argv[0]}` on a mutant of {label}: {first}; saved in {saved}")
                    break
    return report


def environment_ready() -> str | None:
    """Why the fuzzer cannot run here (no SIGALRM timer), or None."""
    if not hasattr(signal, "setitimer") or os.name != "posix":
        return "the fuzzer's time budget needs POSIX timers"
    return None
