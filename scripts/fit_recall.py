"""The recall decision (its floor, when it asks for the agent's search) chosen by owner, held out one at a time.

    .venv/bin/python scripts/fit_recall.py --root MIRROR [--candidates eval/fits/recall-candidates.toml]
        [--save eval/fits/recall.json]
    .venv/bin/python scripts/fit_recall.py --figures eval/fits/recall.json     # choose again from saved figures

Each candidate is a set of rules/recall.toml values laid over the shipped ones (`gate replay --rules`). The dev
split's delivery labels are replayed once per candidate, with the agent-written queries (`--queries`): the
figures are the hook's delivery with the agent's search only where the gate asked for one ("asked",
gate/replay/queries.py), summed by owner family (the corpus folder's name before "+"). Only aggregate counts
are saved (no text of the sessions).

The choice, the same for every fold: among the candidates whose asks per 100 prompts and injected precision
are no worse than the shipped rules' (within `PRECISION_ROOM`), the one that brings the most expected memories
in full at a prompt; the shipped rules when none brings more. Leave-one-owner-out: each owner's figures come
from the candidate chosen on the other owners. The rules that ship are the choice on every owner of dev, which
tests/test_fit_recall.py checks against rules/recall.toml and the saved figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CANDIDATES = REPO / "eval" / "fits" / "recall-candidates.toml"
FIGURES = REPO / "eval" / "fits" / "recall.json"
LABELS = REPO / "eval" / "labels" / "dev" / "delivery.jsonl"
QUERIES = REPO / "eval" / "annotations" / "queries" / "Q4" / "dev.jsonl"
PRECISION_ROOM = 0.005  # a precision this much lower is the same precision (one memory in ~200 shown)
# Summed per owner: asks, prompts replayed, then the "asked" counts (gate/replay/queries.py ASKED_SESSION_KEYS).
KEYS = ("asks", "prompts", "expected", "reached_at_prompt", "shown", "shown_relevant", "noise")


def owner_family(transcript: str, root: str) -> str:
    relative = os.path.relpath(transcript, root) if os.path.isabs(transcript) else transcript
    return relative.replace(os.sep, "/").split("/")[0].split("+")[0]


def measure(candidate: dict[str, Any], root: Path, queries: Path = QUERIES) -> dict[str, dict[str, int]]:
    """One replay of the dev delivery labels under `candidate`'s values: the counts of KEYS per owner family."""
    import tomli_w

    with tempfile.TemporaryDirectory(prefix="gate-fit-recall-") as home:
        overlay = Path(home) / "rules"
        overlay.mkdir()
        (overlay / "recall.toml").write_text(tomli_w.dumps(candidate), encoding="utf-8")
        env = {**os.environ, "GATE_HOME": home, "HOME": home}
        done = subprocess.run(
            [sys.executable, "-m", "gate.cli", "replay", "--labels", str(LABELS), "--queries", str(queries),
             "--root", str(root), "--rules", str(overlay), "--json", "--quiet"],
            env=env, cwd=home, capture_output=True, text=True, check=True)
    sessions = json.loads(done.stdout)["scores"]["queries"]["by_session"]
    out: dict[str, dict[str, int]] = {}
    for transcript, counts in sessions.items():
        row = out.setdefault(owner_family(transcript, str(root)), dict.fromkeys(KEYS, 0))
        for key, value in zip(KEYS, [counts["asks"], counts["prompts"], *counts["asked"]], strict=True):
            row[key] += value
    return out


def summed(figures: dict[str, dict[str, int]], owners: list[str]) -> dict[str, int]:
    return {key: sum(figures[o][key] for o in owners if o in figures) for key in KEYS}


def rates(counts: dict[str, int]) -> dict[str, float]:
    def ratio(a: int, b: int) -> float:
        return round(a / b, 3) if b else 0.0

    return {"at_prompt": ratio(counts["reached_at_prompt"], counts["expected"]),
            "precision": ratio(counts["shown_relevant"], counts["shown"]),
            "asks_per_100": round(100 * counts["asks"] / counts["prompts"], 1) if counts["prompts"] else 0.0,
            "noise": counts["noise"]}


