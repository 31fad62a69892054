"""Graphs for the create_autodiff_subgraphs tests: side effects, views,
aliasing, control flow, constants and ops torch cannot differentiate.

Each case is IR text (tensor inputs are 3x3 doubles at run time) plus the
values of its non-tensor inputs.
"""

from __future__ import annotations

from typing import Any

from ..ir.corpus import ROUNDTRIP_DIR

__all__ = ["CASES", "GRAPHS", "ROUNDTRIP", "SCALARS", "random_case"]

ROUNDTRIP = sorted(ROUNDTRIP_DIR.glob("script_*.ir"))

HEAD = """graph(%x : Tensor, %y : Tensor, %flag : bool, %n : int):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %true : bool = prim::Constant[value=1]()
"""
SCALARS: dict[str, Any] = {"flag": True, "n": 3}


def _case(body: str) -> str:
    return HEAD + body


CASES: dict[str, str] = {
    # A chain with a print in the middle: two work blocks, groups never cross it.
    "print_between": _case("""  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::sin(%a)
   = prim::Print(%b)
  %c : Tensor = aten::cos(%b)
  %d : Tensor = aten::add(%c, %a, %one)
  %e : Tensor = aten::exp(%d)
  return (%e)
"""),
    # The producer must move below the print to reach its consumer: refused.
    "print_blocks_producer": _case("""  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::cos(%a)
   = prim::Print(%x)
  %c : Tensor = aten::exp(%b)
  %d : Tensor = aten::tanh(%c)
  %e : Tensor = aten::mul(%d, %a)
  return (%e)
"""),
    # An in-place write to %y sits between mul(%x, %y) and its consumer.
    "inplace_between": _case("""  %a : Tensor = aten::mul(%x, %y)
  %z : Tensor = aten::add_(%y, %x, %one)
  %b : Tensor = aten::sin(%a)
  %c : Tensor = aten::cos(%b)
  %d : Tensor = aten::mul(%c, %z)
  return (%d, %y)
"""),
    # In-place op on a fresh tensor, read before and after.
    "inplace_on_temporary": _case("""  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::sin(%a)
  %w : Tensor = aten::mul_(%a, %y)
  %c : Tensor = aten::cos(%a)
  %d : Tensor = aten::add(%b, %c, %one)
  return (%d)
"""),
    # View ops stay outside; aten::t is not one of them and joins.
    "views": _case("""  %sizes : int[] = prim::ListConstruct(%three, %three)
  %a : Tensor = aten::sin(%x)
  %v : Tensor = aten::view(%a, %sizes)
  %b : Tensor = aten::cos(%v)
  %t : Tensor = aten::t(%b)
  %c : Tensor = aten::exp(%t)
  %tr : Tensor = aten::transpose(%c, %zero, %one)
  %d : Tensor = aten::tanh(%tr)
  %r : Tensor = aten::reshape(%d, %sizes)
  %e : Tensor = aten::mul(%r, %y)
  %ex : Tensor = aten::expand_as(%e, %x)
  %f : Tensor = aten::sigmoid(%ex)
  return (%f)
"""),
    # Two outputs of one group share memory (%b is a view of %a).
    "aliased_outputs": _case("""  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::t(%a)
  %c : Tensor = aten::cos(%a)
  %d : Tensor = aten::mul(%b, %c)
  return (%a, %b, %d)
"""),
    # A group output that is a view of a group input.
    "output_aliases_input": _case("""  %b : Tensor = aten::t(%x)
  %c : Tensor = aten::sin(%b)
  %d : Tensor = aten::cos(%c)
  return (%b, %d)
"""),
    # Views torch differentiates (unsqueeze, squeeze, permute) inside a chain.
    "view_chain": _case("""  %perm : int[] = prim::ListConstruct(%one, %zero)
  %a : Tensor = aten::sin(%x)
  %u : Tensor = aten::unsqueeze(%a, %zero)
  %s : Tensor = aten::squeeze(%u, %zero)
  %p : Tensor = aten::permute(%s, %perm)
  %b : Tensor = aten::mul(%p, %y)
  return (%b, %u)
"""),
    # Tensors flow through a list into cat; the list is mutated in between.
    "list_aliasing": _case("""  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::cos(%y)
  %l : Tensor[] = prim::ListConstruct(%a, %b)
  %e : Tensor = aten::exp(%a)
  %l2 : Tensor[] = aten::append(%l, %e)
  %c : Tensor = aten::cat(%l, %zero)
  %d : Tensor = aten::tanh(%c)
  %f : Tensor = aten::mul(%d, %three)
  return (%f)
"""),
    # Differentiable ops in both branches of an if and around it.
    "if_bodies": _case("""  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::cos(%a)
  %r : Tensor = prim::If(%flag)
    block0():
      %c : Tensor = aten::exp(%b)
      %d : Tensor = aten::mul(%c, %y)
      %e : Tensor = aten::tanh(%d)
      -> (%e)
    block1():
      %f : Tensor = aten::neg(%b)
      -> (%f)
  %g : Tensor = aten::sigmoid(%r)
  %h : Tensor = aten::add(%g, %a, %one)
  return (%h)
"""),
    # A print inside a branch: pure nodes may still move across the if.
    "print_inside_if": _case("""  %a : Tensor = aten::mul(%x, %y)
  %r : Tensor = prim::If(%flag)
    block0():
       = prim::Print(%x)
      -> (%x)
    block1():
      -> (%y)
  %b : Tensor = aten::sin(%a)
  %c : Tensor = aten::cos(%b)
  %d : Tensor = aten::add(%c, %r, %one)
  return (%d)
"""),
    # A loop with a carried tensor, work before, inside and after it.
    "loop_body": _case("""  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::mul(%a, %y)
  %acc : Tensor = prim::Loop(%n, %true, %b)
    block0(%i : int, %cur : Tensor):
      %c : Tensor = aten::mul(%cur, %x)
      %d : Tensor = aten::tanh(%c)
      %e : Tensor = aten::add(%d, %cur, %one)
      -> (%true, %e)
  %f : Tensor = aten::exp(%acc)
  %g : Tensor = aten::neg(%f)
  return (%g)
"""),
    # Ops torch cannot differentiate split the chain.
    "nondifferentiable_between": _case("""  %a : Tensor = aten::sin(%x)
  %z : Tensor = aten::zeros_like(%a, %none, %none, %none, %none, %none)
  %b : Tensor = aten::add(%z, %a, %one)
  %c : Tensor = aten::cos(%b)
  %s : int = aten::size(%c, %zero)
  %d : Tensor = aten::mul(%c, %s)
  %e : Tensor = aten::exp(%d)
  %f : Tensor = aten::sum(%e, %none)
  %g : Tensor = aten::mul(%f, %e)
  return (%g)
"""),
    # One value feeding two branches that meet again.
    "diamond": _case("""  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::cos(%a)
  %c : Tensor = aten::exp(%a)
  %d : Tensor = aten::add(%b, %c, %one)
  %e : Tensor = aten::mul(%d, %a)
  return (%e, %b)
"""),
    # Independent chains, one of them too short for threshold 2.
    "independent_chains": _case("""  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::cos(%y)
  %c : Tensor = aten::exp(%b)
  %d : Tensor = aten::relu(%c)
  return (%a, %d)
"""),
    # Scalar arithmetic, constants only, no tensors computed.
    "no_tensor_ops": _case("""  %a : int = aten::mul(%n, %three)
  %b : int = aten::add(%a, %one)
  return (%b)
"""),
    # Dropout in eval mode is not differentiable; matmul chains are.
    "dropout_eval": _case("""  %p : float = prim::Constant[value=0.5]()
  %a : Tensor = aten::matmul(%x, %y)
  %b : Tensor = aten::dropout(%a, %p, %false)
  %c : Tensor = aten::relu(%b)
  %d : Tensor = aten::mm(%c, %y)
  return (%d)
"""),
    # A node with two tensor outputs (chunk) in the middle of a chain.
    "constant_chunk": _case("""  %a : Tensor = aten::sin(%x)
  %c1 : Tensor, %c2 : Tensor = prim::ConstantChunk[chunks=2, dim=0](%a)
  %d : Tensor = aten::mul(%c1, %c2)
  %e : Tensor = aten::exp(%d)
  return (%e)
"""),
    # requires_grad of group outputs comes from profiles, also those that
    # end up inside the next group.
    "profiles_across_print": _case("""  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::sin(%a)
  %e : Tensor = aten::tanh(%a)
   = prim::Print(%b, %e)
  %p : Tensor = prim::profile[profiled_type=Double(3, 3, strides=[3, 1], requires_grad=1, device=cpu)](%b)
  %q : Tensor = prim::profile[profiled_type=Double(3, 3, strides=[3, 1], requires_grad=0, device=cpu)](%e)
  %c : Tensor = aten::cos(%p)
  %d : Tensor = aten::exp(%c)
  %f : Tensor = aten::mul(%d, %q)
  return (%f)
"""),
    # A profile recorded under another context (e.g. no_grad) is ignored.
    "profile_in_other_context": _case("""  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::sin(%a)
  %en : Any = prim::Enter(%y)
  %p : Tensor = prim::profile[profiled_type=Double(3, 3, strides=[3, 1], requires_grad=0, device=cpu)](%b)
  %c : Tensor = aten::cos(%p)
  %ex : Any = prim::Exit(%y)
  %p2 : Tensor = prim::profile[profiled_type=Double(3, 3, strides=[3, 1], requires_grad=1, device=cpu)](%b)
  %d : Tensor = aten::exp(%p2)
  %e : Tensor = aten::mul(%d, %c)
  return (%e)
"""),
    # Values used after a side effect must stay group outputs.
    "outputs_used_after_print": _case("""  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::cos(%a)
  %c : Tensor = aten::exp(%b)
   = prim::Print(%c)
  %d : Tensor = aten::mul(%a, %b)
  %e : Tensor = aten::tanh(%d)
  return (%e)
"""),
}


