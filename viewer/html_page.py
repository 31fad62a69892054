"""One self-contained HTML page that steps through a trace's pictures (no server, no network).

The pictures come as :class:`~gradview.viewer.stepper.StepperData`: every
drawn part once, its geometry once, each step a list of parts and colour
classes, as gzipped JSON in base64 in a ``<script type="application/octet-stream">``
element (the browser unpacks it with ``DecompressionStream``); a short
script builds the step shown. The steps are listed under the name of the graph
they show (once per run of steps of that graph), the changed ones marked;
beside the picture are the step's diff (nodes added and removed) and the
docs of its pass, rendered from their Markdown (:mod:`.doc_markdown`). Keys:
left/right and up/down arrows step, ``n``/``p`` step to the next/previous
step whose picture changed (skipping the unchanged ones), Home and End jump,
``+``/``-`` zoom, ``0`` fits, ``f`` switches between fit and full size, ``d``
hides the docs. The picture opens fitted to the stage, width and height,
however small that makes it (the joint view and its legend whole); a step
whose boxes are all out of view (a big picture's top left can be empty)
scrolls to its top-most box, so no step opens blank. ``page.html#step=N``
opens on step N (the first shown at or after it), and the address follows
the step shown, so a link names a step. In a view of one DifferentiableGraph
the list tags each step with the graph it ran on (``f``, ``df``).
All text goes through :func:`html.escape` or the packed JSON; the script writes text only with ``textContent`` and builds
pictures only from the parts, whose text Graphviz escaped; a
Content-Security-Policy lets no script run but this page's own (by its
hash) and nothing load from anywhere.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import html
import json
from typing import Any

from .stepper import StepperData

__all__ = ["html_page", "pack", "unpack", "SCRIPT"]

SCRIPT = r"""
(function () {
  "use strict";
  var data = null;
  var items = Array.prototype.slice.call(document.querySelectorAll("#steps > li.step"));
  var stage = document.getElementById("stage");
  var shown = -1, mode = "fit", scale = 1, natural = 0, naturalHeight = 0;
  function setText(id, text) { document.getElementById(id).textContent = text; }
  function expand(text) {
    var out = [];
    text.split(",").forEach(function (run) {
      if (!run) { return; }
      var star = run.split("*");
      if (star.length > 1) { for (var k = 0; k < +star[1]; k++) { out.push(+star[0]); } return; }
      var ends = run.split("-"), a = +ends[0], b = ends.length > 1 ? +ends[1] : a;
      for (var i = a; i <= b; i++) { out.push(i); }
    });
    return out;
  }
  function geometry(match, number) { return '"' + data.geometry[+number] + '"'; }
  function parts(step) {
    var numbers = expand(step.parts), styles = expand(step.styles), out = [];
    for (var i = 0; i < numbers.length; i++) {
      out.push('<g class="s' + styles[i] + '">' + data.pieces[numbers[i]].replace(/"@(\d+)"/g, geometry) + "</g>");
    }
    return out.join("");
  }
  function ptToPx(text) { return parseFloat(text) * 4 / 3; }
  function applyZoom() {
    var svg = stage.querySelector("svg");
    if (!svg) { return; }
    if (mode === "fit") {  /* the whole picture, legend included, however small: zoom in with + */
      var wide = (stage.clientWidth - 16) / natural, high = (stage.clientHeight - 16) / naturalHeight;
      scale = Math.max(0.02, Math.min(1.5, wide, high));
    }
    svg.style.width = (natural * scale) + "px";
    svg.style.height = "auto";
    setText("zoom", Math.round(scale * 100) + "%");
    document.body.dataset.zoom = String(scale);
  }
  /* A picture larger than the stage opens at its top left, which may hold no box
     (a big model's is mostly edges and cluster margins there): when no box is in
     view, scroll to the top-most one. Stepping keeps the scroll otherwise, so the
     boxes of consecutive steps stay where they were. */
  function keepABoxInView() {
    var boxes = stage.querySelectorAll("g.node"), view = stage.getBoundingClientRect(), top = null;
    for (var i = 0; i < boxes.length; i++) {
      var r = boxes[i].getBoundingClientRect();
      if (r.right > view.left && r.left < view.right && r.bottom > view.top && r.top < view.bottom) { return; }
      if (top === null || r.top < top.top) { top = r; }
    }
    if (top === null) { return; }
    stage.scrollLeft += top.left - view.left - Math.max(0, (view.width - top.width) / 2);
    stage.scrollTop += top.top - view.top - 16;
  }
  function fillList(list, words) {
    var node = document.getElementById(list);
    node.replaceChildren();
    words.forEach(function (w) { var li = document.createElement("li"); li.textContent = w; node.appendChild(li); });
  }
  /* The docs' Markdown, built as elements whose text is set with textContent. */
  var TAGS = {b: "strong", i: "em", c: "code"};
  function runs(parent, list) {
    list.forEach(function (run) {
      if (run[0] === "t") { parent.appendChild(document.createTextNode(run[1])); return; }
      var span = document.createElement(TAGS[run[0]] || "span");
      span.textContent = run[1];
      parent.appendChild(span);
    });
    return parent;
  }
  function renderDoc(blocks) {
    var node = document.getElementById("doc-text");
    node.replaceChildren();
    if (!blocks || !blocks.length) { node.textContent = "No description of this step."; return; }
    blocks.forEach(function (block) {
      var kind = block[0], element;
      if (kind === "pre") { element = document.createElement("pre"); element.textContent = block[1]; }
      else if (kind === "ul" || kind === "ol") {
        element = document.createElement(kind);
        block[1].forEach(function (item) { element.appendChild(runs(document.createElement("li"), item)); });
      } else { element = runs(document.createElement("p"), block[1]); }
      node.appendChild(element);
    });
  }
  function show(position) {
    if (!items.length || !data) { return; }
    position = Math.max(0, Math.min(items.length - 1, position));
    if (position === shown) { return; }
    if (shown >= 0) { items[shown].classList.remove("current"); }
    shown = position;
    var item = items[position], step = data.steps[position], frame = data.frames[step.frame];
    stage.innerHTML = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="' +
      frame.viewBox + '"><g transform="' + frame.transform + '">' + parts(step) + "</g></svg>";
    natural = ptToPx(frame.width);
    naturalHeight = ptToPx(frame.height);
    applyZoom();
    keepABoxInView();
    item.classList.add("current");
    item.scrollIntoView({block: "nearest"});
    setText("step-index", "step " + step.index);
    setText("step-pass", step.pass);
    setText("step-which", "[" + step.which + "]");
    setText("step-state", step.changed ? "changed" : "unchanged");
    setText("counter", (position + 1) + " / " + items.length);
    setText("doc-pass", step.pass);
    renderDoc(data.docs[step.doc]);
    var c = step.counts;
    setText("diff-summary", "+" + c[0] + " -" + c[1] + (c[2] ? ", " + c[2] + " with new text" : "") +
      (step.changed ? "" : " (picture unchanged)"));
    fillList("diff-added", step.added.map(function (w) { return "+ " + w; }));
    fillList("diff-removed", step.removed.map(function (w) { return "- " + w; }));
    setText("diff-more", step.more ? "… and " + step.more + " more" : "");
    document.body.dataset.position = String(position);
    document.body.dataset.step = String(step.index);
    if (location.hash !== "#step=" + step.index) { history.replaceState(null, "", "#step=" + step.index); }
  }
  /* The next (or previous) step whose picture changed: n and p skip the unchanged ones. */
  function skip(direction) {
    for (var p = shown + direction; p >= 0 && p < items.length; p += direction) {
      if (data.steps[p].changed) { show(p); return; }
    }
    show(direction > 0 ? items.length - 1 : 0);
  }
  /* #step=N: the first step shown at or after step N (null without a step in the address). */
  function linked() {
    var match = /^#step=(\d+)$/.exec(location.hash);
    if (!match || !data) { return null; }
    for (var p = 0; p < data.steps.length; p++) { if (data.steps[p].index >= +match[1]) { return p; } }
    return data.steps.length - 1;
  }
  function zoom(factor) { mode = "free"; scale = Math.max(0.05, Math.min(8, scale * factor)); applyZoom(); }
  var moves = {
    ArrowRight: function () { show(shown + 1); },
    ArrowDown: function () { show(shown + 1); },
    ArrowLeft: function () { show(shown - 1); },
    ArrowUp: function () { show(shown - 1); },
    n: function () { skip(1); },
    p: function () { skip(-1); },
    Home: function () { show(0); },
    End: function () { show(items.length - 1); },
    "+": function () { zoom(1.25); },
    "=": function () { zoom(1.25); },
    "-": function () { zoom(0.8); },
    "0": function () { mode = "fit"; applyZoom(); },
    f: function () { if (mode === "fit") { mode = "free"; scale = 1; } else { mode = "fit"; } applyZoom(); },
    d: function () { document.body.classList.toggle("nodoc"); applyZoom(); }
  };
  document.addEventListener("keydown", function (event) {
    var move = moves[event.key];
    if (!move || event.altKey || event.ctrlKey || event.metaKey) { return; }
    event.preventDefault();
    move();
  });
  document.getElementById("prev").addEventListener("click", function () { show(shown - 1); });
  document.getElementById("next").addEventListener("click", function () { show(shown + 1); });
  document.getElementById("zoom-in").addEventListener("click", function () { zoom(1.25); });
  document.getElementById("zoom-out").addEventListener("click", function () { zoom(0.8); });
  document.getElementById("zoom-fit").addEventListener("click", function () { mode = "fit"; applyZoom(); });
  window.addEventListener("resize", applyZoom);
  window.addEventListener("hashchange", function () { var p = linked(); if (p !== null) { show(p); } });
  items.forEach(function (item, position) {
    item.addEventListener("click", function () { show(position); });
  });
  /* The data is gzipped JSON in base64: a 450-node graph's 81 steps in 2.5 MB instead of 13. */
  var packed = document.getElementById("data").textContent.trim();
  var bytes = Uint8Array.from(atob(packed), function (c) { return c.charCodeAt(0); });
  new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text()
    .then(function (text) {
      data = JSON.parse(text);
      var start = linked();
      show(start !== null ? start : +document.body.dataset.start || 0);
      document.body.dataset.ready = "true";
    })
    .catch(function (error) { stage.textContent = "This browser cannot unpack the pictures: " + error; });
})();
"""

_STYLE = """
:root { color-scheme: %(scheme)s; }
* { box-sizing: border-box; }
body { margin: 0; height: 100vh; display: flex; flex-direction: column;
       background: %(background)s; color: %(text)s; font: 13px/1.4 Courier, monospace; }