def choose(figures: dict[str, dict[str, dict[str, int]]], owners: list[str]) -> str:
    """The candidate chosen on `owners` (see the module doc). "shipped" must be among the candidates."""
    shipped = rates(summed(figures["shipped"], owners))
    best, best_key = "shipped", (shipped["at_prompt"], -shipped["asks_per_100"])
    for name, by_owner in figures.items():
        r = rates(summed(by_owner, owners))
        if r["asks_per_100"] > shipped["asks_per_100"] or r["precision"] < shipped["precision"] - PRECISION_ROOM:
            continue
        key = (r["at_prompt"], -r["asks_per_100"])
        if key > best_key:
            best, best_key = name, key
    return best


def leave_one_owner_out(figures: dict[str, dict[str, dict[str, int]]]) -> dict[str, Any]:
    owners = sorted({o for by_owner in figures.values() for o in by_owner})
    held: dict[str, int] = dict.fromkeys(KEYS, 0)
    folds = {}
    for owner in owners:
        chosen = choose(figures, [o for o in owners if o != owner])
        folds[owner] = chosen
        for key in KEYS:
            held[key] += figures[chosen].get(owner, dict.fromkeys(KEYS, 0))[key]
    return {"folds": folds, "held_out": rates(held), "shipped": rates(summed(figures["shipped"], owners)),
            "chosen_on_all": choose(figures, owners)}


def report(figures: dict[str, dict[str, dict[str, int]]]) -> None:
    owners = sorted({o for by_owner in figures.values() for o in by_owner})
    print("candidate figures (hook + the agent's search where the gate asked): at a prompt / precision / asks "
          "per 100 prompts")
    for name, by_owner in figures.items():
        cells = [rates(summed(by_owner, owners))] + [rates(summed(by_owner, [o])) for o in owners]
        print(f"  {name:24} all {cells[0]['at_prompt']:.3f} / {cells[0]['precision']:.3f} / "
              f"{cells[0]['asks_per_100']:.0f}  | " + "  ".join(
                  f"{o[:12]} {c['at_prompt']:.3f} / {c['precision']:.3f} / {c['asks_per_100']:.0f}"
                  for o, c in zip(owners, cells[1:], strict=True)))
    result = leave_one_owner_out(figures)
    print(f"leave-one-owner-out choices: {result['folds']}")
    print(f"held out: {result['held_out']}  (the shipped rules on the same owners: {result['shipped']})")
    print(f"chosen on all of dev: {result['chosen_on_all']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, help="the corpus mirror (scripts/corpus/mirror.py --out)")
    parser.add_argument("--candidates", type=Path, default=CANDIDATES)
    parser.add_argument("--figures", type=Path, help="choose from these saved figures instead of replaying")
    parser.add_argument("--save", type=Path, help="save the measured figures here (e.g. eval/fits/recall.json)")
    parser.add_argument("--queries", type=Path, default=QUERIES,
                        help="one annotator's queries of every dev delivery prompt (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.figures:
        figures = json.loads(args.figures.read_text(encoding="utf-8"))["figures"]
    else:
        if args.root is None:
            parser.error("--root MIRROR is needed to replay (or --figures FILE)")
        candidates = tomllib.loads(args.candidates.read_text(encoding="utf-8"))["candidate"]
        figures = {}
        for item in candidates:
            name = item.pop("name")
            print(f"replaying {name} …", file=sys.stderr, flush=True)
            figures[name] = measure(item, args.root, args.queries)
        if args.save:
            args.save.write_text(json.dumps({"labels": "eval/labels/dev/delivery.jsonl",
                                             "queries": args.queries.resolve().relative_to(REPO).as_posix(),
                                             "figures": figures}, indent=1, sort_keys=True) + "\n",
                                 encoding="utf-8")
    if "shipped" not in figures:
        raise SystemExit("fit_recall: the candidates need one named \"shipped\" (no values: the rules as they are)")
    report(figures)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