_UNARY = ("sin", "cos", "exp", "tanh", "sigmoid", "relu", "neg", "t")
_BINARY = ("add", "mul", "sub")


def random_case(seed: int, length: int = 12, common_ops_only: bool = False) -> str:
    """A random chain of 3x3 tensor ops mixing differentiable ops, views,
    prints, in-place writes, ops torch cannot differentiate and ``if`` blocks.

    ``common_ops_only`` leaves out the ops gradview and torch disagree on
    (view with its size list, zeros_like, select)."""
    import random

    rng = random.Random(seed)
    values = ["%x", "%y"]
    lines: list[str] = []
    counter = 0

    def fresh() -> str:
        nonlocal counter
        counter += 1
        return f"%v{counter}"

    def emit(indent: str, pool: list[str]) -> None:
        pick = rng.random()
        if common_ops_only and 0.68 <= pick < 0.8:
            pick = rng.uniform(0.8, 0.91)
        elif common_ops_only and pick >= 0.91:
            pick = rng.uniform(0.0, 0.68)
        a, b = rng.choice(pool), rng.choice(pool)
        out = fresh()
        if pick < 0.35:
            lines.append(f"{indent}{out} : Tensor = aten::{rng.choice(_UNARY)}({a})")
        elif pick < 0.6:
            op = rng.choice(_BINARY)
            extra = ", %one" if op in ("add", "sub") else ""
            lines.append(f"{indent}{out} : Tensor = aten::{op}({a}, {b}{extra})")
        elif pick < 0.68:
            lines.append(f"{indent}{out} : Tensor = aten::transpose({a}, %zero, %one)")
        elif pick < 0.74:
            lines.append(f"{indent}{out} : Tensor = aten::view({a}, %sizes)")
        elif pick < 0.8:
            lines.append(f"{indent}{out} : Tensor = aten::zeros_like({a}, %none, %none, %none, %none, %none)")
        elif pick < 0.85:
            lines.append(f"{indent} = prim::Print({a})")
            return
        elif pick < 0.91:
            lines.append(f"{indent}{out} : Tensor = aten::add_({a}, {b}, %one)")
        else:
            sel = fresh()
            lines.append(f"{indent}{sel} : Tensor = aten::select({a}, %zero, %one)")
            lines.append(f"{indent}{out} : Tensor = aten::mul({b}, {sel})")
        pool.append(out)

    for _ in range(length):
        if rng.random() < 0.1:
            out = fresh()
            lines.append(f"  {out} : Tensor = prim::If(%flag)")
            for index in range(2):
                lines.append(f"    block{index}():")
                inner = list(values)
                for _ in range(rng.randint(0, 3)):
                    emit("      ", inner)
                # A fresh result: gradview's AliasDb joins everything an if
                # may return into one alias set (see the test module).
                result = fresh()
                lines.append(f"      {result} : Tensor = aten::neg({rng.choice(inner)})")
                lines.append(f"      -> ({result})")
            values.append(out)
        else:
            emit("  ", values)
    outputs = rng.sample(values[2:] or values, k=min(2, len(values) - 2) or 1)
    sizes = "" if common_ops_only else "  %sizes : int[] = prim::ListConstruct(%three, %three)\n"
    return HEAD + sizes + "\n".join(lines) + (
        f"\n  return ({', '.join(outputs)})\n"
    )


# Every graph the tests slice: corpus, hand-written cases, random chains
# (some limited to ops gradview and torch agree on).
GRAPHS: dict[str, str] = {
    **{path.stem: path.read_text() for path in ROUNDTRIP},
    **CASES,
    **{f"random_{seed}": random_case(seed, 14) for seed in range(60)},
    **{f"random_common_{seed}": random_case(seed, 14, common_ops_only=True) for seed in range(40)},
}
