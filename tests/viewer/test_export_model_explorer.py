"""``gradview export --model-explorer``: Google Model Explorer's graph JSON of a trace.

Checked against the trace it comes from (edges input by input, namespaces
against module paths, saved bytes against the saved list, AutogradZero
states against the recorded ones), against Model Explorer's own types, and
loaded in Model Explorer's local server in headless Chromium.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote
from urllib.request import urlopen

import pytest

from gradview.cli.main import main
from gradview.ir.module_scope import module_path
from gradview.runtime.saved_values import saved_values
from gradview.runtime.trace_types import Note
from gradview.viewer.export_model_explorer import (
    ModelExplorerError,
    module_components,
    node_data_paths,
    shown_graphs,
    write_model_explorer,
)
from gradview.viewer.marks import zero_states
from gradview.viewer.session import load_target
from gradview.viewer.view_steps import gradient_notes

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

# The bundled MLP with module scopes and parameter names, as a traced module prints them.
SCOPED_IR = """\
graph(%x : Double(8, 4, strides=[4, 1], requires_grad=1, device=cpu),
      %block.fc.weight : Double(4, 16, strides=[16, 1], requires_grad=1, device=cpu),
      %block.fc.bias : Double(16, strides=[1], requires_grad=1, device=cpu),
      %head.weight : Double(16, 3, strides=[3, 1], requires_grad=1, device=cpu)):
  %5 : Double(8, 16, strides=[16, 1], requires_grad=1, device=cpu) = aten::matmul(%x, %block.fc.weight), scope: __module.block/__module.block.fc
  %6 : int = prim::Constant[value=1](), scope: __module.block/__module.block.fc
  %7 : Double(8, 16, strides=[16, 1], requires_grad=1, device=cpu) = aten::add(%5, %block.fc.bias, %6), scope: __module.block/__module.block.fc
  %h : Double(8, 16, strides=[16, 1], requires_grad=1, device=cpu) = aten::relu(%7), scope: __module.block/__module.block.act
  %9 : Double(8, 3, strides=[3, 1], requires_grad=1, device=cpu) = aten::matmul(%h, %head.weight), scope: __module.head
  return (%9)
