"""Every pass the issue names is registered, callable and explained for students."""

import pytest

from gradview.ir import parse_ir
from gradview.ir.passes import PASSES, get_pass

NAMED_BY_THE_ISSUE = [
    "EliminateDeadCode", "EliminateCommonSubexpression", "ConstantPropagation", "ConstantPooling",
    "PeepholeOptimize", "Inline", "LowerSimpleTuples", "LowerGradOf", "RemoveExpands",
    "CanonicalizeOps", "UnrollLoops", "UnrollConstantLoops", "RemoveListMutation", "CheckInplace",
    "DecomposeOps", "BatchMM", "PropagateInputShapes", "PropagateRequiresGrad",
]


@pytest.mark.parametrize("name", NAMED_BY_THE_ISSUE)
def test_pass_is_registered_and_documented(name: str) -> None:
    info = get_pass(name)
    # A docstring a student can read: a real explanation, with an example.
    assert len(info.doc) > 300, f"{name}'s explanation is too short"
    graph = parse_ir("graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\n  return (%y)\n")
    assert info.run(graph) in (True, False)
    graph.lint()


def test_unknown_pass_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="EliminateDeadCode"):
        get_pass("Fuse")


def test_registry_has_no_extras_without_tests() -> None:
    assert set(PASSES) == set(NAMED_BY_THE_ISSUE)
