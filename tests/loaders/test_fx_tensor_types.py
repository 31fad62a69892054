"""FX value annotations read without PyTorch, checked against PyTorch's own
dtype table and tensors, and against every annotation in the trace fixtures."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from torch.fx.graph import dtype_abbrs

from gradview.loaders.fx_tensor_types import (
    DTYPES,
    AnnotationError,
    SymbolAnnotation,
    TensorAnnotation,
    parse_annotation,
)

LOGS = Path(__file__).resolve().parent.parent / "data" / "torch_trace"


def test_every_short_dtype_name_pytorch_prints_is_known_with_its_element_size() -> None:
    assert set(DTYPES) == set(dtype_abbrs.values())
    for dtype, short in dtype_abbrs.items():
        name, size = DTYPES[short]
        assert name == str(dtype).removeprefix("torch."), short
        assert size == dtype.itemsize, short


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bool, torch.bfloat16, torch.complex64])
@pytest.mark.parametrize("shape", [(), (3,), (2, 5), (4, 1, 3)])
def test_bytes_equal_a_tensors_storage(dtype: torch.dtype, shape: tuple[int, ...]) -> None:
    tensor = torch.zeros(shape, dtype=dtype)
    text = f"{dtype_abbrs[dtype]}[{', '.join(map(str, tensor.shape))}][{', '.join(map(str, tensor.stride()))}]cpu"
    parsed = parse_annotation(f'"{text}"')
    assert isinstance(parsed, TensorAnnotation)
    assert parsed.sizes == tuple(tensor.shape) and parsed.strides == tensor.stride()
    assert parsed.nbytes == tensor.numel() * tensor.element_size()


def test_every_annotation_in_the_fixtures_parses() -> None:
    seen = 0
    for log in LOGS.glob("*.log"):
        for text in re.findall(r'"((?:[a-z0-9]+\[[^"\]]*\]\[[^"\]]*\][a-z0-9:]+)|Sym\([^"]*\))"', log.read_text()):
            parse_annotation(text)
            seen += 1
    assert seen > 500


def test_symbolic_sizes_and_symbols() -> None:
    parsed = parse_annotation("f32[s77, 16][16, 1]cpu")
    assert isinstance(parsed, TensorAnnotation)
    assert parsed.sizes == ("s77", 16) and parsed.numel is None and parsed.nbytes is None
    assert parse_annotation("Sym(s77)") == SymbolAnnotation("s77")
    assert parse_annotation("f64[][]cuda:0") == TensorAnnotation("float64", (), (), "cuda:0")


@pytest.mark.parametrize("text", ["f32[8, 16]cpu", "q32[8][1]cpu", "f32[8, 16][1]cpu", "f32[8,][1]cpu", "Tensor"])
def test_what_is_not_an_annotation_is_refused_with_the_text(text: str) -> None:
    with pytest.raises(AnnotationError, match=re.escape(repr(text))):
        parse_annotation(text)


def test_nested_symbolic_expressions_and_commas_inside_them() -> None:
    from gradview.loaders.fx_tensor_types import (
        SymbolAnnotation,
        TensorAnnotation,
        parse_annotation,
    )

    assert parse_annotation('"Sym(((s77//2)) + 1)"') == SymbolAnnotation("((s77//2)) + 1")
    tensor = parse_annotation("f32[2*s77, ((s77**2)//(2*s77))][Max(1, ((s77**2)//(2*s77))), 1]cpu")
    assert isinstance(tensor, TensorAnnotation)
    assert tensor.sizes == ("2*s77", "((s77**2)//(2*s77))")
    assert tensor.strides == ("Max(1, ((s77**2)//(2*s77)))", 1)
    with pytest.raises(AnnotationError):
        parse_annotation("Sym((s0)")
