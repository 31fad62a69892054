import numpy as np
import pytest

from gradview.ir import parse_ir
from gradview.ir.passes.decompose_ops import decompose_ops

from .pass_check import check_pass, kinds

RNG = np.random.default_rng(7)


def rand(*shape: int) -> np.ndarray:
    return RNG.uniform(-1.0, 1.0, shape)


# -- addmm -------------------------------------------------------------------------------
ADDMM = """graph(%self : SELF, %a : Double(3, 4), %b : Double(4, 5)):
  %beta : BETA_TYPE = prim::Constant[value=BETA]()
  %alpha : int = prim::Constant[value=1]()
  %r : Tensor = aten::addmm(%self, %a, %b, %beta, %alpha)
  %y : Tensor = aten::relu(%r)
  return (%y)
"""


def addmm(beta: str = "1", beta_type: str = "int", self_type: str = "Double(3, 5)") -> str:
    return ADDMM.replace("BETA_TYPE", beta_type).replace("BETA", beta).replace("SELF", self_type)


@pytest.mark.parametrize(("beta", "beta_type"), [("1", "int"), ("1.", "float")])
def test_addmm_with_unit_scalars_becomes_mm_plus_add(beta: str, beta_type: str) -> None:
    graph = check_pass(decompose_ops, addmm(beta, beta_type), [rand(3, 5), rand(3, 4), rand(4, 5)], changes=True)
    assert [k for k in kinds(graph) if k != "prim::Constant"] == ["aten::mm", "aten::add", "aten::relu"]
    add = next(n for n in graph.nodes() if n.kind() == "aten::add")
    assert add.inputs()[0].node.kind() == "aten::mm" and add.inputs()[1] is graph.inputs()[0]
    assert str(add.inputs()[0].type()) == "Double(3, 5)"


def test_addmm_with_a_broadcast_bias() -> None:
    graph = check_pass(decompose_ops, addmm(self_type="Double(5)"), [rand(5), rand(3, 4), rand(4, 5)], changes=True)
    assert "aten::addmm" not in kinds(graph)


def test_addmm_with_other_scalars_stays() -> None:
    check_pass(decompose_ops, addmm("2"), [rand(3, 5), rand(3, 4), rand(4, 5)], changes=False)
    text = """graph(%self : Tensor, %a : Tensor, %b : Tensor, %beta : float):
  %one : int = prim::Constant[value=1]()
  %r : Tensor = aten::addmm(%self, %a, %b, %beta, %one)
  return (%r)
"""
    check_pass(decompose_ops, text, [rand(3, 5), rand(3, 4), rand(4, 5), 1.0], changes=False)


def test_addmm_of_mixed_dtypes_keeps_its_error() -> None:
    graph = parse_ir(addmm(self_type="Float(3, 5)"))
    assert decompose_ops(graph) is False


# -- layer_norm -------------------------------------------------------------------------------
LAYER_NORM = """graph(%x : XTYPE, %w : WTYPE, %b : WTYPE):
  %three : int = prim::Constant[value=3]()
  %four : int = prim::Constant[value=4]()
  %shape : int[] = prim::ListConstruct(%three, %four)
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %none : NoneType = prim::Constant()
  %true : bool = prim::Constant[value=1]()
  %r : Tensor = aten::layer_norm(%x, %shape, WEIGHT, BIAS, %eps, %true)
  return (%r)
"""


def layer_norm(x: str = "Double(2, 3, 4)", w: str = "Double(3, 4)", weight: str = "%w", bias: str = "%b") -> str:
    return (
        LAYER_NORM.replace("XTYPE", x).replace("WTYPE", w).replace("WEIGHT", weight).replace("BIAS", bias)
    )


def test_layer_norm_becomes_mean_and_variance_arithmetic() -> None:
    inputs = [rand(2, 3, 4) * 3 + 1, rand(3, 4), rand(3, 4)]
    graph = check_pass(decompose_ops, layer_norm(), inputs, changes=True)
    ops = [k for k in kinds(graph) if k != "prim::Constant"]
    assert "aten::layer_norm" not in ops
    assert ops.count("aten::mean") == 2 and ops.count("aten::rsqrt") == 1
    assert ops[-2:] == ["aten::mul", "aten::add"]  # * weight + bias


