"""Issue 10, acceptance 1: PyTorch's own autodiff suite, in both forms.

Every OpInfo of ``op_db`` with ``assert_autodiffed=True`` (the ops PyTorch's
tests assert its JIT differentiates), every float64 CPU sample:

* ``-traced``: the graph of torch.jit.trace of the call;
* ``-scripted``: every DifferentiableGraph section torch's profiling executor
  differentiates for the scripted call, as test_ops_jit builds it (one
  subprocess per test session collects them from the executor's debug log
  while the traced tests run; see ``opinfo_sections``);
* ``-executor``: the traced graph run as a program through GraphExecutor and
  gradview's autograd, against eager PyTorch's outputs and input gradients.

Each graph goes through ``check_graph``: gradview's f and df against eager
autograd (rtol 1e-7), and the Gradient's lists against ``_jit_differentiate``
wherever torch accepts the graph (where it refuses, gradview must refuse in
torch mode, and extended mode must match eager). ``python -m
tests.autodiff.opinfo_report`` prints the same checks per op.

What torch itself gets wrong is listed below with torch's words, and checked
to be exactly right, so the tables cannot go stale silently.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .opinfo_cases import all_cases, case_by_id, op_label
from .opinfo_check import CheckFailure, Reference, check_graph, torch_jit_status
from .opinfo_forms import run_executor, section_reference, traced_reference
from .opinfo_sections import collect_sections, script_variants, start_collecting

# -- what torch's own JIT cannot do ---------------------------------------------------------------
_REFLECTED = ("__radd__", "__rdiv__", "__rmatmul__", "__rmod__", "__rmul__", "__rpow__", "__rsub__")

# Scripting fails for every sample of these OpInfos: TorchScript has no reflected
# operators (test_ops_jit skips them in its own decorators). (OpInfo, variant) -> torch's error.
TORCH_SCRIPT_FAILS: dict[tuple[str, str], str] = {
    **{(name, "function"): f"object has no attribute {name}:" for name in _REFLECTED},
    **{
        (name, "method"): f"'Tensor (inferred)' object has no attribute or method '{name}'.:"
        for name in _REFLECTED
    },
}

# OpInfos test_ops_jit does not script at all.
NOT_SCRIPTED = {
    "torch.ops.aten._safe_softmax.default": "an OpOverload: test_ops_jit skips torch.ops "
    "(scripting strips their prefix)",
}

# OpInfos whose scripted call gets no DifferentiableGraph from torch's executor:
# torch's JIT does not differentiate the op symbolically (it runs under eager
# autograd), although the OpInfo says assert_autodiffed (with no node to find).
NO_SECTIONS = {
    "meshgrid.list_of_tensors": "aten::meshgrid",
    "_softmax_backward_data": "aten::_softmax_backward_data",
    "permute": "aten::permute (a view)",
    "permute_copy": "aten::permute_copy",
    "split": "aten::split",
    "unsafe_split": "aten::unsafe_split",
    "split_with_sizes": "aten::split_with_sizes",
    "squeeze": "aten::squeeze (a view)",
    "squeeze.multiple": "aten::squeeze.dims (a view)",
    "squeeze_copy": "aten::squeeze_copy",
    "unsqueeze": "aten::unsqueeze (a view)",
    "unsqueeze_copy": "aten::unsqueeze_copy",
    "t": "aten::t (a view)",
    "t_copy": "aten::t_copy",
    "nanmean": "aten::nanmean",
}

# Where torch's JIT autodiff (its f and df from _jit_differentiate, run by its
# interpreter) disagrees with eager autograd: gradview follows eager there.
# (case, form) -> what torch's JIT does.
_CLAMP_LOST = {
    "traced": "differs: gradient of input 1 lost (not in df_output_vjps); eager computes one",
    # the section takes its inputs in another order: (max,) min, self
    "scripted": "differs: gradient of input 0 lost (not in df_output_vjps); eager computes one",
}
_EMPTY_MATMUL = (
    "fails: RuntimeError: cannot reshape tensor of 0 elements into shape [-1, 0] because the "
    "unspecified dimension size -1 can be any value and is ambiguous"
)
JIT_DISAGREES: dict[tuple[str, str], str] = {
    # clamp with tensor bounds: torch's symbolic gradient returns none for min and max.
    **{(f"clamp-sample{i}", form): _CLAMP_LOST[form] for i in (0, 1, 2, 3, 4) for form in _CLAMP_LOST},
    ("clamp-sample6", "traced"): _CLAMP_LOST["traced"],
    ("clamp-sample6", "scripted"): "differs: gradient of input 1 lost (not in df_output_vjps); eager computes one",
    # matmul of empty tensors: torch's symbolic matmul backward reshapes with -1.
    **{(f"{op}-sample{i}", "traced"): _EMPTY_MATMUL for op in ("matmul", "__rmatmul__") for i in (7, 10)},
    **{(f"matmul-sample{i}", "scripted"): _EMPTY_MATMUL for i in (7, 10)},
    # cat with a legacy empty tensor (shape (0,)) among 2-d ones: torch's cat
    # gradient gives it a (5, 0) slice.
    ("cat-sample5", "scripted"): "differs: gradient of input 0[0]: shape (5, 0), eager (0,)",
}

# -- the parametrization ---------------------------------------------------------------------------
CASES = all_cases()
SCRIPTED = [case.case_id for case in CASES if script_variants(case.op)]


@pytest.fixture(scope="module", autouse=True)
def _sections_process(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Start collecting the scripted sections as soon as this module's first test
    runs, so the subprocess works while the traced tests do."""
    wanted = any("scripted_records" in getattr(item, "fixturenames", ()) for item in request.session.items)
    if not wanted:
        return None
    out = tmp_path_factory.mktemp("opinfo_sections") / "sections.json"
    return start_collecting(out), out


