"""Arrays cross between host and device only at the user's edge (issue 11, point 4).

The marker backend (gradview.kernels.marker_backend) plays a GPU on the CPU:
its arrays are NumPy arrays wrapped in ``DeviceArray``, which refuses to meet a
plain ``numpy.ndarray`` and to be converted to one implicitly, as CuPy's arrays
do. The executor's representative cases run under it here (an MLP training
step, a DifferentiableGraph whose backward uses captured values, gradients
with create_graph off, loops and ifs, an LSTM cell step); results and
gradients equal torch's, and the arrays inside the runtime stay marked.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from gradview.ir import from_torch, parse_ir
from gradview.ir.constants import attach_tensor_data
from gradview.kernels import get_backend
from gradview.kernels.marker_backend import DeviceArray, DeviceBoundaryError
from gradview.runtime import GraphRuntimeError, Tensor, compile_graph, run_graph
from gradview.runtime.autograd import grad
from gradview.runtime.executor import GraphExecutor

from .nn_modules import build_case
from .test_executor_autograd import MLP_LOSS
from .test_executor_autograd import SHAPES as MLP_SHAPES
from .test_executor_trace import LOOP_AND_IF

MARKER = get_backend("marker")
xp = MARKER.xp
HOST = np.linspace(-1.0, 1.0, 6).reshape(2, 3)


# -- the marker backend itself -----------------------------------------------------
def test_marker_arrays_stay_marked_through_xp_operators_methods_and_numpy() -> None:
    d = MARKER.to_device(HOST)
    results = {
        "xp.exp": xp.exp(d), "operator": (d + 1.0) * d, "numpy.sum": np.sum(d, axis=0),
        "xp.sum (0-d, as CuPy)": xp.sum(d), "method": d.reshape(3, 2).T, "index": d[0],
        "xp.zeros": xp.zeros((2, 3)), "xp.concatenate": xp.concatenate([d, d]),
        "numpy ufunc": np.tanh(d), "reflected": 2.0 - d, "matmul": d @ d.T,
    }
    for where, value in results.items():
        assert type(value) is DeviceArray, where
    np.testing.assert_allclose(MARKER.to_host(results["operator"]), (HOST + 1.0) * HOST, rtol=1e-15)
    np.testing.assert_allclose(MARKER.to_host(results["matmul"]), HOST @ HOST.T, rtol=1e-15)
    assert xp.add.nout == 1 and xp.add.signature is None and xp.matmul is xp.matmul
    assert xp.float32 is np.float32 and xp.ndarray is DeviceArray


def test_a_host_array_meeting_a_device_array_raises_naming_the_function_and_line() -> None:
    d = MARKER.to_device(HOST)
    with pytest.raises(DeviceBoundaryError, match=r"numpy\.add .*test_device_boundary\.py:\d+"):
        d + HOST
    with pytest.raises(DeviceBoundaryError, match=r"numpy\.multiply"):
        HOST * d
    with pytest.raises(DeviceBoundaryError, match=r"xp\.matmul"):
        xp.matmul(HOST, d)
    with pytest.raises(DeviceBoundaryError, match=r"xp\.asarray"):
        xp.asarray(HOST)  # an upload is Backend.to_device's job
    with pytest.raises(DeviceBoundaryError, match="implicit conversion"):
        np.asarray(d)
    with pytest.raises(DeviceBoundaryError, match=r"ndarray\.__setitem__"):
        d[0] = HOST[0]
    with pytest.raises(DeviceBoundaryError, match="came out where the backend's arrays come out"):
        MARKER.to_host([HOST])


def test_to_device_and_to_host_copy_as_an_upload_and_a_download_do() -> None:
    host = HOST.copy()
    d = MARKER.to_device(host)
    host[0, 0] = 100.0
    assert float(d[0, 0]) == -1.0
    back = MARKER.to_host(d)
    assert type(back) is np.ndarray
    back[0, 0] = 7.0
    assert float(d[0, 0]) == -1.0
    assert MARKER.to_device([host, 3, None])[1:] == [3, None]


# -- the interpreter -----------------------------------------------------------------
CHAIN = """graph(%x : Double(2, 3, strides=[3, 1], requires_grad=0, device=cpu), %n : int):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %t : Tensor = aten::tanh(%acc)
      %s : Tensor = aten::add(%t, %x, %one)
      -> (%true, %s)
  %m : Tensor = aten::mul(%y, %y)
  %dims : int[] = prim::ListConstruct(%one)
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %z : Tensor = aten::sum(%m, %dims, %false, %none)
  return (%z)
