"""Runs the op_db sweep and prints what fails, grouped (``python -m tests.ops.op_db_report``).

``--samples N`` keeps the first N samples of each OpInfo; ``--only a,b`` the
OpInfos named; ``--json FILE`` writes one record per case.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import time

from ..autodiff.opinfo_cases import Case, op_label
from .op_db_cases import SweepFailure, check_case, op_samples, sweep_ops


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=None)
    parser.add_argument("--only", default="")
    parser.add_argument("--json", default="")
    args = parser.parse_args(argv)
    only = set(filter(None, args.only.split(",")))
    records = []
    for op in sweep_ops():
        label = op_label(op)
        if only and label not in only and op.name not in only:
            continue
        try:
            samples = op_samples(op, args.samples)
        except Exception as error:
            records.append({"case": f"{label}-samples", "op": label, "stage": "samples", "message": str(error)[:200]})
            continue
        for index, sample in enumerate(samples):
            case = Case(op, index, sample)
            start = time.perf_counter()
            record = {"case": case.case_id, "op": label, "stage": "ok", "message": ""}
            try:
                check_case(case)
            except SweepFailure as failure:
                record.update(stage=failure.stage, message=failure.message)
            except Exception as error:
                record.update(stage="harness", message=f"{type(error).__name__}: {error}"[:300])
            record["seconds"] = round(time.perf_counter() - start, 3)
            records.append(record)
            print(f"{record['case']}\t{record['stage']}\t{record['message'][:160]}", flush=True)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(records, handle, indent=0)
    by_stage = collections.Counter(r["stage"] for r in records)
    print("\n", dict(by_stage), f"{len(records)} cases, {sum(r.get('seconds', 0) for r in records):.0f} s")
    missing = collections.Counter()
    for r in records:
        found = re.search(r"unknown operator '?([\w:.]+)", r["message"]) or re.search(r"no kernel for ([\w:.]+)", r["message"])
        if found:
            missing[found.group(1)] += 1
    print(len(missing), "missing kernels:", " ".join(sorted(missing)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
