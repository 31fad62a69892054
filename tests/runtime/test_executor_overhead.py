"""The executor's fast paths keep torch's semantics (issue 11, point 2).

The training step's overhead was cut by handing the backward graph arrays
instead of Tensors, by handing a fresh gradient over to ``.grad`` without a
copy, by building the backward node's edges in one pass and by caching per-plan
facts; these tests check the places where a shortcut could change what the
user sees, against torch.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.runtime import Tensor, autograd
from gradview.runtime.executor import GraphExecutor

MLP = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %m : Tensor = aten::matmul(%x, %w)
  %a : Tensor = aten::add(%m, %b, %one)
  %h : Tensor = aten::tanh(%a)
  return (%h)
"""


def _problem() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal((5, 3)), rng.standard_normal((3, 4)), rng.standard_normal(4)


def _torch_grads(steps: int) -> list[np.ndarray]:
    x, w, b = (torch.tensor(v) for v in _problem())
    w.requires_grad_(True)
    b.requires_grad_(True)
    for _ in range(steps):
        torch.tanh(x @ w + b).sum().backward()
    return [w.grad.numpy(), b.grad.numpy()]


@pytest.mark.parametrize("steps", [1, 3])
def test_gradients_handed_over_to_grad_accumulate_as_torchs(steps: int) -> None:
    """The first backward keeps df's fresh arrays as .grad (no copy); later ones add
    into them in place: the sums equal torch's, and the leaves' data is untouched."""
    x, w, b = _problem()
    executor = GraphExecutor(parse_ir(MLP))
    tw, tb = Tensor(w.copy(), requires_grad=True), Tensor(b.copy(), requires_grad=True)
    for _ in range(steps):
        (s,) = executor.run([Tensor(x), tw, tb])
        s.sum().backward()
    expected = _torch_grads(steps)
    np.testing.assert_allclose(tw.grad.numpy(), expected[0], rtol=1e-7)
    np.testing.assert_allclose(tb.grad.numpy(), expected[1], rtol=1e-7)
    np.testing.assert_array_equal(tw.data, w)
    assert not np.shares_memory(tw.grad.data, tb.grad.data)


def test_a_gradient_returned_by_grad_is_never_taken_by_a_later_grad() -> None:
    """autograd.grad returns df's fresh array to the caller: used as the gradient of a
    leaf's backward, .grad must copy it (torch's AccumulateGrad does not steal a
    tensor the caller holds), so accumulating again leaves the caller's array alone."""
    x, w, b = _problem()
    (s,) = GraphExecutor(parse_ir(MLP)).run([Tensor(x), Tensor(w, requires_grad=True), Tensor(b)])
    leaf = Tensor(np.zeros((5, 4)), requires_grad=True)
    (g,) = autograd.grad(s.sum(), [s])
    before = g.data.copy()
    leaf.backward(g)
    leaf.backward(g)

    t_leaf = torch.zeros((5, 4), dtype=torch.float64, requires_grad=True)
    t_g = torch.tensor(before)
    t_leaf.backward(t_g)
    t_leaf.backward(t_g)
    np.testing.assert_array_equal(g.data, before)
    np.testing.assert_allclose(leaf.grad.numpy(), t_leaf.grad.numpy(), rtol=1e-7)


def test_a_gradient_returned_by_grad_through_a_differentiable_graph_is_not_shared() -> None:
    """The weight's gradient comes out of df as a fresh array; grad() hands it to the
    caller, and a later backward into a leaf of the same shape copies it."""
    x, w, b = _problem()
    tw = Tensor(w, requires_grad=True)
    (s,) = GraphExecutor(parse_ir(MLP)).run([Tensor(x), tw, Tensor(b)])
    (g,) = autograd.grad(s.sum(), [tw])
    before = g.data.copy()
    leaf = Tensor(np.zeros_like(w), requires_grad=True)
    leaf.backward(g)
    leaf.backward(g)
    np.testing.assert_array_equal(g.data, before)
    np.testing.assert_allclose(leaf.grad.numpy(), 2 * before, rtol=1e-7)
    assert not np.shares_memory(leaf.grad.data, g.data)


def test_a_zero_dimensional_gradient_through_the_array_path_is_an_array() -> None:
    """df may return a NumPy scalar (a 0-d input's gradient); the leaf's .grad is a
    0-d array of the input's dtype, as torch's is a 0-d tensor."""
    graph = parse_ir(
        """graph(%x : Tensor, %c : Tensor):
  %y : Tensor = aten::mul(%x, %c)
  %z : Tensor = aten::sin(%y)
  return (%z)
"""
    )
    x = Tensor(np.array(0.3), requires_grad=True)
    (z,) = GraphExecutor(graph).run([x, Tensor(np.array(2.0))])
    z.backward()
    tx = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    torch.sin(tx * 2.0).backward()
    assert isinstance(x.grad.data, np.ndarray) and x.grad.data.shape == ()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-7)