header { display: flex; gap: 1em; align-items: center; padding: 6px 10px; border-bottom: 1px solid %(rule)s; }
header button { font: inherit; background: none; color: inherit; border: 1px solid %(rule)s; cursor: pointer; }
#caption span { margin-right: 0.6em; }
#step-pass { font-weight: bold; }
.keys { margin-left: auto; opacity: 0.7; }
#note { color: %(accent)s; }
main { flex: 1; display: flex; min-height: 0; }
#steps { margin: 0; padding: 4px 0; list-style: none; overflow-y: auto; width: 20em;
         border-right: 1px solid %(rule)s; flex: none; }
#steps li { padding: 1px 8px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
#steps li.step { cursor: pointer; }
#steps li.which { margin-top: 6px; font-weight: bold; opacity: 0.8; cursor: default; }
#steps li.unchanged { opacity: 0.55; }
#steps li.changed::after { content: " \\25CF"; color: %(accent)s; }
#steps li.current { background: %(highlight)s; opacity: 1; }
#stage { flex: 1; overflow: auto; padding: 8px; min-width: 0; }
#stage svg { display: block; }
#doc { width: 30em; flex: none; overflow-y: auto; padding: 8px 12px; border-left: 1px solid %(rule)s; }
body.nodoc #doc { display: none; }
#doc h2 { font-size: 14px; margin: 0 0 4px 0; }
#doc h3 { font-size: 13px; margin: 10px 0 2px 0; opacity: 0.8; }
#doc-text p { margin: 0 0 6px 0; }
#doc #doc-text ul, #doc #doc-text ol { margin: 0 0 6px 0; padding-left: 1.4em; }
#doc #doc-text ul { list-style: disc; }
#doc-text pre { margin: 0 0 6px 0; padding: 4px 6px; border: 1px solid %(rule)s; overflow-x: auto; }
#doc-text code { font-weight: bold; }
#steps .tag { display: inline-block; min-width: 2.2em; padding: 0 3px; margin-right: 4px; border-radius: 3px;
              background: %(rule)s; text-align: center; font-size: 11px; }