def test_layer_norm_on_unknown_shapes_and_without_weight_or_bias() -> None:
    inputs = [rand(5, 3, 4), rand(3, 4), rand(3, 4)]
    text = layer_norm(x="Tensor", w="Tensor", weight="%none", bias="%none")
    graph = check_pass(decompose_ops, text, inputs, changes=True)
    ops = [k for k in kinds(graph) if k != "prim::Constant"]
    assert ops == ["aten::mean", "aten::sub", "aten::mul", "aten::mean", "aten::add", "aten::rsqrt", "aten::mul"]


def test_layer_norm_with_a_constant_shape_list_over_one_dim() -> None:
    text = """graph(%x : Double(2, 3, 4)):
  %shape : int[] = prim::Constant[value=[4]]()
  %eps : float = prim::Constant[value=0.001]()
  %none : NoneType = prim::Constant()
  %true : bool = prim::Constant[value=1]()
  %r : Tensor = aten::layer_norm(%x, %shape, %none, %none, %eps, %true)
  return (%r)
"""
    graph = check_pass(decompose_ops, text, [rand(2, 3, 4)], changes=True)
    assert "aten::layer_norm" not in kinds(graph)


def test_layer_norm_that_must_stay() -> None:
    inputs = [rand(2, 3, 4), rand(3, 4), rand(3, 4)]
    # a weight that may be None at run time
    check_pass(decompose_ops, layer_norm(w="Tensor?"), inputs, changes=False)
    # a shape known only at run time
    text = """graph(%x : Tensor, %shape : int[]):
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %none : NoneType = prim::Constant()
  %true : bool = prim::Constant[value=1]()
  %r : Tensor = aten::layer_norm(%x, %shape, %none, %none, %eps, %true)
  return (%r)
"""
    check_pass(decompose_ops, text, [rand(2, 3, 4), [3, 4]], changes=False)
    # a shape the input does not end with: keep the kernel's error
    assert decompose_ops(parse_ir(layer_norm(x="Double(2, 4, 3)"))) is False


# -- batch_norm ---------------------------------------------------------------------------------
BATCH_NORM = """graph(%x : XTYPE, %w : Double(3), %b : Double(3), %mean : Double(3), %var : Double(3)):
  %training : bool = prim::Constant[value=TRAINING]()
  %momentum : float = prim::Constant[value=0.1]()
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %none : NoneType = prim::Constant()
  %r : Tensor = aten::batch_norm(%x, WEIGHT, BIAS, %mean, %var, %training, %momentum, %eps, %training)
  return (%r)
"""


def batch_norm(x: str, training: int = 0, weight: str = "%w", bias: str = "%b") -> str:
    return (
        BATCH_NORM.replace("XTYPE", x).replace("TRAINING", str(training)).replace("WEIGHT", weight).replace("BIAS", bias)
    )


def stats() -> list[np.ndarray]:
    return [rand(3), rand(3), rand(3), RNG.uniform(0.5, 2.0, 3)]


@pytest.mark.parametrize(("x_type", "shape"), [("Double(2, 3, 5, 5)", (2, 3, 5, 5)), ("Double(*, *)", (4, 3))])
def test_eval_batch_norm_becomes_per_channel_arithmetic(x_type: str, shape: tuple[int, ...]) -> None:
    graph = check_pass(decompose_ops, batch_norm(x_type), [rand(*shape), *stats()], changes=True)
    ops = [k for k in kinds(graph) if k != "prim::Constant"]
    assert "aten::batch_norm" not in ops
    assert ops.count("aten::reshape") == 4 and ops.count("aten::rsqrt") == 1
    reshape = next(n for n in graph.nodes() if n.kind() == "aten::reshape")
    assert reshape.inputs()[1].node.is_("value") == [1, -1] + [1] * (len(shape) - 2)


