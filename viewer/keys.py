"""The keys, as the help screen and the README list them (a test checks both
say the same). The bindings themselves live with the widgets and screens."""

from __future__ import annotations

__all__ = ["KEYS"]

# (keys, what they do): the README's table, backticks dropped.
KEYS: tuple[tuple[str, str], ...] = (
    ("up / down (timeline), [ / ], j / k", "previous / next step"),
    ("u", "hide or show steps that changed nothing"),
    ("/", "filter the timeline by pass name; with the canvas focused, search the graph on screen "
          "(op kind, value name, attribute): enter or down / shift+enter or up for the next / previous "
          "match, escape closes"),
    ("1 2 3 4, v", "whole graph (DifferentiableGraphs framed), forward f, backward df, "
                   "joint view (each captured value an edge from f into df)"),
    ("g", "next DifferentiableGraph"),
    ("arrows (canvas focused), mouse drag or wheel", "pan; click a node to select it"),
    ("+ - 0", "zoom in, zoom out, fit"),
    ("n / N, c", "next / previous node, center on the selection"),
    ("m", "maximize the canvas (hide both panels), and back"),
    ("M", "show or hide the minimap (the whole drawing, the view as a rectangle; click it to go there)"),
    ("l", "level of detail: model (the model's modules as boxes), ops (plumbing folded into the op "
          "that reads it), ir (every node); the header says which is on"),
    ("enter, click, backspace", "on a module's box: expand it in place (its submodules folded); "
                                "backspace folds the module or group around the selection again"),
    ("x, X", "collapse the module, DifferentiableGraph, GradOf or If/Loop block holding the selection "
             "into one box with its node count (x on a box expands it); collapse every group, or expand them all"),
    ("f, < / >", "focus: only the neighbourhood of the selection, laid out alone (f again: the "
                 "whole view); fewer / more hops (1 to 6, default 2)"),
    ("o", "fan-out stubs on or off: a value read by more than 8 nodes, drawn as a short "
           "label at each reader (and its count at the source) instead of a fan of edges"),
    ("s, i", "collapse or expand the steps panel, the tabs panel (or click the panel's splitter)"),
    ("{ }, ( )", "narrow / widen the steps panel, the tabs panel (or drag the panel's splitter)"),
    ("p / P", "next / previous tab (Inspect, IR, Run, Check, Saved); a collapsed tabs panel opens"),
    ("d", "IR text or unified diff against the previous step of the same graph"),
    ("r", "run this step's graph on the example inputs (in the joint view f's step too): shape, dtype and "
          "mean on the nodes; on a picture of at most 60 boxes each value also on its edge where it fits "
          "(3x4 μ=0.022; ∂ marks a gradient in df), else on its box only; min/max/mean in the Run tab"),
    ("b", "find the first step whose outputs or gradients differ from the original graph's, "
          "DifferentiableGraphs run forward and backward (\"which pass broke my numbers\"); the view bar "
          "and the Check tab say which step it checks"),
    ("G", "gradient check of the step on screen, as torch.autograd.gradcheck's fast mode: per input, one "
          "central finite difference along a random direction against the backward's v·J·u (two forward "
          "runs per input, whatever its size); the view bar and the Check tab say which input it checks"),
    ("T", "trace the selected gradient back (backward or joint view): light the df ops that "
          "compute it and the forward ops they differentiate"),
    ("S, w", "Saved tab: what each graph saves for backward (name, bytes, shape, dtype, producer, "
             "consumers); the row under the cursor lights its producer in f and its readers in df "
             "(joint view); w marks or unmarks it as recomputed: saved bytes before -> after, the "
             "forward ops the backward reruns (lit), the inputs it must keep"),
    ("e / E", "export this view as SVG / every step as one HTML file (the first export asks for the folder, <target>-export/ beside the "
              "target by default; a taken name gets -2), E saying "
              "in the view bar which picture it draws; the file is written whole at the end"),
    ("y", "export the picture on screen as a slide: light, 16:9, a 1600x900 PNG (as export --style slide)"),
    ("escape", "cancel a running b, G or E (its key again does too): it stops before its next step, input "
               "or picture; a cancelled E writes nothing"),
    ("t", "dark or light theme"),
    ("?, ctrl+p", "help (keys and colours); command palette (jump to pass, find node, export, checks)"),
    ("q", "quit"),
)