#doc ul { margin: 0; padding-left: 0; list-style: none; }
#diff-added li { color: %(added)s; }
#diff-removed li { color: %(removed)s; }
"""

_COLOURS = {
    "dark": {
        "scheme": "dark", "background": "#0d1117", "text": "#e6edf3", "rule": "#30363d", "highlight": "#1f3a5f",
        "accent": "#f0b429", "added": "#7ee787", "removed": "#ff7b72",
    },
    "light": {
        "scheme": "light", "background": "#ffffff", "text": "#212529", "rule": "#ced4da", "highlight": "#d0ebff",
        "accent": "#b7791f", "added": "#1a7f37", "removed": "#cf222e",
    },
}


def pack(value: Any) -> str:
    """``value`` as gzipped JSON in base64 (the same bytes for the same value)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return base64.b64encode(gzip.compress(text.encode("utf-8"), 9, mtime=0)).decode("ascii")


def unpack(text: str) -> Any:
    """The value :func:`pack` packed."""
    return json.loads(gzip.decompress(base64.b64decode(text)).decode("utf-8"))


def _tag(tag: str) -> str:
    """The list's word on which graph a step ran on (``f``, ``df``), when the view shows several."""
    return f'<span class="tag">{html.escape(tag)}</span>' if tag else ""