"""


def _write(trace, folder: Path, name: str, **kwargs):
    written = write_model_explorer(trace, folder / f"{name}.json", label=name, **kwargs)
    return written, json.loads(written.graph.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def mlp_export(mlp_trace, tmp_path_factory):
    return _write(mlp_trace, tmp_path_factory.mktemp("mlp"), "mlp")


@pytest.fixture(scope="module")
def resnet_trace():
    pytest.importorskip("torch")
    return load_target(f"{EXAMPLES / 'resnet18.py'}:build").trace


@pytest.fixture(scope="module")
def resnet_export(resnet_trace, tmp_path_factory):
    return _write(resnet_trace, tmp_path_factory.mktemp("resnet"), "resnet18")


@pytest.fixture(scope="module")
def scoped_trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("scoped") / "scoped.ir"
    path.write_text(SCOPED_IR, encoding="utf-8")
    return load_target(str(path)).trace


def _graph(collection: dict, prefix: str) -> dict:
    found = [graph for graph in collection["graphs"] if graph["id"].startswith(prefix)]
    assert len(found) == 1, [graph["id"] for graph in collection["graphs"]]
    return found[0]


def _nodes(graph: dict) -> dict[str, dict]:
    return {node["id"]: node for node in graph["nodes"]}


def _step_of(graph: dict) -> int:
    return int(graph["id"].split()[0])


# -- the collection's shape --------------------------------------------------------------------
@pytest.mark.parametrize("export", ["mlp_export", "resnet_export"])
def test_every_graph_has_an_id_and_every_edge_an_existing_source(export, request):
    _, collection = request.getfixturevalue(export)
    assert collection["label"] and collection["graphs"]
    ids = [graph["id"] for graph in collection["graphs"]]
    assert all(ids) and len(set(ids)) == len(ids)
    for graph in collection["graphs"]:
        nodes = _nodes(graph)
        assert len(nodes) == len(graph["nodes"]), f"{graph['id']}: node ids repeat"
        for node in graph["nodes"]:
            assert node["label"], node
            for edge in node.get("incomingEdges", []):
                assert edge["sourceNodeId"] in nodes, (graph["id"], node["id"], edge)
                assert edge["targetNodeInputId"].isdigit()
                source = nodes[edge["sourceNodeId"]]
                outputs = {item["id"] for item in source.get("outputsMetadata", [])}
                assert not outputs or edge["sourceNodeOutputId"] in outputs, (graph["id"], edge)


def test_the_json_fits_model_explorers_own_graph_types(mlp_export, resnet_export):
    """Model Explorer's Python package describes the format as dataclasses: every field
    gradview writes must be one of theirs, of their type."""
    dacite = pytest.importorskip("dacite", reason="ai-edge-model-explorer (which brings dacite) is not installed")
    builder = pytest.importorskip("model_explorer.graph_builder", reason="ai-edge-model-explorer is not installed")
    for _, collection in (mlp_export, resnet_export):
        parsed = dacite.from_dict(builder.GraphCollection, collection, config=dacite.Config(strict=True))
        assert len(parsed.graphs) == len(collection["graphs"])


def _producers(step) -> dict[int, tuple[int, int]]:
    found = {param.id: (param.id, 0) for param in step.graph.params}
    for node in step.graph.nodes:
        for position, value in enumerate(node.outputs):
            found[value.id] = (node.id, position)
    return found


def test_edges_follow_the_ir_input_by_input(resnet_export, resnet_trace, mlp_export, mlp_trace):
    """Each op's incoming edges are its inputs in order: the producer of the
    i-th input, by the output it leaves, into input i (a value read twice, twice)."""
    checked = 0
    for trace, (_, collection) in ((resnet_trace, resnet_export), (mlp_trace, mlp_export)):
        for graph in collection["graphs"]:
            if not graph["id"].endswith("]"):
                continue  # a view of a DifferentiableGraph: its steps are checked as whole graphs
            step = trace[_step_of(graph)]
            if any(node.blocks or node.subgraph is not None for node in step.graph.nodes):
                continue  # values cross a group's border there; see the DifferentiableGraph test
            nodes, producers = _nodes(graph), _producers(step)
            for record in step.graph.nodes:
                want = [(str(producers[v][0]), str(producers[v][1]), str(i)) for i, v in enumerate(record.inputs)]
                edges = nodes[str(record.id)].get("incomingEdges", [])
                got = [(e["sourceNodeId"], e["sourceNodeOutputId"], e["targetNodeInputId"]) for e in edges]
                assert sorted(got, key=lambda e: int(e[2])) == want, (graph["id"], record.kind)
                checked += 1
    assert checked > 1000


# -- namespaces ----------------------------------------------------------------------------------
def test_module_components_name_each_level_and_keep_a_container_index_with_its_name():
    assert module_components("") == []
    assert module_components("fc") == ["fc"]
    assert module_components("layer1.0.conv1") == ["layer1", "layer1.0", "conv1"]
    assert module_components("encoder.layers.0.self_attn") == ["encoder", "layers", "layers.0", "self_attn"]
    assert module_components("layer2.0.downsample.1") == ["layer2", "layer2.0", "downsample", "downsample.1"]
    assert module_components("0.1") == ["0", "0.1"]


def test_namespaces_are_module_paths_and_parameters_sit_in_their_module(resnet_export, resnet_trace):
    _, collection = resnet_export
    for graph in collection["graphs"]:
        step = resnet_trace[_step_of(graph)]
        nodes = _nodes(graph)
        for record in step.graph.nodes:
            assert nodes[str(record.id)]["namespace"] == "/".join(module_components(module_path(record.scope)))
        for param in step.graph.params:
            owner = param.name.rpartition(".")[0]
            want = "/".join(module_components(owner)) if owner in resnet_trace.module_types else ""
            assert nodes[str(param.id)]["namespace"] == want, param.name
    last = collection["graphs"][-1]
    assert _nodes(last)[str(resnet_trace[-1].graph.params[4].id)]["label"] == "%layer1.0.conv1.weight"
    assert _nodes(last)[str(resnet_trace[-1].graph.params[4].id)]["namespace"] == "layer1/layer1.0/conv1"
    top = {node["namespace"].split("/")[0] for node in last["nodes"]} - {""}
    assert top == {path for path in resnet_trace.module_types if path and "." not in path}
    groups = last["groupNodeAttributes"]
    assert groups["layer1/layer1.0"] == {"module": "layer1.0", "type": "BasicBlock"}
    assert groups["layer2/layer2.0/downsample/downsample.1"] == {"module": "layer2.0.downsample.1", "type": "BatchNorm2d"}
    assert groups[""]["model"] == "ResNet" and groups[""]["graph"] == "main"


def test_a_differentiable_graph_is_a_group_in_the_module_holding_its_nodes(scoped_trace, tmp_path):
    _, collection = _write(scoped_trace, tmp_path, "scoped")
    created = next(s for s in scoped_trace if Note.DIFFERENTIABLE_GRAPHS in s.annotations and s.which.is_main)
    graph = _graph(collection, f"{created.index:03d} {created.pass_name} ")
    inside = {str(n.id) for n in created.nodes() if n.kind != "prim::DifferentiableGraph"} - {
        str(n.id) for n in created.graph.nodes}
    by_id = _nodes(graph)
    assert {by_id[i]["namespace"] for i in inside} == {
        "DifferentiableGraph_0/block/fc", "DifferentiableGraph_0/block/act", "DifferentiableGraph_0/head"}
    assert graph["groupNodeAttributes"]["DifferentiableGraph_0/block/fc"] == {"module": "block.fc"}
    # Parameters stay in their module outside the group; the arrows cross into it.
    assert by_id[str(created.graph.params[1].id)]["namespace"] == "block/fc"
    matmul = next(n for n in graph["nodes"] if n["label"] == "aten::matmul" and n["namespace"].endswith("block/fc"))
    assert {e["sourceNodeId"] for e in matmul["incomingEdges"]} == {str(p.id) for p in created.graph.params[:2]}
    # In the joint view, f's renamed parameter (%head.weight.1) is still its module's.
    joint = _graph(collection, f"{len(scoped_trace) - 1:03d} joint")
    head = next(n for n in joint["nodes"] if n["label"] == "%head.weight.1")
    assert head["namespace"] == "f (forward)"  + "/head"


def test_a_block_of_an_if_is_a_group_named_after_its_node(mlp_trace, tmp_path):
    step = next(s for s in mlp_trace if s.pass_name == "LowerGradOf" and s.which.is_backward_executor)
    _, collection = _write(mlp_trace, tmp_path, "blocks", indices=[step.index], keep_unchanged=True)
    graph = _graph(collection, f"{step.index:03d} {step.pass_name} ")
    ifs = [n for n in step.nodes() if n.kind == "prim::If"]
    assert ifs
    namespaces = {node["namespace"] for node in graph["nodes"]}
    for node in ifs:
        for index in range(len(node.blocks)):
            assert f"prim::If %{node.outputs[0].name} block{index}" in namespaces


# -- which graphs --------------------------------------------------------------------------------
def test_every_step_is_a_graph_or_named_as_leaving_one_unchanged(mlp_export, mlp_trace):
    written, collection = mlp_export
    kept = {_step_of(g): g for g in collection["graphs"] if g["id"].endswith("]")}
    folded: dict[int, int] = {}
    for index, graph in kept.items():
        for item in graph["groupNodeAttributes"][""].get("unchanged by", "").split(", "):
            if item:
                folded[int(item.split()[0])] = index
    assert sorted([*kept, *folded]) == list(range(len(mlp_trace)))
    for index, into in folded.items():
        assert mlp_trace[index].which == mlp_trace[into].which
        assert mlp_trace[index].graph == mlp_trace[into].graph
        assert Note.AUTOGRAD_ZERO not in mlp_trace[index].annotations
    assert written.graphs == len(collection["graphs"])


def test_the_joint_view_has_f_and_df_and_one_capture_edge_per_captured_value(mlp_export, mlp_trace):
    _, collection = mlp_export
    last = len(mlp_trace) - 1
    joint = _graph(collection, f"{last:03d} joint of DifferentiableGraph 0")
    nodes = _nodes(joint)
    side = {node_id: node["namespace"].split("/")[0] for node_id, node in nodes.items()}
    assert set(side.values()) == {"f (forward)", "df (backward)"}
    captures = [
        (edge["sourceNodeId"], node["id"]) for node in joint["nodes"] for edge in node.get("incomingEdges", [])
        if side[node["id"]] == "df (backward)" and side[edge["sourceNodeId"]] == "f (forward)"
    ]
    notes = gradient_notes(mlp_trace, last, 0)
    captured = [v for v in (*notes[Note.DF_INPUT_CAPTURED_INPUTS], *notes[Note.DF_INPUT_CAPTURED_OUTPUTS]) if v is not None]
    assert len(captures) == len(captured) > 0


def test_steps_named_by_pass_are_all_kept_with_the_views_they_lack(mlp_trace):
    chosen = [s.index for s in mlp_trace if s.pass_name == "EliminateDeadCode"]
    shown = shown_graphs(mlp_trace, chosen, keep_unchanged=True)
    assert [s.index for s in shown if s.id.endswith("]")] == chosen
    # At the last of them (a backward executor step), f is not among them: its view is added.
    assert [s.id for s in shown if not s.id.endswith("]")] == [
        f"{chosen[-1]:03d} forward of DifferentiableGraph 0", f"{chosen[-1]:03d} joint of DifferentiableGraph 0"]


def test_a_node_carries_its_op_module_ir_line_and_output_types(resnet_export, resnet_trace):
    from gradview.viewer.views import node_text

    _, collection = resnet_export
    graph = collection["graphs"][0]  # as traced: complete types (the executor's passes open the sizes)
    step = resnet_trace[_step_of(graph)]
    record = next(n for n in step.graph.nodes if module_path(n.scope) == "layer1.0.conv1" and n.kind == "aten::_convolution")
    node = _nodes(graph)[str(record.id)]
    attrs = {a["key"]: a["value"] for a in node["attrs"]}
    assert node["label"] == attrs["op"] == record.kind
    assert attrs["module"] == "layer1.0.conv1 (Conv2d)"
    names = {v.id: v.name for v in step.graph.params} | {v.id: v.name for n in step.graph.nodes for v in n.outputs}
    assert attrs["ir"] == node_text(record, names)
    assert attrs["source"] == record.source and "conv.py" in record.source
    (output,) = node["outputsMetadata"]
    out = {a["key"]: a["value"] for a in output["attrs"]}
    assert out["tensor_name"] == f"%{record.outputs[0].name}" and out["type"] == record.outputs[0].type
    assert out["tensor_shape"] == "float32[1, 64, 16, 16]"
    assert [item["attrs"][0]["value"] for item in node["inputsMetadata"]] == [f"%{names[v]}" for v in record.inputs]


# -- node data -----------------------------------------------------------------------------------
def test_saved_bytes_add_up_to_what_the_forward_saves(mlp_export, mlp_trace):
    written, collection = mlp_export
    data = json.loads(node_data_paths(written.graph)["saved bytes"].read_text(encoding="utf-8"))
    (graph_saved,) = saved_values(mlp_trace)
    forward = mlp_trace[graph_saved.forward_step]
    ids = [g["id"] for g in collection["graphs"]
           if g["id"].endswith("]") and mlp_trace[_step_of(g)].which == forward.which
           and mlp_trace[_step_of(g)].graph == forward.graph]
    assert len(ids) == 1
    assert data[ids[0]]["name"] == "gradview: saved bytes"
    assert sum(entry["value"] for entry in data[ids[0]]["results"].values()) == graph_saved.total_bytes > 0
    nodes = _nodes(_graph(collection, ids[0]))
    biggest = graph_saved.saved[0]
    attrs = [a for item in nodes[str(biggest.producer_node)]["outputsMetadata"] for a in item["attrs"]]
    assert any(a["key"] == "saved for backward" and a["value"].startswith(f"{biggest.bytes:,} B") for a in attrs)


def test_saved_bytes_of_a_compiled_graph_add_up_once_in_each_view(tmp_path):
    """A TORCH_TRACE log's forward, backward and joint view each hold the saved
    tensors once (the joint view on f's side), as ``gradview saved`` lists them."""
    trace = load_target(str(ROOT / "tests" / "data" / "torch_trace" / "mlp.log")).trace
    written, collection = _write(trace, tmp_path, "compiled")
    data = json.loads(node_data_paths(written.graph)["saved bytes"].read_text(encoding="utf-8"))
    (graph_saved,) = saved_values(trace)
    assert sorted(data) == sorted(g["id"] for g in collection["graphs"] if "main" not in g["id"])
    assert any("joint" in graph_id for graph_id in data)
    for graph_id, entry in data.items():
        assert sum(item["value"] for item in entry["results"].values()) == graph_saved.total_bytes > 0, graph_id


def test_autograd_zero_states_are_the_recorded_ones(mlp_export, mlp_trace):
    written, collection = mlp_export
    data = json.loads(node_data_paths(written.graph)["AutogradZero"].read_text(encoding="utf-8"))
    step = next(s for s in mlp_trace if s.pass_name == "specializeAutogradZero" and s.which.is_backward_executor)
    graph_id = _graph(collection, f"{step.index:03d} {step.pass_name} ")["id"]
    states = zero_states(mlp_trace, step)
    want: dict[str, list[str]] = {}
    for param in step.graph.params:
        if param.id in states:
            want.setdefault(str(param.id), []).append(states[param.id])
    for node in step.nodes():
        for value in node.outputs:
            if value.id in states:
                want.setdefault(str(node.id), []).append(states[value.id])
    got = {node_id: entry["value"] for node_id, entry in data[graph_id]["results"].items()}
    assert got == {node_id: s[0] if len(set(s)) == 1 else ", ".join(s) for node_id, s in want.items()}
    colours = {"Zero": "#9ecae1", "Nonzero": "#a1d99b", "Unknown": "#d9d9d9"}  # blue, green, grey
    for entry in data[graph_id]["results"].values():
        assert entry["bgColor"] == colours.get(entry["value"], colours["Unknown"])
    assert {"Zero", "Nonzero"} <= set(got.values())


# -- files ---------------------------------------------------------------------------------------
def test_a_path_that_cannot_be_a_graph_file_is_refused_before_writing(mlp_trace, tmp_path):
    with pytest.raises(ModelExplorerError, match=r"out\.txt: Model Explorer reads graph JSON from a file named \*\.json"):
        write_model_explorer(mlp_trace, tmp_path / "out.txt")
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(ModelExplorerError, match="is a folder"):
        write_model_explorer(mlp_trace, tmp_path / "dir.json")
    theirs = tmp_path / "model-saved-bytes.json"
    theirs.write_text('{"mine": {"results": {}}}', encoding="utf-8")
    with pytest.raises(ModelExplorerError, match="model-saved-bytes.json: exists and is not gradview's node data"):
        write_model_explorer(mlp_trace, tmp_path / "model.json")
    assert theirs.read_text(encoding="utf-8") == '{"mine": {"results": {}}}'
    assert not (tmp_path / "model.json").exists()


def test_writing_again_replaces_gradviews_own_files(mlp_trace, tmp_path):
    first = write_model_explorer(mlp_trace, tmp_path / "sub" / "model.json")
    before = {path: path.read_text(encoding="utf-8") for path in (first.graph, *first.node_data)}
    second = write_model_explorer(mlp_trace, tmp_path / "sub" / "model.json")
    assert (second.graph, *second.node_data) == (first.graph, *first.node_data)
    assert {path: path.read_text(encoding="utf-8") for path in before} == before


def test_cli_writes_the_files_without_graphviz_and_says_how_to_open_them(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot: Model Explorer lays the graph out itself
    out = tmp_path / "mlp.json"
    assert main(["export", str(EXAMPLES / "mlp.ir"), "--model-explorer", str(out)]) == 0
    report = capsys.readouterr().out
    data = node_data_paths(out)
    assert f"wrote {out} (" in report and "2 node data files" in report
    assert f"model-explorer {out} --node_data_paths={data['saved bytes']},{data['AutogradZero']}" in report
    assert json.loads(out.read_text(encoding="utf-8"))["graphs"]


def test_cli_says_the_detail_level_does_not_apply_to_the_model_explorer_file(tmp_path, capsys):
    out = tmp_path / "mlp.json"
    assert main(["export", str(EXAMPLES / "mlp.ir"), "--model-explorer", str(out), "--detail", "ops"]) == 0
    err = capsys.readouterr().err
    assert "gradview: note: --detail ops applies to --svg and --html" in err and out.exists()


def test_cli_bad_path_is_one_line(tmp_path, capsys):
    assert main(["export", str(EXAMPLES / "mlp.ir"), "--model-explorer", str(tmp_path / "mlp.svg")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gradview: error: ") and err.count("\n") == 1 and "*.json" in err


# -- in Model Explorer -----------------------------------------------------------------------------
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def model_explorer_server():
    """Model Explorer's local server (it reads any model file the page names)."""
    pytest.importorskip(
        "model_explorer", reason="ai-edge-model-explorer is not installed (pip install ai-edge-model-explorer)"
    )
    program = shutil.which("model-explorer", path=str(Path(sys.executable).parent)) or shutil.which("model-explorer")
    if program is None:
        pytest.skip("ai-edge-model-explorer is installed without its model-explorer command")
    port = _free_port()
    server = subprocess.Popen(
        [program, "--no_open_in_browser", "--host=127.0.0.1", f"--port={port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                with urlopen(f"{base}/check_health", timeout=1) as answer:
                    if answer.read() == b"model_explorer_ok":
                        break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("Model Explorer's server did not answer within 60 s")
        yield base
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture(scope="module")
def explorer_browser():
    if os.environ.get("GRADVIEW_NO_BROWSER") == "1":
        pytest.skip("GRADVIEW_NO_BROWSER=1: the browser test is switched off")
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        pytest.fail(f"{CHROMIUM} or {CHROMEDRIVER} is missing: run `make test`, which installs chromium and chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    profile = tempfile.TemporaryDirectory()
    for flag in (
        "--headless=new", "--no-sandbox", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--window-size=1600,900", f"--user-data-dir={profile.name}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride", {"width": 1600, "height": 900, "deviceScaleFactor": 1, "mobile": False}
    )
    yield driver
    driver.quit()
    profile.cleanup()


def explorer_url(base: str, graph_file: Path, label: str, graph_id: str, node_data: list[Path],
                 expanded: list[str] = (), selected: str = "") -> str:
    """The page that opens ``graph_file`` at graph ``graph_id`` with ``node_data``, the
    layers ``expanded`` (namespaces) open and layer ``selected`` chosen: Model Explorer
    keeps all of it in its URL."""
    state = {"deepestExpandedGroupNodeIds": [f"{ns}___group___" for ns in expanded],
             "selectedNodeId": f"{selected}___group___" if selected else "",
             "selectedGraphId": graph_id, "selectedCollectionLabel": label, "widthFraction": 1, "selected": False}
    data = {"models": [{"url": str(graph_file), "adapterId": "builtin_json"}],
            "nodeData": [str(path) for path in node_data], "uiState": {"paneStates": [state]}}
    return f"{base}/?data={quote(json.dumps(data))}&renderer=webgl"


def _open_graph(driver, url: str, graph_id: str) -> dict[str, str]:
    """Open ``url``; wait for graph ``graph_id``'s info panel (or the page's error); return the panel's pairs."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)

    def settled(d):
        text = d.find_element("tag name", "body").text
        shown = ("GRAPH INFO" in text or "LAYER INFO" in text) and graph_id in text and "Processing graph" not in text
        failed = "Select Models" in text and "Error" in text.split("\n")  # the model list marks the file
        return text if shown or failed else False

    body = WebDriverWait(driver, 90).until(settled)
    assert "Select Models" not in body, body[:600]
    # The side panel's key/value rows (a long value also has an unfold toggle, so read cells, not lines).
    pairs = driver.execute_script(
        "return Array.from(document.querySelectorAll('td.key')).map(k => [k.textContent.trim(),"
        " (k.parentElement.querySelector('td.value .one-line-text') || k.parentElement).textContent.trim()]);"
    )
    return dict(pairs)


def _expected_root(graph: dict) -> list[str]:
    """What Model Explorer shows at the top: each top-level op, and each top-level layer
    (one node alone in a namespace is shown as itself: Model Explorer drops such a layer)."""
    members: dict[str, list[dict]] = {}
    for node in graph["nodes"]:
        members.setdefault(node["namespace"].split("/")[0], []).append(node)
    root = [node["label"] for node in members.pop("", [])]
    for name, nodes in members.items():
        root.append(nodes[0]["label"] if len(nodes) == 1 else name)
    return sorted(root)


def _layer_count(graph: dict) -> int:
    counts: dict[str, int] = {}
    for node in graph["nodes"]:
        parts = node["namespace"].split("/") if node["namespace"] else []
        for depth in range(1, len(parts) + 1):
            key = "/".join(parts[:depth])
            counts[key] = counts.get(key, 0) + 1
    return sum(1 for count in counts.values() if count > 1)


@pytest.mark.parametrize("export, graph_prefix", [
    ("mlp_export", "080 joint"),
    ("resnet_export", "004 specializeAutogradZero"),
])
def test_model_explorer_renders_the_export(export, graph_prefix, request, model_explorer_server, explorer_browser):
    written, collection = request.getfixturevalue(export)
    graph = _graph(collection, graph_prefix)
    url = explorer_url(model_explorer_server, written.graph, collection["label"], graph["id"], list(written.node_data))
    info = _open_graph(explorer_browser, url, graph["id"])
    assert info["op node count"] == str(len(graph["nodes"]))
    assert info["layer count"] == str(_layer_count(graph))
    assert info["step"] == graph["groupNodeAttributes"][""]["step"]
    page = explorer_browser.find_element("tag name", "body").text
    assert graph["id"] in page  # the graph selector names the graph shown
    # The node data panel lists the root level: the top-level modules (or f and df) and ops.
    labels = [cell.text for cell in explorer_browser.find_elements("css selector", "table.children-stats-results td.node-label")]
    assert sorted(labels) == _expected_root(graph)
    assert "gradview: AutogradZero" in page


_COUNT_ORANGE = """
const done = arguments[arguments.length - 1];
const image = new Image();
image.onload = () => {
  const canvas = document.createElement('canvas');
  canvas.width = image.width; canvas.height = image.height;
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0);
  const pixels = context.getImageData(0, 0, image.width, image.height).data;
  let count = 0;
  for (let i = 0; i < pixels.length; i += 4) {
    if (pixels[i] > 240 && pixels[i + 1] > 120 && pixels[i + 1] < 160 && pixels[i + 2] < 80) count++;
  }
  done(count);
};
image.src = 'data:image/png;base64,' + arguments[0];
"""


def _orange_pixels(driver) -> int:
    """Pixels of the page in the saved-bytes colour of the biggest saver (#fd8d3c)."""
    return driver.execute_async_script(_COUNT_ORANGE, driver.get_screenshot_as_base64())


def test_model_explorer_sums_the_saved_bytes_and_colours_nodes_by_them(
    mlp_export, mlp_trace, model_explorer_server, explorer_browser
):
    written, collection = mlp_export
    (graph_saved,) = saved_values(mlp_trace)
    forward = mlp_trace[graph_saved.forward_step]
    graph = next(g for g in collection["graphs"] if g["id"].endswith("]")
                 and mlp_trace[_step_of(g)].which == forward.which and mlp_trace[_step_of(g)].graph == forward.graph)
    saved = node_data_paths(written.graph)["saved bytes"]
    _open_graph(explorer_browser, explorer_url(model_explorer_server, written.graph, collection["label"], graph["id"], []),
                graph["id"])
    time.sleep(1)  # the layout animates into place
    assert _orange_pixels(explorer_browser) == 0
    url = explorer_url(model_explorer_server, written.graph, collection["label"], graph["id"], [saved])
    _open_graph(explorer_browser, url, graph["id"])
    sums = explorer_browser.execute_script(
        "return Array.from(document.querySelectorAll('tr')).filter(r => r.cells.length > 1"
        " && r.cells[0].textContent.trim() === 'Sum').map(r => r.cells[1].textContent.trim());"
    )
    assert sums == [str(graph_saved.total_bytes)]
    time.sleep(1)
    assert _orange_pixels(explorer_browser) > 200  # the biggest saver's box, in the top colour
    folder = os.environ.get("GRADVIEW_SCREENSHOTS")
    if folder:
        assert explorer_browser.save_screenshot(str(Path(folder) / "model-explorer-mlp-saved-bytes.png"))


def test_screenshot_of_the_resnet_in_model_explorer(resnet_export, model_explorer_server, explorer_browser):
    """The README's picture (``GRADVIEW_SCREENSHOTS=DIR`` writes it): the graph Model
    Explorer opens first (the ResNet as traced), with layer1 and its first block open."""
    written, collection = resnet_export
    graph = collection["graphs"][0]
    expanded = ["layer1", "layer1/layer1.0"]
    url = explorer_url(
        model_explorer_server, written.graph, collection["label"], graph["id"], [], expanded, "layer1/layer1.0"
    )
    info = _open_graph(explorer_browser, url, graph["id"])
    # The side panel shows the selected layer: Model Explorer's own counts, and gradview's attributes.
    assert info.get("name") == "layer1.0" and info.get("namespace") == "layer1", info
    inner = {"nodes": [node for node in graph["nodes"] if node["namespace"].startswith("layer1/layer1.0/")]}
    members = [node for node in graph["nodes"] if node["namespace"].startswith("layer1/layer1.0")]
    layers = _layer_count(inner) - 2  # its op nodes and layers, less layer1 and layer1.0 themselves
    assert info.get("#descendants") == str(len(members) + layers), info
    assert info.get("module") == "layer1.0" and info.get("type") == "BasicBlock", info
    time.sleep(2)  # the layout animates into place
    folder = os.environ.get("GRADVIEW_SCREENSHOTS")
    if folder:
        assert explorer_browser.save_screenshot(str(Path(folder) / "model-explorer-resnet18.png"))
    assert re.search(r"\d+ nodes", explorer_browser.find_element("tag name", "body").text)