@pytest.fixture(scope="module")
def scripted_records(_sections_process: Any) -> dict[str, list[dict[str, Any]]]:
    process, out = _sections_process
    return collect_sections(process, out)


@pytest.mark.parametrize("case_id", [c.case_id for c in CASES], ids=lambda c: f"{c}-traced")
def test_traced(case_id: str) -> None:
    case = case_by_id(case_id)
    follow_eager = (case_id, "traced") in JIT_DISAGREES
    check_graph(case.traced_text(), traced_reference(case), follow_eager)


@pytest.mark.parametrize("case_id", [c.case_id for c in CASES], ids=lambda c: f"{c}-executor")
def test_executor(case_id: str) -> None:
    """The traced graph as a program: GraphExecutor (PyTorch's autodiff mode) and
    gradview's autograd give eager PyTorch's outputs and input gradients; no
    gradient is silently lost on the way (issue 10, point 5)."""
    case = case_by_id(case_id)
    run_executor(case.traced_text(), traced_reference(case))


def unique_sections(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sections of all variants, each once (function and method usually agree)."""
    seen: dict[str, dict[str, Any]] = {}
    for record in records:
        for section in record["sections"]:
            seen.setdefault(section["text"] + json.dumps(section["sources"]), section)
    return list(seen.values())


@pytest.mark.parametrize("case_id", SCRIPTED, ids=lambda c: f"{c}-scripted")
def test_scripted(case_id: str, scripted_records: dict[str, list[dict[str, Any]]]) -> None:
    case = case_by_id(case_id)
    records = scripted_records.get(case_id, [])
    assert [r["variant"] for r in records] == script_variants(case.op)
    harness = [r["error"] for r in records if r["status"] == "harness"]
    assert not harness, f"harness: {harness}"
    failing = {r["variant"]: r["error"] for r in records if r["status"] != "ok"}
    listed = {v: e for (label, v), e in TORCH_SCRIPT_FAILS.items() if label == case.label}
    assert failing == listed, (
        f"torch's scripted call fails with {failing}; the table lists {listed} "
        "(if torch now succeeds, remove the entry)"
    )
    sections = unique_sections(records)
    if case.label in NO_SECTIONS or len(failing) == len(records):
        assert not sections, f"torch now builds a DifferentiableGraph for {case.label}"
        return
    assert sections, "torch built no DifferentiableGraph for this call (add it to NO_SECTIONS?)"
    follow_eager = (case_id, "scripted") in JIT_DISAGREES
    for index, section in enumerate(sections):
        try:
            check_graph(section["text"], section_reference(case, section), follow_eager)
        except CheckFailure as failure:
            where = f"section {index} of {len(sections)}"
            raise CheckFailure(failure.stage, f"{failure.message}\n{where}:\n{section['text']}") from None


def test_the_check_catches_a_wrong_and_a_lost_gradient() -> None:
    """The check can fail: eager's gradient nudged by 1e-6 relative, and a graph
    that says its second input needs no gradient while eager computes one."""
    case = case_by_id("mul-sample0")
    text, ref = case.traced_text(), traced_reference(case)
    nudged = [None if g is None else g * (1 + 1e-6) + 1e-9 for g in ref.input_grads]
    with pytest.raises(CheckFailure, match=r"\[numbers\] gradient of input 0"):
        check_graph(text, Reference(ref.inputs, ref.outputs, ref.output_grads, nudged))
    second = text.splitlines()[1]
    frozen = text.replace(second, second.replace("requires_grad=1", "requires_grad=0"))
    with pytest.raises(CheckFailure, match=r"\[numbers\] gradient of input 1 lost"):
        check_graph(frozen, ref)


# -- the tables are exactly right -------------------------------------------------------------------
def test_not_scripted_is_exactly_what_test_ops_jit_skips() -> None:
    skipped = {case.label for case in CASES if not script_variants(case.op)}
    assert skipped == set(NOT_SCRIPTED)


def test_no_sections_lists_only_scripted_ops() -> None:
    labels = {op_label(case.op) for case in CASES}
    assert set(NO_SECTIONS) <= labels - set(NOT_SCRIPTED)


def _jit_statuses(scripted_records: dict[str, list[dict[str, Any]]]) -> dict[tuple[str, str], str]:
    found = {}
    for case in CASES:
        status = torch_jit_status(case.traced_text(), traced_reference(case))
        if status not in ("ok", "refused"):
            found[(case.case_id, "traced")] = status
        for section in unique_sections(scripted_records.get(case.case_id, [])):
            status = torch_jit_status(section["text"], section_reference(case, section))
            if status not in ("ok", "refused"):
                found[(case.case_id, "scripted")] = status
    return found


def test_torch_jit_disagrees_with_eager_exactly_where_listed(
    scripted_records: dict[str, list[dict[str, Any]]],
) -> None:
    """torch's own f/df, run by its interpreter, against eager autograd on every
    graph of both forms: the disagreements are JIT_DISAGREES, no more, no fewer.
    The whole scripted calls (torch's executor with autograd) disagree only there too."""
    assert _jit_statuses(scripted_records) == JIT_DISAGREES
    whole_calls = {
        (record["case"], "scripted")
        for records in scripted_records.values()
        for record in records
        if record.get("jit", "ok") != "ok"
    }
    assert whole_calls <= set(JIT_DISAGREES)


@pytest.mark.parametrize(
    "case_id, form", sorted(JIT_DISAGREES), ids=[f"{c}-{f}" for c, f in sorted(JIT_DISAGREES)]
)
def test_gradview_follows_eager_where_torch_jit_does_not(
    case_id: str, form: str, scripted_records: dict[str, list[dict[str, Any]]]
) -> None:
    """The cases where torch's JIT autodiff is wrong or fails: torch's result is
    the one listed, and gradview's is eager autograd's."""
    case = case_by_id(case_id)
    if form == "traced":
        graphs = [(case.traced_text(), traced_reference(case))]
    else:
        sections = unique_sections(scripted_records[case_id])
        graphs = [(s["text"], section_reference(case, s)) for s in sections]
    statuses = [torch_jit_status(text, ref) for text, ref in graphs]
    assert JIT_DISAGREES[(case_id, form)] in statuses
    for text, ref in graphs:
        check_graph(text, ref, follow_eager=True)
