"""Where gradview stands on PyTorch's OpInfo autodiff suite, op by op.

    python -m tests.autodiff.opinfo_report [--ops LABEL ...] [--no-scripted] [--samples]

For every OpInfo with ``assert_autodiffed=True`` it prints how many samples
pass in each form, and the first error, classified so failures can be routed:

* traced, scripted: the checks of tests/autodiff/test_opinfo.py (``differentiate``
  + ``run_graph`` of f and df against eager autograd and _jit_differentiate);
* executor: the traced graph run by gradview's GraphExecutor on Tensors that
  require grad, then ``gradview.runtime.autograd.grad`` (not a test yet).

Samples on which torch's own JIT fails (the tables of test_opinfo) are counted
apart, as are OpInfos for which torch's executor builds no DifferentiableGraph.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .opinfo_cases import Case, all_cases, error_line
from .opinfo_check import CheckFailure
from .opinfo_forms import run_executor, traced_reference
from .opinfo_sections import collect_sections, script_variants, start_collecting
from .test_opinfo import NO_SECTIONS, test_scripted, test_traced

FORMS = ("traced", "scripted", "executor")
PASS, TORCH_FAILS, NOTHING = "pass", "torch fails", "no section"


def classify(stage: str, message: str) -> str:
    """The kind of a failure, from the step that failed and its message."""
    text = message.lower()
    if "harness" in text:
        return "harness bug"
    if stage == "parse":
        return "parse error"
    if "unknown operator" in text:
        return "missing kernel"
    if "no gradient formula" in text or "notdifferentiableerror" in text:
        return "missing formula"
    if stage == "differentiate extended" and "is not supported" in text:
        return "missing formula (extended)"
    if stage == "differentiate" and "torch refuses" in text:
        return "accepts what torch refuses"
    if stage == "bookkeeping":
        return "bookkeeping differs from torch"
    if stage == "numbers":
        return "lost gradient" if " lost" in text else "wrong number"
    if stage.startswith("differentiate"):
        return "differentiate error"
    if stage == "run f":
        return "run_graph error in f"
    if stage == "run df":
        return "run_graph error in df (formula or kernel)"
    return "executor error"


@dataclass
class Result:
    status: str  # PASS, TORCH_FAILS, NOTHING, or the class of the failure
    message: str = ""


def _run(check: Callable[[], None]) -> Result:
    try:
        check()
    except CheckFailure as failure:
        first = failure.message.splitlines()[0]
        return Result(classify(failure.stage, first), f"{failure.stage}: {first}")
    except AssertionError as failure:
        first = str(failure).strip().splitlines()[0] if str(failure).strip() else "AssertionError"
        return Result("harness bug" if "harness" in first else "torch table", first)
    except Exception as error:  # every error is reported and classified
        return Result(classify("run", f"{type(error).__name__}: {error_line(error)}"), error_line(error))
    return Result(PASS)


def scripted_result(case: Case, records: dict[str, list[dict[str, Any]]]) -> Result:
    mine = records.get(case.case_id, [])
    if mine and all(r["status"] == "script fails" for r in mine):
        return Result(TORCH_FAILS, mine[0]["error"])
    if case.label in NO_SECTIONS:
        return Result(NOTHING)
    return _run(lambda: test_scripted(case.case_id, records))


@dataclass
class OpRow:
    results: dict[str, list[Result]] = field(default_factory=lambda: defaultdict(list))


def run(labels: set[str], scripted: bool) -> dict[str, OpRow]:
    cases = [c for c in all_cases() if not labels or c.label in labels]
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "sections.json"
        process = start_collecting(out, tuple(sorted(labels))) if scripted else None
        rows: dict[str, OpRow] = defaultdict(OpRow)
        for case in cases:
            row = rows[case.label]
            row.results["traced"].append(_run(lambda c=case: test_traced(c.case_id)))
            row.results["executor"].append(
                _run(lambda c=case: run_executor(c.traced_text(), traced_reference(c)))
            )
        if process is not None:
            records = collect_sections(process, out)
            for case in cases:
                if script_variants(case.op):
                    rows[case.label].results["scripted"].append(scripted_result(case, records))
    return rows


def _count(results: list[Result]) -> str:
    if not results:
        return "-"
    counts = Counter(r.status for r in results)
    text = f"{counts[PASS]}/{len(results)}"
    if counts[TORCH_FAILS]:
        text += f" (torch fails {counts[TORCH_FAILS]})"
    if counts[NOTHING]:
        text = f"none ({counts[NOTHING]})"
    return text


def _first_failure(row: OpRow) -> tuple[str, str, str] | None:
    for form in FORMS:
        for result in row.results.get(form, []):
            if result.status not in (PASS, TORCH_FAILS, NOTHING):
                return form, result.status, result.message
    return None


def report(rows: dict[str, OpRow], show_samples: bool) -> None:
    print(f"{'op':38} {'traced':>8} {'scripted':>18} {'executor':>9}  first failure")
    totals: dict[str, Counter[str]] = {form: Counter() for form in FORMS}
    classes: dict[str, Counter[str]] = {form: Counter() for form in FORMS}
    for label, row in rows.items():
        failure = _first_failure(row)
        note = f"[{failure[0]}] {failure[1]}: {failure[2][:110]}" if failure else ""
        counts = [_count(row.results.get(form, [])) for form in FORMS]
        print(f"{label:38} {counts[0]:>8} {counts[1]:>18} {counts[2]:>9}  {note}")
        for form in FORMS:
            for index, result in enumerate(row.results.get(form, [])):
                totals[form][result.status] += 1
                if result.status not in (PASS, TORCH_FAILS, NOTHING):
                    classes[form][result.status] += 1
                    if show_samples:
                        print(f"    {label}-sample{index}-{form}: {result.status}: {result.message[:140]}")
    print()
    for form in FORMS:
        total = sum(totals[form].values())
        if not total:
            continue
        ops = sum(
            1 for row in rows.values()
            if row.results.get(form)
            and all(r.status in (PASS, TORCH_FAILS, NOTHING) for r in row.results[form])
        )
        apart = total - totals[form][PASS] - sum(classes[form].values())
        print(
            f"{form:9} {totals[form][PASS]}/{total - apart} samples pass ({apart} apart: torch fails "
            f"or no section); {ops}/{sum(1 for r in rows.values() if r.results.get(form))} ops pass "
            f"every sample; failures: {dict(classes[form].most_common())}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", nargs="*", default=[], help="OpInfo labels (name or name.variant)")
    parser.add_argument("--no-scripted", action="store_true", help="skip the scripted form")
    parser.add_argument("--samples", action="store_true", help="one line per failing sample")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = run(set(args.ops), not args.no_scripted)
    report(rows, args.samples)
    print(f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
