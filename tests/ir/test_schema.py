"""Operator schemas: parsing, printing, overload resolution and node matching."""

from __future__ import annotations

import pytest

from gradview.ir import (
    TENSOR,
    BoolType,
    FloatType,
    Graph,
    IntType,
    ListType,
    NoneType,
    OptionalType,
    SchemaParseError,
    TensorType,
    parse_ir,
    parse_schema,
    resolve_schema,
    schemas_for,
)
from gradview.ir.builtin_schemas import BUILTIN_SCHEMAS
from gradview.ir.schema import NO_DEFAULT

try:  # torch is the oracle only; the tests that need it skip without it
    import torch
except ImportError:  # pragma: no cover
    torch = None

ADD_TENSOR = "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"

# -- parse_schema ------------------------------------------------------------------------------


BUILTIN_TEXTS = [text for overloads in BUILTIN_SCHEMAS.values() for text in overloads]


def test_builtin_schemas_round_trip():
    assert len(BUILTIN_TEXTS) > 3000  # every aten overload of torch 2.13
    assert [text for text in BUILTIN_TEXTS if str(parse_schema(text)) != text] == []


def test_builtin_schemas_are_pytorchs_own():
    """The catalogue is what scripts/gen_builtin_schemas.py makes from the installed torch."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    made = subprocess.run(
        [sys.executable, str(root / "scripts" / "gen_builtin_schemas.py")],
        check=True, capture_output=True, text=True,
    ).stdout
    assert made == (root / "ir" / "builtin_schemas.txt").read_text()


def test_schema_fields():
    schema = parse_schema(ADD_TENSOR)
    assert schema.name == "aten::add" and schema.overload_name == "Tensor"
    assert schema.qualified_name == "aten::add.Tensor"
    assert [a.name for a in schema.arguments] == ["self", "other", "alpha"]
    assert [a.kwarg_only for a in schema.arguments] == [False, False, True]
    assert schema.arguments[0].type == TENSOR
    assert schema.arguments[2].default == 1 and schema.arguments[2].default_text == "1"
    assert schema.arguments[0].default is NO_DEFAULT
    assert len(schema.returns) == 1 and schema.returns[0].type == TENSOR


def test_schema_optional_and_sized_list_arguments():
    schema = parse_schema(
        "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"
    )
    dim, keepdim, dtype = schema.arguments[1:]
    assert dim.type == OptionalType(ListType(IntType())) and dim.list_size == 1
    assert keepdim.default is False
    assert dtype.default is None and dtype.kwarg_only


def test_fixed_size_int_list_default_expands_like_torchscript():
    schema = parse_schema("aten::f(int[2] padding=0, int[2] stride=[]) -> Tensor")
    assert schema.arguments[0].default == [0, 0]
    assert schema.arguments[1].default == []
    assert str(schema) == "aten::f(int[2] padding=0, int[2] stride=[]) -> Tensor"


def test_schema_alias_annotations():
    schema = parse_schema("aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)")
    assert schema.arguments[0].alias == "a" and not schema.arguments[0].is_write
    mutating = parse_schema("aten::relu_(Tensor(a!) self) -> Tensor(a!)")
    assert mutating.arguments[0].is_write and mutating.is_mutable


def test_schema_named_multiple_returns():
    schema = parse_schema(
        "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"
    )
    assert [r.name for r in schema.returns] == ["values", "indices"]


def test_schema_varargs():
    schema = parse_schema("aten::format(str self, ...) -> str")
    assert schema.is_vararg and str(schema) == "aten::format(str self, ...) -> str"


def test_schema_type_variables():
    schema = parse_schema("aten::__getitem__.t(t[](a) list, int idx) -> t(*)")
    assert str(schema.arguments[0].type) == "t[]"
    assert str(schema.returns[0].type) == "t"


@pytest.mark.parametrize(
    "text",
    [
        "add(Tensor self) -> Tensor",
        "aten::add(Tensor self -> Tensor",
        "aten::add(Tensor) -> Tensor",
        "aten::add(Tensor self) -> Tensor junk extra",
        "aten::add(Tensor self)",
    ],
)
def test_malformed_schema_raises(text):
    with pytest.raises(SchemaParseError):
        parse_schema(text)


def test_builtin_schemas_agree_with_torch_schema_parser():
    import torch  # the oracle must be installed: fail, never skip
    for text in BUILTIN_TEXTS:
        theirs, ours = torch._C.parse_schema(text), parse_schema(text)
        assert (theirs.name, theirs.overload_name) == (ours.name, ours.overload_name), text
        assert [a.name for a in theirs.arguments] == [a.name for a in ours.arguments], text
        assert [a.kwarg_only for a in theirs.arguments] == [a.kwarg_only for a in ours.arguments], text
        assert [a.N for a in theirs.arguments] == [a.list_size for a in ours.arguments], text
        assert [a.is_write for a in theirs.arguments] == [a.is_write for a in ours.arguments], text
        assert [r.name for r in theirs.returns] == [r.name for r in ours.returns], text
        for t_arg, o_arg in zip(theirs.arguments, ours.arguments, strict=True):
            assert t_arg.has_default_value() == (o_arg.default is not NO_DEFAULT), text
            if t_arg.has_default_value():
                assert t_arg.default_value == o_arg.default, (text, t_arg.name)


# -- registry and resolution --------------------------------------------------------------------


def test_schemas_for_lists_overloads_in_order():
    """Overload resolution tries them in PyTorch's registration order."""
    import torch  # the oracle must be installed: fail, never skip

    names = [s.qualified_name for s in schemas_for("aten::add")]
    theirs = list(dict.fromkeys(
        f"{s.name}.{s.overload_name}" if s.overload_name else s.name
        for s in torch._C._jit_get_all_schemas() if s.name == "aten::add"
    ))
    assert names == theirs
    assert names[:2] == ["aten::add.Tensor", "aten::add.Scalar"]
    assert {"aten::add.t", "aten::add.int", "aten::add.out"} <= set(names)


