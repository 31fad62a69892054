"""Round trip of TorchScript's textual IR against the oracle (real PyTorch).

For every graph torch printed (the shared corpus, and graphs scripted here):
gradview's print equals torch's print byte for byte, torch reads gradview's
print back to the same graph, and printing is idempotent.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from gradview.ir import parse_ir

from .corpus import CONFORMANCE, ROUNDTRIP_DIR, corpus_paths, read_graph_text
from .scripted_models import optimized_graphs, scripted_graphs

CORPUS = corpus_paths()


def torch_print(text: str) -> str | None:
    """torch's print of its own parse of ``text``, or None where torch cannot read it."""
    try:
        return str(torch._C.parse_ir(text))
    except RuntimeError:
        return None


def check_round_trip(text: str) -> None:
    ours = str(parse_ir(text))
    # Idempotent: reading our print back prints the same text.
    assert str(parse_ir(ours)) == ours
    reference = torch_print(text)
    if reference is not None:
        # torch reads our print back to the same graph it reads from the original.
        assert torch_print(ours) == reference


def test_corpus_is_present() -> None:
    assert len(CORPUS) >= 30, f"expected the shared conformance corpus at {CONFORMANCE}"


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_corpus_round_trip(path: Path) -> None:
    text = read_graph_text(path)
    check_round_trip(text)
    # The corpus was printed by torch: gradview prints it byte for byte.
    assert str(parse_ir(text)) == text


def test_torch_cannot_read_everything_it_prints() -> None:
    # The reason for the idempotence fallback above: these sections stop torch.
    unreadable = [p.name for p in CORPUS if torch_print(read_graph_text(p)) is None]
    assert "optimized_residual.ir" in unreadable
    assert "differentiate_affine_relu_f.ir" in unreadable


SCRIPTED = scripted_graphs()


@pytest.mark.parametrize("name", sorted(SCRIPTED))
def test_scripted_round_trip(name: str) -> None:
    text = SCRIPTED[name]
    check_round_trip(text)
    assert str(parse_ir(text)) == text


OPTIMIZED = optimized_graphs()


@pytest.mark.parametrize("name", sorted(OPTIMIZED))
def test_optimized_graph_round_trip(name: str) -> None:
    text = OPTIMIZED[name]
    graph = parse_ir(text)
    kinds = {node.kind() for node in graph.all_nodes()}
    assert "prim::RequiresGradCheck" in kinds or "prim::TypeCheck" in kinds
    assert "prim::DifferentiableGraph" in kinds
    assert "prim::DifferentiableGraph_0" not in kinds  # the section was attached
    check_round_trip(text)
    assert str(graph) == text


def test_differentiable_graph_subgraph_is_attached() -> None:
    text = read_graph_text(ROUNDTRIP_DIR / "optimized_residual.ir")
    graph = parse_ir(text)
    diff = next(n for n in graph.all_nodes() if n.kind() == "prim::DifferentiableGraph")
    sub = diff.g("Subgraph")
    assert [v.debug_name() for v in sub.inputs()] == ["x.1", "w.1"]
    assert [n.kind() for n in sub.nodes()][:2] == ["aten::mm", "aten::tanh"]
    assert len(sub.outputs()) == 6
