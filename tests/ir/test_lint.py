"""lint(): the invariants every graph must keep, and messages that name the broken node."""

from __future__ import annotations

import pytest

from gradview.ir import (
    BoolType,
    Graph,
    IntType,
    IRVerifyError,
    Use,
    lint,
    node_summary,
    parse_ir,
    verify,
)

from .corpus import corpus_paths, read_graph_text

CORPUS = corpus_paths()


def _chain():
    g = Graph()
    x = g.add_input("x")
    a = g.insert("aten::relu", [x])
    b = g.insert("aten::sigmoid", [a])
    g.register_output(b)
    return g, x, a, b


def _raises_at(graph, node, match):
    """lint fails, names ``node`` in the message and attaches it to the error."""
    with pytest.raises(IRVerifyError, match=match) as info:
        lint(graph)
    assert info.value.node is node
    assert node_summary(node) in str(info.value)
    return info.value


def _if_node(g, cond, n_blocks=2, n_outputs=1, block_returns=1):
    node = g.insert_node(g.create("prim::If", [cond], n_outputs))
    for _ in range(n_blocks):
        block = node.add_block()
        for _ in range(block_returns):
            block.register_output(cond)
    return node


def _loop_graph():
    g = Graph()
    n = g.add_input("n", IntType())
    x = g.add_input("x")
    cond = g.insert_constant(True)
    loop = g.insert_node(g.create("prim::Loop", [n, cond, x], 1))
    body = loop.add_block()
    body.add_input("i", IntType())
    acc = body.add_input("acc")
    with g.insert_point(body):
        step = g.insert("aten::neg", [acc])
    body.register_output(cond)
    body.register_output(step)
    g.register_output(loop.output())
    return g, loop, body


# -- graphs that pass ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_conformance_graph_passes(path):
    graph = parse_ir(read_graph_text(path))
    lint(graph)
    for node in graph.all_nodes():
        if node.has_attribute("Subgraph"):
            lint(node.g("Subgraph"))


def test_conformance_corpus_is_present():
    assert len(CORPUS) >= 10


def test_well_formed_loop_passes():
    g, _loop, _body = _loop_graph()
    lint(g)


def test_verify_is_lint_and_graph_lint_calls_it():
    g, _x, _a, _b = _chain()
    verify(g)
    g.lint()


# -- definitions and scopes -------------------------------------------------------------------------


def test_use_before_definition():
    g, _x, a, b = _chain()
    b.node.move_before(a.node)
    error = _raises_at(g, b.node, r"used before it is defined .*is defined later")
    assert "move its definition earlier" in str(error)


def _if_with_relu_in_then_block(n_outputs):
    """``graph(%x, %c : bool)`` with a prim::If on %c: relu(%x) in block0, block1 empty.

    The insert point is back at the end of the graph; nothing is registered as an output yet.
    """
    g = Graph()
    x = g.add_input("x")
    c = g.add_input("c", BoolType())
    if_node = g.insert_node(g.create("prim::If", [c], n_outputs))
    then_block, else_block = if_node.add_block(), if_node.add_block()
    with g.insert_point(then_block):
        inner = g.insert("aten::relu", [x])
    return g, if_node, then_block, else_block, inner


def test_value_used_outside_its_block():
    g, _if_node, _then_block, else_block, inner = _if_with_relu_in_then_block(n_outputs=0)
    leak = g.insert("aten::neg", [inner])
    g.register_output(leak)
    _raises_at(g, leak.node, r"outside its block .*inside a block that does not enclose")
    assert else_block.is_empty()


def test_value_used_in_a_sibling_block():
    g = parse_ir(
        "graph(%x : Tensor, %c : bool):\n"
        "  %r : Tensor = prim::If(%c)\n"
        "    block0():\n"
        "      %b : Tensor = aten::sigmoid(%x)\n"
        "      -> (%b)\n"
        "    block1():\n"
        "      %d : Tensor = aten::tanh(%x)\n"
        "      -> (%d)\n"
        "  return (%r)\n"
    )
    if_node = next(iter(g.nodes()))
    tanh = next(iter(if_node.blocks()[1].nodes()))
    tanh.replace_input(0, g.value_by_name("b"))
    _raises_at(g, tanh, "outside its block")


def test_block_output_defined_in_a_nested_block():
    g, if_node, then_block, else_block, inner = _if_with_relu_in_then_block(n_outputs=1)
    then_block.register_output(inner)
    else_block.register_output(inner)
    g.register_output(if_node.output())
    _raises_at(g, else_block.return_node, "outside its block")


def test_use_of_a_removed_node():
    g, _x, a, b = _chain()
    a.node.remove_all_inputs()
    a.node._unlink()  # bypasses destroy(), as a buggy pass might
    with pytest.raises(IRVerifyError, match="was removed") as info:
        lint(g)
    assert info.value.node is b.node