def _add_node(lhs_type, rhs_type, alpha=True):
    g = Graph()
    a = g.add_input("a", lhs_type)
    b = g.add_input("b", rhs_type)
    inputs = [a, b]
    if alpha:
        inputs.append(g.insert_constant(1))
    node = g.create("aten::add", inputs, 1)
    g.insert_node(node)
    return node


def test_resolve_add_of_two_tensors_picks_add_tensor():
    assert resolve_schema(_add_node(TENSOR, TENSOR)).qualified_name == "aten::add.Tensor"


def test_resolve_add_of_tensor_and_int_picks_add_scalar():
    assert resolve_schema(_add_node(TENSOR, IntType())).qualified_name == "aten::add.Scalar"


def test_resolve_add_of_two_ints_picks_add_int():
    assert resolve_schema(_add_node(IntType(), IntType(), alpha=False)).qualified_name == "aten::add.int"


def test_resolve_add_of_int_and_float_picks_add_int_float():
    node = _add_node(IntType(), FloatType(), alpha=False)
    assert resolve_schema(node).qualified_name == "aten::add.int_float"


def test_resolve_accepts_refined_tensor_types():
    refined = TensorType("Float", (2, 3), (3, 1), True, "cpu")
    assert resolve_schema(_add_node(refined, refined)).qualified_name == "aten::add.Tensor"


def test_resolve_accepts_int_for_enum_arguments():
    # ScalarType and MemoryFormat travel as plain ints in TorchScript graphs.
    g = parse_ir(
        "graph(%x : Tensor):\n"
        "  %f : int = prim::Constant[value=0]()\n"
        "  %d : int = prim::Constant[value=7]()\n"
        "  %b : bool = prim::Constant[value=0]()\n"
        "  %n : NoneType = prim::Constant()\n"
        "  %y : Tensor = aten::contiguous(%x, %f)\n"
        "  %z : Tensor = aten::to(%x, %d, %b, %b, %n)\n"
        "  return (%y, %z)\n"
    )
    contiguous, to = [n for n in g.nodes() if n.kind() != "prim::Constant"]
    assert contiguous.schema().qualified_name == "aten::contiguous"
    assert to.schema().qualified_name == "aten::to.dtype"


def test_resolve_with_no_matching_overload_is_none():
    node = _add_node(IntType(), TENSOR, alpha=False)
    assert resolve_schema(node) is None
    assert node.maybe_schema() is None
    with pytest.raises(LookupError, match="no registered schema"):
        node.schema()


def test_unknown_operator_has_no_schema():
    g = Graph()
    node = g.insert_node(g.create("custom::op", [g.add_input("x")], 1))
    assert resolve_schema(node) is None


def test_optional_argument_accepts_none_and_the_element():
    g = Graph()
    x = g.add_input("x")
    none = g.insert_constant(None)
    assert none.type() == NoneType()
    with_none = g.insert_node(g.create("aten::linear", [x, x, none], 1))
    with_bias = g.insert_node(g.create("aten::linear", [x, x, x], 1))
    assert with_none.schema().qualified_name == "aten::linear"
    assert with_bias.schema().qualified_name == "aten::linear"


def test_type_variable_binds_consistently():
    g = Graph()
    ints = g.add_input("l", ListType(IntType()))
    floats = g.add_input("m", ListType(FloatType()))
    same = g.insert_node(g.create("aten::add", [ints, ints], 1))
    mixed = g.insert_node(g.create("aten::add", [ints, floats], 1))
    assert same.schema().qualified_name == "aten::add.t"
    assert mixed.maybe_schema() is None


# -- node.matches and named_input ------------------------------------------------------------------


