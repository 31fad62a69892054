"""Values and nodes: debug names, uses, input/output edits, attributes, order and removal."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradview.ir import (
    TENSOR,
    AttributeKind,
    Graph,
    IntType,
    TensorConstant,
    TensorType,
    TupleType,
    Use,
    lint,
    parse_ir,
)

from .corpus import IF_GRAPH

# -- helpers -------------------------------------------------------------------------


def _chain():
    """x -> relu -> sigmoid -> tanh, returning the tanh output."""
    g = Graph()
    x = g.add_input("x")
    a = g.insert("aten::relu", [x])
    b = g.insert("aten::sigmoid", [a])
    c = g.insert("aten::tanh", [b])
    g.register_output(c)
    return g, x, a, b, c


def _if_graph():
    g = parse_ir(IF_GRAPH)
    relu, if_node, sigmoid, tanh, neg = g.all_nodes()
    return g, relu, if_node, sigmoid, tanh, neg


# -- debug names ---------------------------------------------------------------------


def test_unnamed_values_print_their_unique_number():
    g = Graph()
    v = g.add_input()
    assert not v.has_debug_name()
    assert v.debug_name() == str(v.unique)


def test_set_debug_name_names_the_value():
    g = Graph()
    v = g.add_input()
    v.set_debug_name("x")
    assert v.debug_name() == "x"
    assert g.value_by_name("x") is v
    assert g.value_by_name("%x") is v


def test_name_clash_renames_the_old_owner():
    g = Graph()
    old = g.add_input("x")
    new = g.add_input()
    new.set_debug_name("x")
    assert new.debug_name() == "x"
    assert old.debug_name() == "x.1"
    assert g.value_by_name("x.1") is old


def test_repeated_clashes_follow_torchscript_suffix_counter():
    # TorchScript keeps the per-base counter one past the suffix it used,
    # so the owners become x.1, x.3, x.5 (checked against torch 2.13).
    g = Graph()
    values = [g.add_input() for _ in range(4)]
    for v in values:
        v.set_debug_name("x")
    assert [v.debug_name() for v in values] == ["x.1", "x.3", "x.5", "x"]


def test_clash_on_dotted_name_continues_from_its_suffix():
    g = Graph()
    old = g.add_input("y.5")
    g.add_input("y.5")
    assert old.debug_name() == "y.6"


def test_suffix_counters_are_per_base():
    g = Graph()
    g.add_input("a")
    a_owner_first = g.value_by_name("a")
    g.add_input("a")
    b_owner = g.add_input("b")
    g.add_input("b")
    assert a_owner_first.debug_name() == "a.1"
    assert b_owner.debug_name() == "b.1"


def test_clash_skips_suffixes_already_taken():
    g = Graph()
    taken = g.add_input("z.1")
    old = g.add_input("z")
    g.add_input("z")
    assert taken.debug_name() == "z.1"
    assert old.debug_name() == "z.2"


def test_names_match_torch_set_debug_name():
    import torch  # the oracle must be installed: fail, never skip
    requests = ["x", "x", "x", "y.5", "y.5", "y", "y", "x.1"]
    tg = torch._C.Graph()
    t_values = [tg.addInput() for _ in requests]
    g = Graph()
    g_values = [g.add_input() for _ in requests]
    for name, tv, gv in zip(requests, t_values, g_values, strict=True):
        tv.setDebugName(name)
        gv.set_debug_name(name)
        assert [v.debug_name() for v in g_values] == [v.debugName() for v in t_values]


def test_numeric_debug_names_are_rejected():
    g = Graph()
    v = g.add_input()
    with pytest.raises(ValueError, match="not valid"):
        v.set_debug_name("12")


def test_empty_name_clears_the_debug_name():
    g = Graph()
    v = g.add_input("q")
    v.set_debug_name("")
    assert not v.has_debug_name()
    assert g.value_by_name("q") is None


def test_renaming_frees_the_old_name():
    g = Graph()
    v = g.add_input("a")
    v.set_debug_name("b")
    w = g.add_input("a")
    assert w.debug_name() == "a" and v.debug_name() == "b"


# -- types -------------------------------------------------------------------------------


def test_value_type_defaults_to_tensor_and_can_be_set():
    g = Graph()
    v = g.add_input("x")
    assert v.type() == TENSOR
    v.set_type(IntType())
    assert v.type() == IntType()


# -- uses -------------------------------------------------------------------------------


def test_uses_list_users_and_offsets():
    g = Graph()
    x = g.add_input("x")
    y = g.insert("aten::mul", [x, x])
    assert x.uses == [Use(y.node, 0), Use(y.node, 1)]
    assert x.has_uses() and not y.has_uses()


def test_return_node_counts_as_a_use():
    g, _x, _a, _b, c = _chain()
    assert c.uses == [Use(g.return_node(), 0)]


def test_replace_all_uses_with_moves_every_use():
    g, x, a, b, c = _chain()
    a_users = [u.user for u in a.uses]
    a.replace_all_uses_with(x)
    assert a.uses == []
    assert not a.has_uses()
    assert [u.user for u in x.uses][-len(a_users):] == a_users
    assert b.node.inputs() == [x]
    lint(g)


def test_replace_all_uses_with_includes_graph_outputs():
    g, _x, _a, b, c = _chain()
    c.replace_all_uses_with(b)
    assert g.outputs() == [b]
    assert c.uses == []


def test_replace_all_uses_with_itself_is_a_no_op():
    g, _x, a, _b, _c = _chain()
    before = a.uses
    a.replace_all_uses_with(a)
    assert a.uses == before


def test_replace_input_returns_the_old_value_and_updates_uses():
    g, x, a, b, _c = _chain()
    node = b.node
    old = node.replace_input(0, x)
    assert old is a
    assert node.inputs() == [x]
    assert Use(node, 0) in x.uses
    assert a.uses == []
    lint(g)


def test_replace_input_with_replaces_every_occurrence():
    g = Graph()
    x, y = g.add_input("x"), g.add_input("y")
    mul = g.insert("aten::mul", [x, x]).node
    mul.replace_input_with(x, y)
    assert mul.inputs() == [y, y]
    assert x.uses == []
    assert y.uses == [Use(mul, 0), Use(mul, 1)]


def test_add_input_appends_and_records_the_use():
    g = Graph()
    x = g.add_input("x")
    node = g.create("prim::TupleConstruct", [], 1)
    g.insert_node(node)
    node.add_input(x)
    node.add_input(x)
    assert node.inputs() == [x, x]
    assert x.uses == [Use(node, 0), Use(node, 1)]


def test_insert_input_shifts_later_uses():
    g = Graph()
    x, y, z = g.add_input("x"), g.add_input("y"), g.add_input("z")
    node = g.create("prim::TupleConstruct", [x, z], 1)
    g.insert_node(node)
    node.insert_input(1, y)
    assert node.inputs() == [x, y, z]
    assert z.uses == [Use(node, 2)]
    lint(g)


def test_remove_input_shifts_later_uses():
    g = Graph()
    x, y, z = g.add_input("x"), g.add_input("y"), g.add_input("z")
    node = g.create("prim::TupleConstruct", [x, y, z], 1)
    g.insert_node(node)
    node.remove_input(0)
    assert node.inputs() == [y, z]
    assert x.uses == [] and z.uses == [Use(node, 1)]
    lint(g)


def test_remove_all_inputs_drops_every_use():
    g = Graph()
    x = g.add_input("x")
    node = g.create("prim::TupleConstruct", [x, x], 1)
    node.remove_all_inputs()
    assert node.inputs() == [] and x.uses == []


def test_add_output_appends_a_typed_value():
    g = Graph()
    node = g.create("prim::TupleUnpack", [], 0)
    first = node.add_output(IntType())
    second = node.add_output()
    assert node.outputs() == [first, second]
    assert (first.offset, second.offset) == (0, 1)
    assert first.node is node and first.type() == IntType() and second.type() == TENSOR


def test_erase_output_renumbers_later_outputs():
    g = Graph()
    node = g.insert_node(g.create("prim::TupleUnpack", [], 3))
    a, b, c = node.outputs()
    node.erase_output(1)
    assert node.outputs() == [a, c]
    assert c.offset == 1


def test_erase_output_frees_its_name():
    g = Graph()
    node = g.insert_node(g.create("prim::TupleUnpack", [], 1))
    node.output().set_debug_name("gone")
    node.erase_output(0)
    assert g.value_by_name("gone") is None


def test_erase_output_refuses_while_used():
    g, _x, a, _b, _c = _chain()
    with pytest.raises(ValueError, match="still has uses"):
        a.node.erase_output(0)


def test_input_and_output_accessors():
    g = Graph()
    x, y = g.add_input("x"), g.add_input("y")
    add = g.insert("aten::add", [x, y]).node
    assert add.input(0) is x and add.input(1) is y
    assert add.output() is add.output(0) is add.outputs()[0]
    assert len(add.inputs()) == 3 and len(add.outputs()) == 1
    with pytest.raises(ValueError, match="not one"):
        add.input()
    relu = g.insert("aten::relu", [x]).node
    assert relu.input() is x


# -- attributes ----------------------------------------------------------------------------


def _node_with_every_attribute():
    g = Graph()
    sub = Graph()
    node = g.create("prim::Foo", [], 1)
    node.i_("i", 3)
    node.f_("f", 2.0)
    node.s_("s", "hi")
    node.is__("is", [1, 2])
    node.fs_("fs", [1.0, 2.5])
    node.ss_("ss", ["a", "b"])
    node.t_("t", TensorConstant((1.0, 2.0), (2,), "Float"))
    node.ty_("ty", IntType())
    node.tys_("tys", [IntType(), TENSOR])
    node.g_("g", sub)
    node.gs_("gs", [sub, sub])
    node.ival_("ival", (1, "a"))
    g.insert_node(node)
    return g, node, sub


def test_attribute_names_keep_insertion_order():
    _g, node, _sub = _node_with_every_attribute()
    assert node.attribute_names() == ["i", "f", "s", "is", "fs", "ss", "t", "ty", "tys", "g", "gs", "ival"]


def test_kind_of_names_each_attribute_kind():
    _g, node, _sub = _node_with_every_attribute()
    assert [node.attribute_kind(name) for name in node.attribute_names()] == [
        "i", "f", "s", "is", "fs", "ss", "t", "ty", "tys", "g", "gs", "ival",
    ]
    assert node.attribute_kind("is") is AttributeKind.is_


def test_attribute_getters_return_the_stored_values():
    _g, node, sub = _node_with_every_attribute()
    assert node.i("i") == 3
    assert node.f("f") == 2.0
    assert node.s("s") == "hi"
    assert node.is_("is") == [1, 2]
    assert node.fs("fs") == [1.0, 2.5]
    assert node.ss("ss") == ["a", "b"]
    assert node.t("t").values == (1.0, 2.0)
    assert node.ty("ty") == IntType()
    assert node.tys("tys") == [IntType(), TENSOR]
    assert node.g("g") is sub
    assert node.gs("gs") == [sub, sub]
    assert node.ival("ival") == (1, "a")


def test_is_underscore_reads_and_with_a_value_sets_like_torch():
    g = Graph()
    node = g.create("prim::Foo", [], 0)
    assert node.is_("dims", [3, 4]) is node
    assert node.is_("dims") == [3, 4]
    assert node.attribute_kind("dims") == "is"


def test_has_attribute():
    _g, node, _sub = _node_with_every_attribute()
    assert node.has_attribute("ty") and node.has_attributes()
    assert not node.has_attribute("value")
    node.remove_attribute("ty")
    assert not node.has_attribute("ty")


def test_getter_of_the_wrong_kind_raises():
    _g, node, _sub = _node_with_every_attribute()
    with pytest.raises(TypeError, match="kind"):
        node.f("i")
    with pytest.raises(KeyError, match="nope"):
        node.i("nope")


def test_attributes_print_like_torchscript():
    g, _node, _sub = _node_with_every_attribute()
    line = str(g).splitlines()[1]
    assert line == (
        '  %0 : Tensor = prim::Foo[i=3, f=2., s="hi", is=[1, 2], fs=[1., 2.5], ss=["a", "b"], '
        "t= 1  2 [ CPUFloatType{2} ], ty=int, tys=[int, Tensor], g=<Graph>, gs=[<Graphs>], "
        'ival=(1, "a")]()'
    )


def _set_printable_attributes(node, tensor, int_type, tensor_type):
    """One chain of the setters gradview's Node shares with torch's (each returns the node)."""
    return (
        node.i_("i", 3).f_("f", 0.1).s_("s", "hi").is_("is", [1, 2]).fs_("fs", [1.0, 2.5])
        .ss_("ss", ["a", "b"]).t_("t", tensor)
        .ty_("ty", int_type).tys_("tys", [int_type, tensor_type]).ival_("ival", (1, "a"))
    )


def test_attribute_printing_matches_torch():
    import torch  # the oracle must be installed: fail, never skip
    tg = torch._C.Graph()
    tn = tg.create("prim::Foo", [], 1)
    torch_int = torch._C.IntType.get()
    assert _set_printable_attributes(tn, torch.tensor([1.0, 2.0]), torch_int, torch._C.TensorType.get()) is tn
    tg.appendNode(tn)
    g = Graph()
    n = g.create("prim::Foo", [], 1)
    assert _set_printable_attributes(n, TensorConstant((1.0, 2.0), (2,), "Float"), IntType(), TENSOR) is n
    g.append_node(n)
    assert str(g) == str(tg)


# -- order -----------------------------------------------------------------------------------


def test_is_before_and_is_after_in_one_block():
    _g, _x, a, b, c = _chain()
    assert a.node.is_before(b.node) and a.node.is_before(c.node)
    assert c.node.is_after(a.node)
    assert not b.node.is_before(a.node)
    assert not a.node.is_before(a.node) and not a.node.is_after(a.node)


def test_is_before_across_nested_blocks():
    _g, relu, if_node, sigmoid, tanh, neg = _if_graph()
    assert relu.is_before(sigmoid) and relu.is_before(tanh)
    assert sigmoid.is_before(neg) and tanh.is_before(neg)
    assert neg.is_after(sigmoid) and sigmoid.is_after(relu)
    assert not neg.is_before(sigmoid)


def test_nodes_of_sibling_blocks_are_unordered():
    # As in TorchScript: both walk up to the same prim::If.
    _g, _relu, _if_node, sigmoid, tanh, _neg = _if_graph()
    assert not sigmoid.is_before(tanh) and not tanh.is_before(sigmoid)


def test_enclosing_node_is_neither_before_nor_after_its_nested_nodes():
    # TorchScript's rule: the ancestors sharing a block are the If itself.
    _g, _relu, if_node, sigmoid, _tanh, _neg = _if_graph()
    assert not if_node.is_before(sigmoid)
    assert not sigmoid.is_before(if_node)
    assert not sigmoid.is_after(if_node)
    assert not if_node.is_after(sigmoid)


def test_is_before_across_graphs_raises():
    _g1, _x, a, _b, _c = _chain()
    _g2, _y, d, _e, _f = _chain()
    with pytest.raises(ValueError, match="different graphs"):
        a.node.is_before(d.node)


def test_topological_positions_increase_along_the_block():
    g, *_ = _chain()
    positions = [n.topo_position for n in g.nodes()]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)


def _positions_ok(block):
    nodes = list(block.nodes())
    positions = [n.topo_position for n in nodes]
    return positions == sorted(positions) and len(set(positions)) == len(positions)


def test_inserting_repeatedly_between_two_neighbours_renumbers():
    g, x, a, b, _c = _chain()
    first, second = a.node, b.node
    inserted = []
    for _ in range(200):
        node = g.create("aten::neg", [x])
        node.insert_after(first)
        inserted.append(node)
    order = list(g.nodes())
    # Each new node went right after ``first``: the newest comes first.
    assert order[0] is first
    assert order[1:201] == inserted[::-1]
    assert order[201] is second
    assert _positions_ok(g.block)
    assert all(p.is_before(q) for p, q in zip(order, order[1:], strict=False))
    lint(g)


def test_inserting_repeatedly_before_the_same_node_renumbers():
    g, x, a, b, _c = _chain()
    inserted = []
    for _ in range(200):
        node = g.create("aten::neg", [x])
        node.insert_before(b.node)
        inserted.append(node)
    order = list(g.nodes())
    assert order[1:201] == inserted
    assert _positions_ok(g.block)
    assert a.node.is_before(inserted[0]) and inserted[-1].is_before(b.node)
    lint(g)


def test_renumbering_inside_a_nested_block():
    g, _relu, _if_node, sigmoid, _tanh, _neg = _if_graph()
    x = g.inputs()[0]
    block = sigmoid.owning_block
    for _ in range(200):
        g.create("aten::neg", [x]).insert_before(sigmoid)
    assert _positions_ok(block)
    assert list(block.nodes())[-1] is sigmoid
    lint(g)


def test_appending_past_the_return_sentinel_renumbers():
    g, x, _a, _b, c = _chain()
    c.node.topo_position = g.return_node().topo_position - 1  # as after millions of appends
    appended = g.insert("aten::neg", [x]).node
    assert appended.is_before(g.return_node())
    assert _positions_ok(g.block)
    lint(g)


def test_prepending_past_the_param_sentinel_renumbers():
    g, x, a, _b, _c = _chain()
    a.node.topo_position = g.param_node().topo_position + 1
    first = g.create("aten::neg", [x]).insert_after(g.param_node())
    assert first.topo_position > g.param_node().topo_position
    assert first.is_before(a.node)
    assert _positions_ok(g.block)
    lint(g)


# -- insert, move, destroy -----------------------------------------------------------------


def test_insert_before_and_after():
    g, x, a, b, _c = _chain()
    before = g.create("aten::neg", [x]).insert_before(b.node)
    after = g.create("aten::exp", [x]).insert_after(b.node)
    order = [n.kind() for n in g.nodes()]
    assert order == ["aten::relu", "aten::neg", "aten::sigmoid", "aten::exp", "aten::tanh"]
    assert before.is_before(b.node) and after.is_after(b.node)
    lint(g)


def test_insert_after_param_node_puts_the_node_first():
    g, x, a, _b, _c = _chain()
    node = g.create("aten::neg", [x]).insert_after(g.param_node())
    assert next(iter(g.nodes())) is node
    assert node.is_before(a.node)


def test_inserting_a_linked_node_again_is_refused():
    _g, _x, a, b, _c = _chain()
    with pytest.raises(ValueError, match="already in a block"):
        a.node.insert_before(b.node)


def test_insert_before_param_node_is_refused():
    g, x, *_ = _chain()
    with pytest.raises(ValueError, match="param node"):
        g.create("aten::neg", [x]).insert_before(g.param_node())


def test_move_before_and_move_after_keep_uses():
    g, x, a, b, c = _chain()
    extra = g.create("aten::neg", [x])
    extra.insert_after(c.node)
    extra.move_before(a.node)
    assert next(iter(g.nodes())) is extra
    assert extra.is_before(a.node)
    extra.move_after(b.node)
    assert [n.kind() for n in g.nodes()] == ["aten::relu", "aten::sigmoid", "aten::neg", "aten::tanh"]
    assert extra.is_after(b.node) and extra.is_before(c.node)
    assert x.uses[-1] == Use(extra, 0)
    lint(g)


def test_move_into_a_nested_block():
    g, relu, if_node, sigmoid, _tanh, _neg = _if_graph()
    extra = g.create("aten::exp", [g.inputs()[0]])
    extra.insert_after(relu)
    extra.move_before(sigmoid)
    assert extra.owning_block is sigmoid.owning_block
    assert not extra.is_after(if_node) and extra.is_before(sigmoid)  # nested: neither
    lint(g)


def test_move_into_its_own_block_is_refused_and_leaves_the_graph_intact():
    g, _relu, if_node, sigmoid, _tanh, _neg = _if_graph()
    text = str(g)
    with pytest.raises(ValueError, match="into one of its own blocks"):
        if_node.move_before(sigmoid)
    assert if_node.is_alive and str(g) == text
    lint(g)


def test_move_relative_to_itself_is_refused():
    g, _x, a, _b, _c = _chain()
    with pytest.raises(ValueError, match="itself"):
        a.node.move_after(a.node)
    assert a.node.is_alive
    lint(g)


def test_move_next_to_a_node_of_another_graph_is_refused():
    g, _x, a, _b, _c = _chain()
    _other, _y, d, _e, _f = _chain()
    with pytest.raises(ValueError, match="not in its graph"):
        a.node.move_before(d.node)
    assert a.node.owning_block is g.block
    lint(g)


def test_destroy_removes_the_node_and_its_uses():
    g, x, a, b, c = _chain()
    b.node.replace_input(0, x)
    a.node.destroy()
    assert [n.kind() for n in g.nodes()] == ["aten::sigmoid", "aten::tanh"]
    assert Use(a.node, 0) not in x.uses
    assert not a.node.is_alive
    lint(g)


def test_destroy_refuses_while_outputs_are_used():
    g, _x, a, _b, _c = _chain()
    with pytest.raises(ValueError, match=r"cannot destroy aten::relu: output %\d+ is still used by aten::sigmoid"):
        a.node.destroy()
    assert a.node.is_alive
    lint(g)


def test_destroy_frees_the_output_names():
    g = Graph()
    x = g.add_input("x")
    y = g.insert("aten::relu", [x])
    y.set_debug_name("y")
    y.node.destroy()
    assert g.value_by_name("y") is None
    fresh = g.insert("aten::relu", [x])
    fresh.set_debug_name("y")
    assert fresh.debug_name() == "y"


def test_destroying_a_node_with_blocks_releases_inner_uses():
    g, relu, if_node, _sigmoid, _tanh, neg = _if_graph()
    a = relu.output()
    neg.replace_input(0, a)
    if_node.destroy()
    assert a.uses == [Use(neg, 0)]
    assert g.inputs()[1].uses == []
    assert g.value_by_name("b") is None
    lint(g)


def test_nodes_iteration_survives_destroying_the_current_node():
    g, _x, _a, _b, c = _chain()
    g.erase_output(0)
    for node in list(g.block.reverse_nodes()):
        node.destroy()
    assert list(g.nodes()) == []
    assert g.block.is_empty()


# -- torch._C-style accessors ------------------------------------------------------------------


def test_kind_inputs_outputs_blocks():
    _g, relu, if_node, sigmoid, _tanh, _neg = _if_graph()
    assert relu.kind() == "aten::relu"
    assert [v.debug_name() for v in relu.inputs()] == ["x"]
    assert [v.debug_name() for v in if_node.outputs()] == ["r"]
    assert len(if_node.blocks()) == 2
    assert sigmoid.owning_block is if_node.blocks()[0]
    assert if_node.blocks()[0].owning_node is if_node


def test_output_types_of_multi_output_node():
    g = parse_ir(
        "graph(%t : (Tensor, int)):\n"
        "  %a : Tensor, %b : int = prim::TupleUnpack(%t)\n"
        "  return (%a, %b)\n"
    )
    node = next(iter(g.nodes()))
    assert [v.type() for v in node.outputs()] == [TENSOR, IntType()]
    assert g.inputs()[0].type() == TupleType((TENSOR, IntType()))


def test_value_node_and_offset():
    g = parse_ir(
        "graph(%t : (Tensor, int)):\n"
        "  %a : Tensor, %b : int = prim::TupleUnpack(%t)\n"
        "  return (%a, %b)\n"
    )
    a, b = g.outputs()
    assert a.node is b.node and (a.offset, b.offset) == (0, 1)
    assert g.inputs()[0].node is g.param_node()


def test_complete_tensor_type_survives_on_values():
    g = Graph()
    t = TensorType("Float", (2, 3), (3, 1), False, "cpu")
    v = g.add_input("x", t)
    assert v.type() is t and not v.requires_grad()


# -- properties ------------------------------------------------------------------------------

_NAMES = st.sampled_from(["x", "x.1", "x.2", "x.3", "y", "y.5", "a.b", "a.b.1", "a", ""])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), _NAMES), max_size=25))
def test_random_renames_match_torch(steps):
    import torch  # the oracle must be installed: fail, never skip
    tg = torch._C.Graph()
    t_values = [tg.addInput() for _ in range(6)]
    g = Graph()
    g_values = [g.add_input() for _ in range(6)]
    for index, name in steps:
        t_values[index].setDebugName(name)
        g_values[index].set_debug_name(name)
    assert [v.debug_name() for v in g_values] == [v.debugName() for v in t_values]
    lint(g)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=120))
def test_random_insertions_keep_positions_in_list_order(choices):
    g = Graph()
    x = g.add_input("x")
    nodes = []
    for choice in choices:
        node = g.create("aten::neg", [x])
        if nodes:
            anchor = nodes[choice % len(nodes)]
            if choice % 2:
                node.insert_after(anchor)
            else:
                node.insert_before(anchor)
        else:
            g.insert_node(node)
        nodes.append(node)
    order = list(g.nodes())
    assert sorted(order, key=lambda n: n.topo_position) == order
    assert all(p.is_before(q) and q.is_after(p) for p, q in zip(order, order[1:], strict=False))
    lint(g)
