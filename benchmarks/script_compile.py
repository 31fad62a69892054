"""How ``gradview.ir.script`` scales with the length of the function it compiles.

Writes functions of N and 4N statements (five nodes each) to a temporary
module, compiles each, and prints the time ratio: a linear compiler gives
about 4x. (Locating nodes by sweeping the whole graph per expression once
made this 16x.)
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path

from timing import best_time  # benchmarks/ is on sys.path when run as a script

from gradview.ir import script


def load_function(folder: Path, statements: int) -> object:
    body = "".join(f"    x = x * 1.5 + {i}\n" for i in range(statements))
    path = folder / f"long_{statements}.py"
    path.write_text(f"def long_fn(x):\n{body}    return x\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module.long_fn


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("--statements", type=int, default=1000)
    cli.add_argument("--repeat", type=int, default=3)
    args = cli.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        small = load_function(Path(folder), args.statements)
        large = load_function(Path(folder), 4 * args.statements)
        t_small = best_time(lambda: script(small), repeat=args.repeat)
        t_large = best_time(lambda: script(large), repeat=args.repeat)
    print(f"script() of {args.statements} statements: {t_small:.3f} s; of {4 * args.statements}: {t_large:.3f} s")
    print(f"growth for 4x the statements: {t_large / t_small:.1f}x (linear: ~4x)")


if __name__ == "__main__":
    main()