def test_matches_is_true_for_tensor_add():
    assert _add_node(TENSOR, TENSOR).matches(ADD_TENSOR)


def test_matches_is_false_for_int_add():
    assert not _add_node(IntType(), IntType(), alpha=False).matches(ADD_TENSOR)


def test_matches_is_false_for_another_operator():
    g = Graph()
    x = g.add_input("x")
    node = g.insert_node(g.create("aten::sub", [x, x, g.insert_constant(1)], 1))
    assert not node.matches(ADD_TENSOR)


def test_matches_accepts_a_parsed_schema():
    assert _add_node(TENSOR, TENSOR).matches(parse_schema(ADD_TENSOR))


def test_named_input_of_sum_dim_intlist():
    g = Graph()
    x = g.add_input("x")
    out = g.insert("aten::sum", [x, [1], True])
    node = out.node
    assert node.schema().qualified_name == "aten::sum.dim_IntList"
    assert node.named_input("self") is x
    dim = node.named_input("dim")
    assert dim.node.kind() == "prim::Constant" and dim.node.is_("value") == [1]
    assert node.named_input("keepdim").node.i("value") == 1


def test_named_input_of_softmax():
    g = Graph()
    x = g.add_input("x")
    node = g.insert("aten::softmax", [x, 2]).node
    assert node.schema().qualified_name == "aten::softmax.int"
    assert node.named_input("dim").node.i("value") == 2
    assert node.named_input("dtype").type() == NoneType()


def test_named_input_of_unknown_argument_raises():
    g = Graph()
    node = g.insert("aten::softmax", [g.add_input("x"), 2]).node
    with pytest.raises(KeyError, match="no argument 'axis'"):
        node.named_input("axis")


# -- cross-check with torch.jit.script ---------------------------------------------------------------


def scripted_arith(x, y, n: int):
    z = x + y
    w = n + n
    s = x.size()
    t = torch.softmax(x, 1)
    u = x.sum([1])
    v = x.contiguous()
    q = x.to(torch.float64)
    r = x * 2.0 - y / 3
    k = torch.cat([x, y], 0)
    m = x.view(-1)
    return z, w, s, t, u, v, q, r, k, m


def scripted_control(x, flag: bool, n: int):
    y = x.relu() if flag else x.sigmoid()
    for i in range(n):
        y = y * i + x
    items = [n, n + 1]
    return y, len(items), items[0], x.dim(), x.size(0)


def scripted_mixed(x, y: torch.Tensor | None, a: float, b: int):
    c = a * b
    d = a + 1.0
    e = torch.clamp(x, min=0.0)
    f = torch.matmul(x, x) if y is None else x.mm(y)
    g = torch.tanh(x).exp().log()
    return c, d, e, f, g, x.transpose(0, 1), x.unsqueeze(0).squeeze(0), x.max()


def _walk(block):
    for node in block.nodes():
        yield node
        for sub in node.blocks():
            yield from _walk(sub)


@pytest.mark.parametrize("function", [scripted_arith, scripted_control, scripted_mixed], ids=lambda f: f.__name__)
def test_resolved_schemas_match_torch(function):
    import torch as torch_module  # the oracle must be installed: fail, never skip
    assert "schema" in dir(torch_module._C.Node)
    torch_graph = torch_module.jit.script(function).graph
    graph = parse_ir(str(torch_graph))
    torch_nodes, nodes = list(_walk(torch_graph)), list(graph.all_nodes())
    assert [n.kind() for n in nodes] == [n.kind() for n in torch_nodes]
    compared = 0
    for theirs, ours in zip(torch_nodes, nodes, strict=True):
        torch_schema = theirs.schema()
        if torch_schema == "(no schema)" or not schemas_for(ours.kind()):
            continue
        assert str(ours.maybe_schema()) == torch_schema, ours
        compared += 1
    assert compared >= 5


def test_scalar_argument_does_not_accept_bool():
    # As in TorchScript, whose NumberType holds int, float and complex only.
    g = Graph()
    x = g.add_input("x")
    flag = g.add_input("flag", BoolType())
    node = g.insert_node(g.create("aten::mul", [x, flag], 1))
    assert node.maybe_schema() is None


def test_scalar_bool_rejection_matches_torch():
    import torch as torch_module  # the oracle must be installed: fail, never skip
    text = (
        "graph(%x : Tensor, %b : bool, %i : int):\n"
        "  %y : Tensor = aten::mul(%x, %b)\n"
        "  %z : Tensor = aten::mul(%x, %i)\n"
        "  return (%y, %z)\n"
    )
    theirs = [n.schema() for n in torch_module._C.parse_ir(text).nodes()]
    ours = [str(n.maybe_schema()) if n.maybe_schema() else "(no schema)" for n in parse_ir(text).nodes()]
    assert ours == theirs
