"""The values compiled graphs save for backward, against a reference read
straight from the fixtures' text with regular expressions (a second reader)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from gradview.cli.main import main
from gradview.loaders.torch_trace_log import load_torch_trace

LOGS = Path(__file__).resolve().parent.parent / "data" / "torch_trace"
_SIZES = {"f32": 4, "f64": 8, "i64": 8, "b8": 1, "f16": 2, "bf16": 2, "i32": 4, "u8": 1}


def _dynamo_names(log: Path) -> dict[str | None, list[str | None]]:
    """Per compile, the user's name for each input of Dynamo's graph, read with regular
    expressions: the graph's parameter names, each matched to the ``describe_source``
    entry that reads the same once every run of non-alphanumerics is one ``_``."""
    sources: dict[str | None, list[str]] = {}
    placeholders: dict[str | None, list[str]] = {}
    for entry in load_torch_trace(log):
        if entry.key == "describe_source":
            sources.setdefault(entry.compile_id, []).append(entry.value["source"])
        elif entry.key == "dynamo_output_graph":
            signature = re.search(r"def forward\(self, ([^\n]*)\):", entry.payload).group(1)
            placeholders[entry.compile_id] = re.findall(r'(\w+): "', signature)
    out: dict[str | None, list[str | None]] = {}
    for compile_id, names in placeholders.items():
        mangled = {re.sub("_+", "_", "".join(c if c.isalnum() else "_" for c in s)): s for s in sources.get(compile_id, [])}
        named: list[str | None] = []
        for name in names:
            source = mangled.get(name, "")
            keys = re.findall(r"\['([^']+)'\]", source)
            if "._parameters[" in source or "._buffers[" in source:
                named.append(".".join(keys[1:]))
            else:
                named.append(keys[0] if re.fullmatch(r"[LG]\['\w+'\]", source) else None)
        out[compile_id] = named
    return out


def _reference(forward: str, backward: str, symbols: dict[str, int], names: list[str | None]) -> list[dict[str, object]]:
    """Saved names from the forward's return comments, a saved input's user name from
    Dynamo's input (``names``) its PlainAOTInput index names; shapes, dtypes and bytes from
    the backward's parameter annotations (symbolic sizes at ``symbols``' values;
    saved ``Sym(...)`` numbers are not tensors and left out); producers from the
    forward's assignment lines; consumers from the backward lines that pass the
    name to an op; both looking through detach."""
    saved = re.findall(r"^\s+(\w+),\s+# SavedForBackwardsAOTOutput", forward, re.M)
    params = dict(re.findall(r'^\s+(\w+): "([a-z0-9]+\[[^\]]*\]\[[^\]]*\][a-z0-9:]*)",', backward, re.M))
    produced = {name: op for name, op in re.findall(r"^\s+(\w+)(?::[^=]*)? = torch\.ops\.(\w+\.\w+)\.", forward, re.M)}
    items = dict(re.findall(r"^\s+(\w+)(?::[^=]*)? = (\w+)\[\d+\]", forward, re.M))
    inputs = dict(re.findall(r"^\s+(\w+): \"[^\"]*\",\s+# PlainAOTInput\(idx=(\d+)\)", forward, re.M))
    calls = re.findall(r"^\s+(\w+)(?::[^=]*)? = torch\.ops\.(\w+\.\w+)\.\w+\(([^\n]*?)\)(?:;|$)", backward, re.M)
    detached = dict(re.findall(r"^\s+(\w+)(?::[^=]*)? = torch\.ops\.aten\.detach\.default\((\w+)\)", forward, re.M))

    def readers(name: str) -> set[str]:
        """The ops reading ``name``, looking through detach (AOTAutograd's chains)."""
        found = set()
        for out, op, args in calls:
            if re.search(rf"\b{name}\b", args):
                found |= readers(out) if op == "aten.detach" else {op.replace(".", "::")}
        return found

    out = []
    for name in saved:
        if name not in params:  # a Sym(s77): not a tensor
            assert re.search(rf'^\s+{name}: "Sym\(', backward, re.M), name
            continue
        dtype, dims = re.match(r"([a-z0-9]+)\[([^\]]*)\]", params[name]).groups()
        shape = [eval(d, {}, dict(symbols)) for d in dims.split(",") if d.strip()]  # "s21*s77" from a fixture
        source = name
        while source in detached or source in items:
            source = detached.get(source) or items[source]
        producer = "input" if source in inputs else produced[source].replace(".", "::")
        consumers = sorted(readers(name))
        user_name = names[int(inputs[name])] if name in inputs and int(inputs[name]) < len(names) else None
        out.append({"name": name, "user_name": user_name, "module": None, "shape": shape, "bytes": math.prod(shape) * _SIZES[dtype], "producer": producer, "consumers": consumers})
    return sorted(out, key=lambda item: -item["bytes"])


@pytest.mark.parametrize("log", sorted(p.name for p in LOGS.glob("*.log")))
def test_saved_json_equals_the_reference(log: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``gradview saved --json`` on each fixture, graph by graph in compile order."""
    pairs: dict[str | None, dict[str, str]] = {}
    for entry in load_torch_trace(LOGS / log):
        if entry.key in ("aot_forward_graph", "aot_backward_graph"):
            pairs.setdefault(entry.compile_id, {})[entry.key] = entry.payload
    text = (LOGS / log).read_text(encoding="utf-8")
    symbols = {name: int(value) for name, value in re.findall(r'\{"create_symbol": \{"symbol": "(\w+)", "val": "(-?\d+)"', text)}
    names = _dynamo_names(LOGS / log)
    assert main(["saved", str(LOGS / log), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed) == {"graphs"}
    assert [graph["name"] for graph in printed["graphs"]] == [f"compiled graph {cid}" for cid in pairs]
    for graph, (compile_id, texts) in zip(printed["graphs"], pairs.items(), strict=True):
        expected = _reference(texts["aot_forward_graph"], texts["aot_backward_graph"], symbols, names.get(compile_id, []))
        assert set(graph) == {"name", "saved", "total_bytes"}
        got = [{k: v for k, v in item.items() if k != "dtype"} for item in graph["saved"]]
        assert got == expected, compile_id
        assert graph["total_bytes"] == sum(item["bytes"] for item in expected)
        assert all(item["dtype"] in ("float32", "float64", "int64", "bool") for item in graph["saved"])
        keys = ["name", "user_name", "module", "shape", "dtype", "bytes", "producer", "consumers"]
        assert all(list(item) == keys for item in graph["saved"])
