"""The autodiff passes hand their notes for the viewer back as frozen dataclasses.

``<pass>(graph, ...)`` keeps its plain result (``bool`` or the groups);
``<pass>_with_notes`` returns that result with the notes, and both rewrite the
graph the same way.
"""

from __future__ import annotations

import dataclasses

import pytest

from gradview.autodiff import (
    DEFAULT_INLINE_THRESHOLD,
    AutodiffSubgraphNotes,
    AutogradZeroNotes,
    InlinedSubgraphNotes,
    create_autodiff_subgraphs,
    create_autodiff_subgraphs_with_notes,
    inline_autodiff_subgraphs,
    inline_autodiff_subgraphs_with_notes,
    specialize_autograd_zero,
    specialize_autograd_zero_with_notes,
)
from gradview.autodiff.specialize_autograd_zero import NONZERO, ZERO
from gradview.ir import Graph, parse_ir

from .test_inline_autodiff_subgraphs import DG, TEXT, sizes, sliced
from .test_specialize_autograd_zero import ADDS


def twins(text: str) -> tuple[Graph, Graph]:
    return parse_ir(text), parse_ir(text)


def assert_frozen(notes: object) -> None:
    field = dataclasses.fields(notes)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(notes, field, {})
    for found in vars(notes).values():
        if hasattr(found, "items"):
            with pytest.raises(TypeError):
                found["new"] = "entry"  # the mappings are read-only too


def test_specialize_autograd_zero_returns_the_states() -> None:
    plain, noted = twins(ADDS)
    changed = specialize_autograd_zero(plain)
    also_changed, notes = specialize_autograd_zero_with_notes(noted)
    assert changed is also_changed is True
    assert str(plain) == str(noted)
    assert isinstance(notes, AutogradZeroNotes)
    assert_frozen(notes)
    # Every value of the resulting graph has a state: inputs and node outputs.
    values = [*noted.inputs(), *(out for node in noted.all_nodes() for out in node.outputs())]
    assert set(notes.autograd_zero) == set(values)
    names = {v.debug_name(): s for v, s in notes.autograd_zero.items() if v.has_debug_name()}
    assert ZERO in names.values() and NONZERO in names.values()


def test_create_autodiff_subgraphs_numbers_the_groups_and_explains_the_rest() -> None:
    plain, noted = twins(TEXT)
    groups = create_autodiff_subgraphs(plain, 2)
    noted_groups, notes = create_autodiff_subgraphs_with_notes(noted, 2)
    assert str(plain) == str(noted) and len(groups) == len(noted_groups) > 0
    assert isinstance(notes, AutodiffSubgraphNotes)
    assert_frozen(notes)
    assert dict(notes.differentiable_graphs) == {node: k for k, node in enumerate(noted_groups)}
    assert notes.autodiff_mode == "torch"
    outside = [n for n in noted.all_nodes() if n.kind() != DG]
    assert outside and set(notes.excluded) == set(outside)
    assert all(isinstance(reason, str) and reason for reason in notes.excluded.values())
    _, extended = create_autodiff_subgraphs_with_notes(parse_ir(TEXT), 2, mode="extended")
    assert extended.autodiff_mode == "extended"


def test_inline_autodiff_subgraphs_names_the_pasted_nodes_and_its_threshold() -> None:
    plain, noted = sliced(), sliced()
    assert inline_autodiff_subgraphs(plain, 3)
    changed, notes = inline_autodiff_subgraphs_with_notes(noted, 3)
    assert changed and str(plain) == str(noted)
    assert isinstance(notes, InlinedSubgraphNotes)
    assert_frozen(notes)
    assert notes.inline_threshold == 3
    pasted = {node.kind() for node in notes.inlined}
    assert {"aten::sin", "aten::cos", "aten::neg", "aten::relu"} <= pasted
    assert all(node.owning_block is not None for node in notes.inlined)  # survivors only
    assert all("fewer than the inline threshold 3" in reason for reason in notes.inlined.values())


def test_threshold_zero_keeps_every_group() -> None:
    graph = sliced()
    before = sizes(graph)
    _, notes = inline_autodiff_subgraphs_with_notes(graph, 0)
    assert sizes(graph) == before and sorted(before) == [2, 2, 6] and not notes.inlined
    assert inline_autodiff_subgraphs_with_notes(sliced())[1].inline_threshold == DEFAULT_INLINE_THRESHOLD == 5


NEEDS_GRAD = """
graph(%x : Float(4, 3, requires_grad=1), %n : Long(4, 3, requires_grad=0)):
  %a : Float(4, 3, requires_grad=1) = aten::mul(%x, %x)
  %s : int[] = aten::size(%x)
  %v : Float(4, 3, requires_grad=1) = aten::view(%a, %s)
  %m : Long(4, 3, requires_grad=0) = aten::neg(%n)
  return (%v, %m)
"""


def test_the_notes_name_each_node_that_needs_grad_and_stays_outside() -> None:
    """mul alone is a group under the threshold (pasted back), view is a view op;
    size and neg need no grad (an int list, a Long tensor), so they are not listed.
    The flag says whether the extended mode differentiates the op (both: yes)."""
    graph = parse_ir(NEEDS_GRAD)
    groups, notes = create_autodiff_subgraphs_with_notes(graph, 2)
    assert groups == []
    kinds = {node.kind(): reason for node, reason in notes.needs_grad_outside.items()}
    assert kinds == {"aten::mul": ("too small", True), "aten::view": ("view", True)}
    assert set(notes.needs_grad_outside) <= set(notes.excluded)
