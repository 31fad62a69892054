"""Parse and print a 100,000-node graph with gradview and with torch._C.parse_ir.

Prints the times and the ratios gradview / torch in one run (absolute times
are noisy on shared machines; the ratios are the figures to compare). The
issue's target: gradview's parse and print each under 3 s on the 2-core
development machine.

    .venv/bin/python benchmarks/ir_text.py [--nodes N] [--repeat R]
"""

from __future__ import annotations

import argparse

from timing import best_time  # benchmarks/ is on sys.path when run as a script

from gradview.ir import parse_ir

TYPE = "Double(4, 3, strides=[3, 1], requires_grad=1, device=cpu)"


def make_graph_text(n_nodes: int) -> str:
    """A chain of elementwise ops with constants, source comments and an If every 1,000 nodes."""
    lines = [f"graph(%x : {TYPE},\n      %y : {TYPE},\n      %flag : bool):\n"]
    prev, count, number = "x", 0, 0
    while count < n_nodes:
        number += 1
        if count % 1000 == 999:
            out = f"{number}"
            lines.append(f"  %{out} : {TYPE} = prim::If(%flag) # model.py:{number}:4\n")
            lines.append("    block0():\n")
            lines.append(f"      %t{out} : {TYPE} = aten::tanh(%{prev}) # model.py:{number}:8\n")
            lines.append(f"      -> (%t{out})\n")
            lines.append("    block1():\n")
            lines.append(f"      -> (%{prev})\n")
            prev, count = out, count + 2
        elif count % 5 == 4:
            const, out = f"{number}", f"{number + 1}"
            number += 1
            lines.append(f"  %{const} : int = prim::Constant[value=1]()\n")
            lines.append(f"  %{out} : {TYPE} = aten::add(%{prev}, %y, %{const}) # model.py:{number}:4\n")
            prev, count = out, count + 2
        else:
            op = ("aten::mul", "aten::sub", "aten::div", "aten::maximum")[count % 4]
            out = f"v{number}"
            lines.append(f"  %{out} : {TYPE} = {op}(%{prev}, %y) # model.py:{number}:4\n")
            prev, count = out, count + 1
    lines.append(f"  return (%{prev})\n")
    return "".join(lines)


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("--nodes", type=int, default=100_000)
    cli.add_argument("--repeat", type=int, default=3)
    args = cli.parse_args()

    text = make_graph_text(args.nodes)
    graph = parse_ir(text)
    n_nodes = sum(1 for _ in graph.all_nodes())
    print(f"graph: {n_nodes} nodes, {len(text) / 1e6:.1f} MB of text")

    ours_parse = best_time(repeat=args.repeat, fn=lambda: parse_ir(text))
    ours_print = best_time(repeat=args.repeat, fn=lambda: str(graph))
    assert str(parse_ir(str(graph))) == str(graph)

    try:
        import torch
    except ImportError:
        print(f"gradview parse: {ours_parse:.3f} s   print: {ours_print:.3f} s   (torch not installed)")
        return
    torch_graph = torch._C.parse_ir(text)
    torch_parse = best_time(repeat=args.repeat, fn=lambda: torch._C.parse_ir(text))
    torch_print = best_time(repeat=args.repeat, fn=lambda: str(torch_graph))

    print(f"{'':8}{'gradview':>12}{'torch':>12}{'ratio':>10}")
    print(f"{'parse':8}{ours_parse:>11.3f}s{torch_parse:>11.3f}s{ours_parse / torch_parse:>9.1f}x")
    print(f"{'print':8}{ours_print:>11.3f}s{torch_print:>11.3f}s{ours_print / torch_print:>9.1f}x")
    target = 3.0
    verdict = "meets" if max(ours_parse, ours_print) < target else "MISSES"
    print(f"target: parse and print each under {target:.0f} s here -> {verdict}")


if __name__ == "__main__":
    main()