"""


def _chain_torch(n: int) -> np.ndarray:
    x = torch.from_numpy(HOST)
    y = x
    for _ in range(n):
        y = torch.tanh(y) + x
    return (y * y).sum(1).numpy()


def test_run_graph_takes_host_arrays_in_and_gives_host_arrays_out() -> None:
    graph = parse_ir(CHAIN)
    for n in (0, 3):
        (result,) = run_graph(graph, [HOST, n], "marker")
        assert type(result) is np.ndarray
        np.testing.assert_allclose(result, _chain_torch(n), rtol=1e-12)


def test_call_on_device_keeps_the_marker_through_loops_and_out_buffers() -> None:
    compiled = compile_graph(parse_ir(CHAIN), MARKER)
    (result,) = compiled.call_on_device(MARKER.to_device(HOST), 3)
    assert type(result) is DeviceArray
    np.testing.assert_allclose(MARKER.to_host(result), _chain_torch(3), rtol=1e-12)


def test_a_host_array_made_mid_graph_is_refused_naming_the_node() -> None:
    graph = parse_ir("graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x)\n  %z : Tensor = aten::mul(%y, %x)\n  return (%z)\n")

    def node_ops(node: Any) -> Any:  # a runtime that brings neg's result to the host
        if node.kind() == "aten::neg":
            return lambda x: [MARKER.to_host(-x)]
        return None

    compiled = compile_graph(graph, MARKER, node_ops=node_ops)
    with pytest.raises(GraphRuntimeError, match=r"aten::mul.*host array.*numpy\.multiply|aten::mul.*xp\.multiply"):
        compiled(HOST)


def test_tensor_constants_attached_by_a_frontend_are_uploaded_once() -> None:
    graph = parse_ir(
        "graph(%x : Tensor):\n  %w : Tensor = prim::Constant[value=<Tensor>]()\n"
        "  %y : Tensor = aten::mul(%x, %w)\n  return (%y)\n"
    )
    attach_tensor_data(next(graph.nodes()), HOST * 2)
    compiled = compile_graph(graph, MARKER)
    (result,) = compiled.call_on_device(MARKER.to_device(HOST))
    assert type(result) is DeviceArray
    np.testing.assert_allclose(MARKER.to_host(result), HOST * HOST * 2, rtol=1e-15)


# -- the executor, with autograd -------------------------------------------------------
def _assert_marked(tensors: list[Any], what: str) -> None:
    for index, value in enumerate(tensors):
        assert isinstance(value, Tensor), f"{what} {index}: {type(value).__name__}"
        assert type(value.data) is DeviceArray, f"{what} {index} holds {type(value.data).__name__}"


def _assert_host(tensors: list[Any], what: str) -> None:
    """Gradients of host leaves land on the host, as torch's do (a recorded copy at run's
    edge brings them back; test_device_edge_autograd.py checks both devices)."""
    for index, value in enumerate(tensors):
        assert isinstance(value, Tensor), f"{what} {index}: {type(value).__name__}"
        assert type(value.data) is np.ndarray, f"{what} {index} holds {type(value.data).__name__}"


def test_mlp_training_steps_keep_the_backend_arrays_and_match_torch() -> None:
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s) * 0.5 for s in MLP_SHAPES]
    executor = GraphExecutor(parse_ir(MLP_LOSS), backend="marker")
    x, target = Tensor(values[0]), Tensor(values[1])
    params = [Tensor(v.copy(), requires_grad=True) for v in values[2:]]
    t_x, t_target = torch.tensor(values[0]), torch.tensor(values[1])
    t_params = [torch.tensor(v.copy(), requires_grad=True) for v in values[2:]]
    for _ in range(3):  # the first run compiles the plan, the others reuse it
        (loss,) = executor.run([x, target, *params])
        _assert_marked([loss], "loss")
        grads = grad([loss], params, create_graph=False)
        _assert_host(list(grads), "gradient")
        assert not any(g.requires_grad for g in grads)
        t_loss = ((torch.tanh(t_x @ t_params[0] + t_params[1]) @ t_params[2] + t_params[3] - t_target) ** 2).mean()
        t_grads = torch.autograd.grad(t_loss, t_params)
        np.testing.assert_allclose(loss.detach().numpy(), t_loss.item(), rtol=1e-7)
        for p, g, tp, tg in zip(params, grads, t_params, t_grads, strict=True):
            np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-7, atol=1e-12)
            p.data = p.data - 0.1 * g.numpy()  # the user's edge: the update is on the host
            with torch.no_grad():
                tp -= 0.1 * tg
    assert executor.cache_misses == 1 and executor.cache_hits == 2
    optimized = executor.last_executed_optimized_graph()
    diff = [n for n in optimized.nodes() if n.kind() == "prim::DifferentiableGraph"]
    assert len(diff) == 1 and len(diff[0].g("Subgraph").outputs()) > 1  # captured values


def test_loops_and_ifs_outside_differentiable_graphs_keep_the_backend_arrays() -> None:
    rng = np.random.default_rng(0)
    for n, flag in ((0, True), (3, False)):
        data = rng.standard_normal((3, 4))
        x = Tensor(data.copy(), requires_grad=True)
        (result,) = GraphExecutor(parse_ir(LOOP_AND_IF), backend="marker").run([x, n, flag])
        _assert_marked([result], "result")
        (gx,) = grad([result.sum()], [x])
        _assert_host([gx], "gradient")
        t_x = torch.tensor(data, requires_grad=True)
        value = torch.sigmoid(torch.tanh(t_x) * t_x)
        for _ in range(n):
            value = torch.tanh(value * t_x)
        expected = torch.exp(value) if flag else value
        (t_gx,) = torch.autograd.grad(expected.sum(), [t_x])
        np.testing.assert_allclose(result.detach().numpy(), expected.detach().numpy(), rtol=1e-7)
        np.testing.assert_allclose(gx.numpy(), t_gx.numpy(), rtol=1e-7, atol=1e-12)


def test_no_grad_inputs_run_the_plain_plan_on_the_backend() -> None:
    rng = np.random.default_rng(1)
    values = [rng.standard_normal(s) for s in MLP_SHAPES]
    (loss,) = GraphExecutor(parse_ir(MLP_LOSS), backend="marker").run([Tensor(v) for v in values])
    _assert_marked([loss], "loss")
    assert not loss.requires_grad
    expected = run_graph(parse_ir(MLP_LOSS), values)[0]
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("how", ["trace", "script"])
def test_lstm_cell_step_keeps_the_backend_arrays_and_matches_torch(how: str) -> None:
    module, inputs = build_case("LSTMCell")
    graph, values = from_torch(module, inputs, how=how)
    module, inputs = build_case("LSTMCell")
    n_inputs, n_params = len(inputs), len(list(module.parameters()))
    leaves = [i for i in range(n_inputs + n_params) if np.asarray(values[i]).dtype.kind == "f"]
    tensors = [
        Tensor(np.array(v), requires_grad=i in leaves) if hasattr(v, "shape") else v for i, v in enumerate(values)
    ]
    outputs = GraphExecutor(graph, backend="marker").run(tensors)
    flat = [o for out in outputs for o in (out if isinstance(out, list | tuple) else [out])]
    _assert_marked(flat, "output")
    torch_inputs = [t.detach().clone().requires_grad_(True) for t in inputs]
    expected = module(*torch_inputs)
    for ours, theirs in zip(flat, expected, strict=True):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-7, atol=1e-12)
    rng = np.random.default_rng(2)
    weights = [rng.standard_normal(tuple(e.shape)) for e in expected]
    loss = sum((o * Tensor(MARKER.to_device(w))).sum() for o, w in zip(flat, weights, strict=True))
    t_loss = sum((e * torch.tensor(w)).sum() for e, w in zip(expected, weights, strict=True))
    ours_grads = grad([loss], [tensors[i] for i in leaves])
    theirs = torch.autograd.grad(t_loss, [*torch_inputs, *module.parameters()])
    _assert_host(list(ours_grads), "gradient")
    for index, mine, reference in zip(leaves, ours_grads, theirs, strict=True):
        np.testing.assert_allclose(
            mine.numpy(), reference.numpy(), rtol=1e-7, atol=1e-12, err_msg=f"gradient of input {index}"
        )


def test_the_marker_catches_a_runtime_that_brings_results_to_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """The regression this file guards: DifferentiableGraphOp's forward once ran
    ``CompiledGraph.__call__``, which brings results to the host mid-graph."""
    from gradview.runtime import interpreter

    def to_host(self: Any, *inputs: Any) -> list[Any]:
        return self.backend.results_to_host(self._run(inputs))

    monkeypatch.setattr(interpreter.CompiledGraph, "call_on_device", to_host)
    monkeypatch.setattr(interpreter.CompiledGraph, "call_nested", to_host)  # f's run inside a plan
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s) for s in MLP_SHAPES]
    params = [Tensor(v, requires_grad=True) for v in values[2:]]
    with pytest.raises((DeviceBoundaryError, GraphRuntimeError), match="host array|implicit conversion"):
        (loss,) = GraphExecutor(parse_ir(MLP_LOSS), backend="marker").run([Tensor(values[0]), Tensor(values[1]), *params])
        grad([loss], params)


SIN_X_X = """graph(%x : Tensor):
  %s : Tensor = aten::sin(%x)
  %a : Tensor = aten::mul(%s, %x)
  %y : Tensor = aten::mul(%a, %x)
  return (%y)