def test_an_input_of_the_wrong_rank_still_gets_a_plan_of_its_own() -> None:
    """A plan's code no longer checks its inputs (the ArgumentSpec did): a new rank is
    a new spec, compiled and run, never the old plan on the wrong inputs."""
    executor = GraphExecutor(
        parse_ir(
            """graph(%x : Tensor):
  %y : Tensor = aten::sin(%x)
  return (%y)
"""
        )
    )
    a = Tensor(np.ones(3), requires_grad=True)
    b = Tensor(np.ones((2, 3)), requires_grad=True)
    (ya,) = executor.run([a])
    (yb,) = executor.run([b])
    assert executor.cache_misses == 2
    np.testing.assert_allclose(yb.data, torch.sin(torch.ones(2, 3, dtype=torch.float64)).numpy())
    assert ya.shape == (3,) and yb.requires_grad


def test_run_arrays_returns_the_plans_raw_outputs() -> None:
    """The backward graph's call: arrays in, arrays (not Tensors) out, equal to run's."""
    graph = parse_ir(
        """graph(%x : Tensor, %y : Tensor):
  %z : Tensor = aten::mul(%x, %y)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%z, %x)
  return (%t)
"""
    )
    x, y = np.arange(3.0), np.full(3, 2.0)
    executor = GraphExecutor(graph)
    ((z, same),) = executor.run_arrays([x, y])
    assert type(z) is np.ndarray and same is x
    ((tz, _),) = executor.run([x, y])
    np.testing.assert_array_equal(z, tz.data)


def test_a_failure_inside_a_differentiable_graph_names_its_node() -> None:
    """f runs nested in the plan's run (NumPy's error state and the error message are
    the outer run's): a kernel failing in f still names f's node and its inputs."""
    graph = parse_ir(
        """graph(%x : Tensor, %w : Tensor):
  %s : Tensor = aten::sin(%x)
  %c : Tensor = aten::cos(%s)
  %m : Tensor = aten::mm(%c, %w)
  %t : Tensor = aten::tanh(%m)
  %y : Tensor = aten::exp(%t)
  return (%y)
"""
    )
    executor = GraphExecutor(graph)
    x, w = Tensor(np.ones((2, 3)), requires_grad=True), Tensor(np.ones((4, 5)), requires_grad=True)
    with pytest.raises(RuntimeError) as caught:
        executor.run([x, w])
    assert "prim::DifferentiableGraph" in str(executor.graph_for([x, w]))
    message = str(caught.value)
    assert message.startswith("%m") and "aten::mm" in message and "float64[2, 3]" in message, message
    assert "float64[4, 5]" in message, message


def test_a_differentiable_graph_computes_log_of_zero_silently(recwarn: pytest.WarningsRecorder) -> None:
    """torch gives -inf for log(0) and 0/0 = nan without a warning; so does f, nested."""
    graph = parse_ir(
        """graph(%x : Tensor):
  %l : Tensor = aten::log(%x)
  %m : Tensor = aten::mul(%l, %x)
  %s : Tensor = aten::sin(%m)
  %c : Tensor = aten::cos(%s)
  %y : Tensor = aten::mul(%c, %l)
  return (%y)
"""
    )
    x = Tensor(np.array([0.0, 1.0]), requires_grad=True)
    (y,) = GraphExecutor(graph).run([x])
    tx = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    log = torch.log(tx)
    expected = torch.cos(torch.sin(log * tx)) * log
    assert "prim::DifferentiableGraph" in str(GraphExecutor(graph).graph_for([x]))
    np.testing.assert_array_equal(y.data, expected.detach().numpy())
    assert y.requires_grad and not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape", [(), (3,)])
@pytest.mark.parametrize("divisor", ["3", "0", "2.5"])
def test_a_float_tensor_divided_by_a_number_matches_torch(dtype: str, shape: tuple[int, ...], divisor: str) -> None:
    """aten::div.Scalar's fast path (the ufunc itself once the tensor's dtype is known)
    gives torch's dtype and values, a 0-d result included."""
    kind = "int" if "." not in divisor else "float"
    graph = parse_ir(
        f"""graph(%x : Tensor):
  %n : {kind} = prim::Constant[value={divisor}]()
  %y : Tensor = aten::div(%x, %n)
  return (%y)
"""
    )
    data = np.linspace(-1.0, 2.0, int(np.prod(shape))).reshape(shape).astype(dtype)
    (y,) = GraphExecutor(graph).run([Tensor(data)])
    expected = torch.div(torch.tensor(data), float(divisor) if kind == "float" else int(divisor))
    assert y.data.dtype == np.dtype(dtype) and y.data.shape == shape
    np.testing.assert_array_equal(y.data, expected.numpy())


@pytest.mark.parametrize("size", [[4, 3], [0, 2], []])
def test_a_zero_dimensional_tensor_expanded_matches_torch(size: list[int]) -> None:
    """aten::expand of a 0-d tensor (mean's gradient) is a zero-strides view made
    directly: torch's shape and values, and read-only as NumPy's broadcast views are."""
    graph = parse_ir(
        f"""graph(%x : Tensor):
  %s : int[] = prim::Constant[value={size}]()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::expand(%x, %s, %f)
  return (%y)
"""
    )
    (y,) = GraphExecutor(graph).run([Tensor(np.array(2.5))])
    expected = torch.tensor(2.5, dtype=torch.float64).expand(size)
    assert y.shape == tuple(expected.shape)
    np.testing.assert_array_equal(y.data, expected.numpy())
    if size:  # (an expand to [] of a 0-d tensor is the tensor itself)
        assert not y.data.flags.writeable
