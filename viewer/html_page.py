"""One self-contained HTML page that steps through exported SVGs (no server, no network).

Each distinct SVG is inlined once in a ``<template>`` (steps a pass left
unchanged share their picture); a list of the steps carries each one's
index, pass, graph and state as data attributes, and a short script shows
one step at a time: left/right and up/down arrows step, Home and End jump,
``f`` switches between fitting the picture to the window and full size.
All text goes through :func:`html.escape`, the script writes text only with
``textContent``, and a Content-Security-Policy lets no script run but this
page's own (by its hash) and nothing load from anywhere.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Sequence
from typing import Any

__all__ = ["html_page", "SCRIPT"]

SCRIPT = """
(function () {
  "use strict";
  var steps = Array.prototype.slice.call(document.querySelectorAll("#steps > li"));
  var stage = document.getElementById("stage");
  var shown = -1;
  function setText(id, text) { document.getElementById(id).textContent = text; }
  function show(position) {
    if (!steps.length) { return; }
    position = Math.max(0, Math.min(steps.length - 1, position));
    if (position === shown) { return; }
    if (shown >= 0) { steps[shown].classList.remove("current"); }
    shown = position;
    var item = steps[position];
    var data = item.dataset;
    var picture = document.getElementById("svg-" + data.svg);
    stage.replaceChildren(picture.content.cloneNode(true));
    item.classList.add("current");
    item.scrollIntoView({block: "nearest"});
    setText("step-index", "step " + data.index);
    setText("step-pass", data.pass);
    setText("step-which", "[" + data.which + "]");
    setText("step-state", data.changed === "true" ? "changed" : "unchanged");
    setText("counter", (position + 1) + " / " + steps.length);
    document.body.dataset.position = String(position);
    document.body.dataset.step = data.index;
  }
  var moves = {
    ArrowRight: function () { show(shown + 1); },
    ArrowDown: function () { show(shown + 1); },
    ArrowLeft: function () { show(shown - 1); },
    ArrowUp: function () { show(shown - 1); },
    Home: function () { show(0); },
    End: function () { show(steps.length - 1); },
    f: function () { stage.classList.toggle("fit"); }
  };
  document.addEventListener("keydown", function (event) {
    var move = moves[event.key];
    if (!move || event.altKey || event.ctrlKey || event.metaKey) { return; }
    event.preventDefault();
    move();
  });
  document.getElementById("prev").addEventListener("click", function () { show(shown - 1); });
  document.getElementById("next").addEventListener("click", function () { show(shown + 1); });
  steps.forEach(function (item, position) {
    item.addEventListener("click", function () { show(position); });
  });
  show(0);
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
main { flex: 1; display: flex; min-height: 0; }
#steps { margin: 0; padding: 4px 0; list-style: none; overflow-y: auto; width: 22em;
         border-right: 1px solid %(rule)s; flex: none; }
#steps li { padding: 1px 8px; cursor: pointer; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
#steps li.unchanged { opacity: 0.6; }
#steps li.current { background: %(highlight)s; opacity: 1; }
#stage { flex: 1; overflow: auto; padding: 8px; }
#stage.fit svg { max-width: 100%%; max-height: 100%%; width: auto; height: auto; }
"""

_COLOURS = {
    "dark": {"scheme": "dark", "background": "#0d1117", "text": "#e6edf3", "rule": "#30363d", "highlight": "#1f3a5f"},
    "light": {"scheme": "light", "background": "#ffffff", "text": "#212529", "rule": "#ced4da", "highlight": "#d0ebff"},
}


def _bare_svg(svg: str) -> str:
    """The ``<svg>`` element alone: the XML declaration and doctype have no place inside HTML."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def html_page(pictures: Sequence[tuple[Any, str]], title: str = "gradview", theme: str = "dark") -> str:
    """The page for ``pictures``: (frame, SVG text) pairs in order, each frame
    with ``index``, ``pass_name``, ``which`` and ``changed``."""
    esc = html.escape
    svg_number: dict[str, int] = {}
    templates = []
    items = []
    for frame, svg in pictures:
        bare = _bare_svg(svg)
        number = svg_number.get(bare)
        if number is None:
            number = svg_number[bare] = len(svg_number)
            templates.append(f'<template id="svg-{number}">{bare}</template>')
        state = "changed" if frame.changed else "unchanged"
        items.append(
            f'<li class="{state}" data-svg="{number}" data-index="{int(frame.index)}" '
            f'data-pass="{esc(frame.pass_name)}" data-which="{esc(frame.which)}" '
            f'data-changed="{"true" if frame.changed else "false"}">'
            f"{int(frame.index)} {esc(frame.pass_name)} [{esc(frame.which)}]</li>"
        )
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
            f"<style>{_STYLE % colours}</style>",
            "</head>",
            '<body data-position="" data-step="">',
            "<header>",
            '<button id="prev" type="button" title="previous step (left arrow)">&#9664;</button>',
            '<button id="next" type="button" title="next step (right arrow)">&#9654;</button>',
            '<span id="caption"><span id="step-index"></span> <span id="step-pass"></span> '
            '<span id="step-which"></span> <span id="step-state"></span></span>',
            '<span id="counter"></span>',
            '<span class="keys">&#8592; &#8594; &#8593; &#8595; Home End, f: fit / full size</span>',
            "</header>",
            "<main>",
            '<ol id="steps">',
            *items,
            "</ol>",
            '<div id="stage" class="fit"></div>',
            "</main>",
            *templates,
            f"<script>{SCRIPT}</script>",
            "</body>",
            "</html>",
            "",
        ]
    )