def html_page(data: StepperData, title: str = "gradview", theme: str = "dark", start: int = 0, note: str = "") -> str:
    """The page for ``data`` (:func:`gradview.viewer.stepper.stepper_data`), opening
    on its ``start``-th step (a JIT log's: the user's graph, not a helper's);
    ``note`` in the header says what differs from PyTorch (``min group size 1 (not PyTorch's 2)``)."""
    esc = html.escape
    items = []
    group = None
    for step in data.steps:
        if step["which"] != group:
            group = step["which"]
            items.append(f'<li class="which">{esc(group)}</li>')
        state = "changed" if step["changed"] else "unchanged"
        items.append(
            f'<li class="step {state}" data-index="{int(step["index"])}" data-pass="{esc(step["pass"])}" '
            f'data-changed="{"true" if step["changed"] else "false"}">'
            f'{_tag(step.get("tag", ""))}{int(step["index"])} {esc(step["pass"])}</li>'
        )
    payload = {
        "pieces": data.pieces, "geometry": data.geometry, "frames": data.frames, "docs": data.docs, "steps": data.steps,
    }
    # Colours by class: a mark that comes or goes changes a step's class list, not its parts.
    rules = [
        f"#stage .s{number} {tag} {{{declarations}}}"
        for number, style in enumerate(data.styles)
        for tag, declarations in style.items()
    ]
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
    policy = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'"
    colours = _COLOURS.get(theme, _COLOURS["dark"])
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">',
            f"<title>{esc(title)}</title>",
            f"<style>{_STYLE % colours}",
            "#stage text { font-family: Courier, monospace; font-size: 10px; text-anchor: middle; }",
            *rules,
            "</style>",
            "</head>",
            f'<body data-position="" data-step="" data-start="{max(0, min(start, len(data.steps) - 1))}">',
            "<header>",
            '<button id="prev" type="button" title="previous step (left arrow)">&#9664;</button>',
            '<button id="next" type="button" title="next step (right arrow)">&#9654;</button>',
            '<span id="caption"><span id="step-index"></span> <span id="step-pass"></span> '
            '<span id="step-which"></span> <span id="step-state"></span></span>',
            '<span id="counter"></span>',
            f'<span id="note">{esc(note)}</span>' if note else "",
            '<button id="zoom-out" type="button" title="zoom out (-)">&#8722;</button>',
            '<span id="zoom"></span>',
            '<button id="zoom-in" type="button" title="zoom in (+)">+</button>',
            '<button id="zoom-fit" type="button" title="fit to width (0)">fit</button>',
            '<span class="keys">&#8592; &#8594; Home End: step, n p: next/previous change, + - 0: zoom, '
            "d: docs</span>",
            "</header>",
            "<main>",
            '<ol id="steps">',
            *items,
            "</ol>",
            '<div id="stage"></div>',
            '<aside id="doc"><h2 id="doc-pass"></h2>',
            '<h3>Changes</h3><div id="diff-summary"></div>',
            '<ul id="diff-added"></ul><ul id="diff-removed"></ul><div id="diff-more"></div>',
            '<h3>What this step does</h3><div id="doc-text"></div></aside>',
            "</main>",
            f'<script type="application/octet-stream" id="data">{pack(payload)}</script>',
            f"<script>{SCRIPT}</script>",
            "</body>",
            "</html>",
            "",
        ]
    )