"""


def test_double_backward_through_a_differentiable_graph_keeps_the_backend_arrays() -> None:
    data = np.array([1.0, -0.5, 2.0])
    x = Tensor(data.copy(), requires_grad=True)
    (y,) = GraphExecutor(parse_ir(SIN_X_X), backend="marker").run([x])
    (gx,) = grad([y.sum()], [x], create_graph=True)
    assert gx.requires_grad
    (ggx,) = grad([gx.sum()], [x])
    _assert_host([gx, ggx], "gradient")
    t_x = torch.tensor(data, requires_grad=True)
    (t_gx,) = torch.autograd.grad((torch.sin(t_x) * t_x * t_x).sum(), [t_x], create_graph=True)
    (t_ggx,) = torch.autograd.grad(t_gx.sum(), [t_x])
    np.testing.assert_allclose(gx.detach().numpy(), t_gx.detach().numpy(), rtol=1e-7)
    np.testing.assert_allclose(ggx.numpy(), t_ggx.numpy(), rtol=1e-7)


# -- mixing devices in eager Tensor ops ----------------------------------------------------
def test_a_device_tensor_and_a_host_tensor_are_refused_as_pytorch_refuses_them() -> None:
    """torch: "Expected all tensors to be on the same device, but found at least two devices,
    cuda:0 and cpu!" (its RuntimeError for a CUDA tensor times a CPU tensor)."""
    on_device = Tensor(MARKER.to_device(HOST), requires_grad=True)
    on_host = Tensor(HOST.copy())
    expected = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    with pytest.raises(RuntimeError) as caught:
        _ = on_device * on_host
    assert str(caught.value) == expected
    with pytest.raises(RuntimeError, match="cpu and cuda:0!"):
        _ = on_host + on_device
    # A host number (a 0-d array) goes with any device, as a CPU scalar tensor does in torch,
    # on either side of the operator.
    for scaled in (on_device * Tensor(np.array(2.0)), Tensor(np.array(2.0)) * on_device):
        assert type(scaled.data) is DeviceArray
        np.testing.assert_allclose(MARKER.to_host(scaled.data), HOST * 2.0, rtol=1e-15)
