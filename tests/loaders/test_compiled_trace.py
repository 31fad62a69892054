"""A TORCH_TRACE log's compiled graphs as a pass trace: the Gradient's lists, and logs without them."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from gradview.loaders.compiled_trace import compiled_trace
from gradview.loaders.torch_trace_log import TorchTraceError, load_torch_trace
from gradview.runtime.trace_types import GraphName, Note

LOGS = Path(__file__).resolve().parent.parent / "data" / "torch_trace"


def test_the_mlps_gradient_lists() -> None:
    """Linear(16, 32) -> tanh -> Linear(32, 4): the forward returns addmm_1, then saves x
    (primals_3), the second weight (primals_4) and tanh; the backward takes those, then the
    one tangent, and returns gradients for the four parameters (not for x)."""
    trace = compiled_trace(load_torch_trace(LOGS / "mlp.log")).trace
    forward = trace[1]
    assert forward.which == GraphName.forward(0) and trace[2].which == GraphName.backward(0)
    notes = forward.annotations
    assert notes[Note.F_REAL_OUTPUTS] == 1
    assert list(notes[Note.DF_INPUT_VJPS]) == [0]
    assert list(notes[Note.DF_INPUT_CAPTURED_INPUTS]) == [2, 3]  # primals_3, primals_4
    assert list(notes[Note.DF_INPUT_CAPTURED_OUTPUTS]) == [3]  # tanh, the forward's fourth output
    assert list(notes[Note.DF_OUTPUT_VJPS]) == [0, 1, 3, 4]
    assert list(notes[Note.DF_CAPTURED_INPUT_PARAMS]) == [0, 1] and list(notes[Note.DF_CAPTURED_OUTPUT_PARAMS]) == [2]
    assert list(notes[Note.DF_VJP_PARAMS]) == [3]
    assert list(notes[Note.DF_OUTPUT_RETURNS]) == [0, 1, 3, 4]
    assert notes[Note.COMPILE_ID] == "0/0"


def _without(entries: list, *keys: str) -> list:
    return [e for e in entries if e.key not in keys]


def test_a_log_without_a_training_step_says_what_it_holds() -> None:
    entries = load_torch_trace(LOGS / "mlp.log")
    with pytest.raises(TorchTraceError, match="Dynamo started on 1 frame but compiled no graph"):
        compiled_trace(_without(entries, "aot_joint_graph", "aot_forward_graph", "aot_backward_graph"), "x.log")
    inference = [
        dataclasses.replace(e, key="aot_inference_graph") if e.key == "aot_forward_graph" else e
        for e in _without(entries, "aot_joint_graph", "aot_backward_graph")
    ]
    with pytest.raises(TorchTraceError, match=r"x\.log: no compiled graph with a backward: the log holds 1 inference graph"):
        compiled_trace(inference, "x.log")
    with pytest.raises(TorchTraceError, match="entries hold no torch.compile graph"):
        compiled_trace([e for e in entries if e.key == "artifact"], "x.log")


def test_a_backward_that_does_not_take_a_saved_value_is_refused_at_its_entry() -> None:
    entries = load_torch_trace(LOGS / "mlp.log")
    edited = [
        dataclasses.replace(e, payload=re.sub(r"\btanh\b", "tanh_renamed", e.payload))
        if e.key == "aot_backward_graph" else e
        for e in entries
    ]
    backward = next(e for e in entries if e.key == "aot_backward_graph")
    with pytest.raises(TorchTraceError, match=rf":{backward.line}: the backward does not take the saved value tanh by its name"):
        compiled_trace(edited)


def test_gradients_are_matched_to_inputs_by_descriptor() -> None:
    """A parameter described as ParamAOTInput(target=...) (torch.export's way) instead of by
    index gets its gradient all the same."""
    entries = load_torch_trace(LOGS / "mlp.log")
    renamed = [
        dataclasses.replace(e, payload=e.payload.replace("PlainAOTInput(idx=0)", "ParamAOTInput(target='0.weight')"))
        for e in entries
    ]
    plain = compiled_trace(entries).trace[1].annotations
    params = compiled_trace(renamed).trace[1].annotations
    assert params[Note.DF_OUTPUT_VJPS] == plain[Note.DF_OUTPUT_VJPS] and list(params[Note.DF_OUTPUT_VJPS]) == [0, 1, 3, 4]
    assert params[Note.DF_OUTPUT_RETURNS] == plain[Note.DF_OUTPUT_RETURNS]


@pytest.mark.parametrize(("short", "dtype", "size"), [("u16", "uint16", 2), ("f8e4m3fn", "float8_e4m3fn", 1), ("bf16", "bfloat16", 2)])
def test_saved_values_of_every_dtype_the_annotations_name(short: str, dtype: str, size: int) -> None:
    from gradview.runtime.saved_values import saved_values

    entries = [
        dataclasses.replace(e, payload=e.payload.replace('tanh: "f32[8, 32]', f'tanh: "{short}[8, 32]'))
        for e in load_torch_trace(LOGS / "mlp.log")
    ]
    [graph] = saved_values(compiled_trace(entries).trace)
    [tanh] = [v for v in graph.saved if v.name == "tanh"]
    assert (tanh.dtype, tanh.bytes) == (dtype, 8 * 32 * size)


def test_a_log_cut_before_the_backward_says_so() -> None:
    entries = load_torch_trace(LOGS / "mlp.log")
    with pytest.raises(TorchTraceError, match="holds AOTAutograd's joint or forward graph but no backward graph"):
        compiled_trace(_without(entries, "aot_backward_graph"), "x.log")
    with pytest.raises(TorchTraceError, match="the log's 1 entry holds no torch.compile graph"):
        compiled_trace([e for e in entries if e.key == "artifact"][:1], "x.log")