def test_eval_batch_norm_without_weight_and_bias() -> None:
    text = batch_norm("Double(2, 3, 4)", weight="%none", bias="%none")
    graph = check_pass(decompose_ops, text, [rand(2, 3, 4), *stats()], changes=True)
    ops = [k for k in kinds(graph) if k != "prim::Constant"]
    assert ops == ["aten::reshape", "aten::sub", "aten::reshape", "aten::add", "aten::rsqrt", "aten::mul"]


def test_batch_norm_that_must_stay() -> None:
    # training mode uses the batch statistics
    check_pass(decompose_ops, batch_norm("Double(2, 3, 4)", training=1), [rand(2, 3, 4), *stats()], changes=False)
    # unknown rank: no way to build the broadcasting shape
    check_pass(decompose_ops, batch_norm("Tensor"), [rand(2, 3, 4), *stats()], changes=False)
    # training decided at run time
    text = batch_norm("Double(2, 3, 4)").replace("%training : bool = prim::Constant[value=0]()\n", "").replace(
        "%var : Double(3))", "%var : Double(3), %training : bool)"
    )
    check_pass(decompose_ops, text, [rand(2, 3, 4), *stats(), False], changes=False)
    # no running statistics: the kernel's error stays
    text = batch_norm("Double(2, 3, 4)").replace("%mean, %var, %training", "%none, %none, %training")
    assert decompose_ops(parse_ir(text)) is False


def test_decomposes_inside_nested_blocks() -> None:
    text = """graph(%s : Double(3, 5), %a : Double(3, 4), %b : Double(4, 5), %c : bool):
  %one : int = prim::Constant[value=1]()
  %r : Tensor = prim::If(%c)
    block0():
      %m : Tensor = aten::addmm(%s, %a, %b, %one, %one)
      -> (%m)
    block1():
      -> (%s)
  return (%r)
"""
    for c in (True, False):
        graph = check_pass(decompose_ops, text, [rand(3, 5), rand(3, 4), rand(4, 5), c], changes=True)
        assert "aten::addmm" not in kinds(graph)


# -- oracle: torch's DecomposeOps on the same IR ----------------------------------------------------------
def _chain(value, depth: int = 4) -> list[str]:  # torch or gradview value
    """Kinds met walking from ``value`` back along first inputs."""
    found = []
    for _ in range(depth):
        node = value.node() if callable(value.node) else value.node
        found.append(node.kind())
        if node.kind() == "prim::Param":
            break
        value = next(iter(node.inputs()))
    return found


def test_matches_torch_on_addmm() -> None:
    torch = pytest.importorskip("torch")
    text = addmm().replace("  %y : Tensor = aten::relu(%r)\n", "").replace("return (%y)", "return (%r)")
    ours = check_pass(decompose_ops, text, [rand(3, 5), rand(3, 4), rand(4, 5)], changes=True)
    theirs = torch._C.parse_ir(text)
    torch._C._jit_pass_decompose_ops(theirs)
    their_ops = sorted(n.kind() for n in theirs.nodes() if n.kind() != "prim::Constant")
    assert sorted(k for k in kinds(ours) if k != "prim::Constant") == their_ops == ["aten::add", "aten::mm"]


def test_matches_torch_on_the_norms() -> None:
    # TorchScript decomposes the norms for CUDA tensors only; typing the IR
    # on cuda:0 lets the CPU build run its decomposition for comparison.
    torch = pytest.importorskip("torch")
    cuda = {"x": "Float(2, 3, 4, device=cuda:0)", "w": "Float(3, 4, device=cuda:0)"}
    ln = layer_norm(x=cuda["x"], w=cuda["w"])
    bn = batch_norm("Float(2, 3, 4, device=cuda:0)").replace("Double(3)", "Float(3, device=cuda:0)")
    for text in (ln, bn):
        ours = parse_ir(text)
        assert decompose_ops(ours) is True
        theirs = torch._C.parse_ir(text)
        torch._C._jit_pass_decompose_ops(theirs)
        # Both end in ((x - mean) * inv_std) * weight + bias.
        expected = ["aten::add", "aten::mul", "aten::mul", "aten::sub", "prim::Param"]
        assert _chain(ours.outputs()[0], 5) == _chain(next(iter(theirs.outputs())), 5) == expected