def test_duplicate_debug_names():
    g, _x, a, b = _chain()
    a.set_debug_name("same")
    b._debug_name = "same"  # bypasses the renaming rule
    _raises_at(g, b.node, "debug name %same is used by two values")


# -- use lists ------------------------------------------------------------------------------------


def test_stale_use_list():
    g, x, a, b = _chain()
    b.node._inputs[0] = x  # edit behind the use lists' back
    _raises_at(g, a.node, "stale use by aten::sigmoid")


def test_missing_use_entry():
    g, _x, a, b = _chain()
    del a._uses[Use(b.node, 0)]
    _raises_at(g, b.node, "does not list this node among its uses")


def test_use_by_a_node_that_is_not_in_the_graph():
    g, x, _a, _b = _chain()
    orphan = g.create("aten::neg", [x])  # created, never inserted nor destroyed
    assert orphan.owning_block is None
    _raises_at(g, g.param_node(), "used by aten::neg, which was removed from the graph")


# -- control-flow arity ------------------------------------------------------------------------------


def test_if_with_one_block():
    g = Graph()
    c = g.add_input("c", BoolType())
    node = _if_node(g, c, n_blocks=1)
    _raises_at(g, node, "prim::If needs two blocks")


def test_if_with_three_blocks():
    g = Graph()
    c = g.add_input("c", BoolType())
    node = _if_node(g, c, n_blocks=3)
    _raises_at(g, node, r"needs two blocks \(then, else\), got 3")


def test_if_with_wrong_output_count():
    g = Graph()
    c = g.add_input("c", BoolType())
    node = _if_node(g, c, n_outputs=2, block_returns=1)
    _raises_at(g, node, "block0 of prim::If returns 1 values but the node has 2 outputs")


def test_if_with_block_parameters():
    g = Graph()
    c = g.add_input("c", BoolType())
    node = _if_node(g, c)
    node.blocks()[1].add_input("p")
    _raises_at(g, node, "block1 of prim::If takes no parameters")


def test_if_without_condition():
    g = Graph()
    c = g.add_input("c", BoolType())
    node = _if_node(g, c)
    node.remove_input(0)
    _raises_at(g, node, "takes one condition input")


def test_loop_with_too_few_inputs():
    g, loop, _body = _loop_graph()
    loop.remove_all_inputs()
    _raises_at(g, loop, "takes a trip count and a condition")


def test_loop_body_with_wrong_parameter_count():
    g, loop, body = _loop_graph()
    body.add_input("extra")
    _raises_at(g, loop, r"\(2 parameters\), got 3")


def test_loop_body_with_wrong_return_count():
    g, loop, body = _loop_graph()
    body.erase_output(1)
    _raises_at(g, loop, r"\(2 results\), got 1")


def test_loop_with_wrong_output_count():
    g, loop, _body = _loop_graph()
    loop.add_output()
    _raises_at(g, loop, "1 carried values but 2 outputs")


def test_loop_without_a_block():
    g, loop, _body = _loop_graph()
    loop.erase_block(0)
    _raises_at(g, loop, "needs exactly one block")


def test_grad_of_with_wrong_output_count():
    g = Graph()
    x = g.add_input("x")
    node = g.insert_node(g.create("prim::GradOf", [x], 2))
    node.add_block().register_output(x)
    _raises_at(g, node, "returns 1 values but the node has 2 outputs")


def test_reverse_without_a_block():
    g = Graph()
    x = g.add_input("x")
    node = g.insert_node(g.create("prim::Reverse", [x], 1))
    _raises_at(g, node, "prim::Reverse needs exactly one block")


def test_constant_with_inputs():
    g = Graph()
    x = g.add_input("x")
    node = g.insert_node(g.create("prim::Constant", [x], 1))
    _raises_at(g, node, "prim::Constant takes no inputs")


def test_blocks_on_a_plain_node():
    g = Graph()
    x = g.add_input("x")
    node = g.insert_node(g.create("aten::relu", [x], 1))
    node.add_block()
    _raises_at(g, node, "is not a control-flow node")


# -- list structure ------------------------------------------------------------------------------------


def test_topological_positions_out_of_order():
    g, _x, a, b = _chain()
    b.node.topo_position = a.node.topo_position
    _raises_at(g, b.node, "topological positions are not increasing")


def test_node_from_another_graph():
    g, x, _a, _b = _chain()
    other = Graph()
    stranger = other.create("aten::neg", [])
    stranger.graph = g
    stranger.insert_before(g.return_node())
    stranger.graph = other
    _raises_at(g, stranger, "belongs to another graph")
