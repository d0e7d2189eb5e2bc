"""Several model folders read beside the shipped ones on a training round's sets, in one run,
each through the round's gate (``training.round_report``).

Run: ``python benchmarks/compare_models.py --realdata REALDATA --work W NAME=DIR [NAME=DIR ...]
[--set NAME:SETTING=VALUE ...]``

``--set`` reads the folder ``NAME`` with a reader setting changed (as ``handreader eval --set``);
``NAME=models`` with settings compares the shipped models read two ways. ``--as-well`` gates
models meant to read as well as the shipped ones, not better (a smaller, faster classifier): no
set need be better, and none may be worse beyond its tolerance.

The sets are those of ``handreader train --round`` (the valid splits of the real folders,
400 held-out and 200 casino held-out scenes, 200 card-free casino tables, local-letter crops),
drawn in ``W`` once (a rerun reuses them). Every folder is read on the same images in the same
order; ``W/compare/report.md`` and ``W/compare/report.json`` (``--out``) hold the figures and
each folder's verdict against ``--models`` (the shipped models by default); a round's own
``W/report.md`` is left as it is.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from handreader.cli.eval import changed_settings  # noqa: E402
from training.round import RoundPlan, _eval_sets, log  # noqa: E402
from training.round_report import GateVerdict, evaluate_models, gate, write_report  # noqa: E402
from vision.settings import ReaderSettings  # noqa: E402


def judge(
    figures: dict[str, dict[str, Any]], names: Iterable[str], as_well: bool = False
) -> dict[str, GateVerdict]:
    """Each of ``names``' figures through the gate against ``figures["shipped"]``: better on the
    targeted sets, or with ``as_well`` only no worse anywhere than the tolerance."""
    return {name: gate(figures["shipped"], figures[name], improve=not as_well) for name in names}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", metavar="NAME=DIR", help="model folders to read")
    parser.add_argument("--realdata", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--models", type=Path, default=ROOT / "models")
    parser.add_argument("--out", type=Path, help="the report's folder (default W/compare)")
    parser.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="NAME:SETTING=VALUE",
        help="read the folder NAME with a reader setting changed; may be repeated",
    )
    parser.add_argument(
        "--as-well",
        action="store_true",
        help="the folders are meant to read as well as the shipped models, not better "
        "(a faster classifier): no set need be better, none may be worse beyond its tolerance",
    )
    args = parser.parse_args()
    candidates = {}
    for item in args.folders:
        name, _, folder = item.partition("=")
        if not folder or not (Path(folder) / "manifest.json").is_file():
            parser.error(f"{item!r}: expected NAME=DIR, DIR holding a manifest.json")
        candidates[name] = Path(folder)
    changes: dict[str, list[str]] = {}
    for item in args.settings:
        name, _, assignment = item.partition(":")
        if name not in candidates or not assignment:
            parser.error(f"--set {item!r}: expected NAME:SETTING=VALUE, NAME one of the folders")
        changes.setdefault(name, []).append(assignment)
    try:
        settings = {
            name: changed_settings(ReaderSettings(), assignments)
            for name, assignments in changes.items()
        }
    except ValueError as error:
        parser.error(str(error))
    plan = RoundPlan(work_dir=args.work, realdata=args.realdata, shipped_models=args.models)
    args.work.mkdir(parents=True, exist_ok=True)
    manifests, tables, local = _eval_sets(plan)
    figures = evaluate_models(
        {"shipped": args.models, **candidates},
        args.realdata,
        manifests,
        tables,
        local,
        log=log,
        settings=settings,
    )
    verdicts = judge(figures, candidates, args.as_well)
    summary = GateVerdict(
        any(verdict.promote for verdict in verdicts.values()),
        tuple(f"{name}: {reason}" for name, v in verdicts.items() for reason in v.reasons),
    )
    write_report(args.out or args.work / "compare", figures, summary, plan.plain(), {
        "verdicts": {name: {"promote": v.promote, "reasons": list(v.reasons)}
                     for name, v in verdicts.items()},
        "folders": {name: str(folder) for name, folder in candidates.items()},
        "settings": changes,
        "as_well": args.as_well,
    })  # fmt: skip
    print(json.dumps({name: v.promote for name, v in verdicts.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
