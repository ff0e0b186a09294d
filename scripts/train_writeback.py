"""Learn the write-back score's weights from the labelled dev split (a small logistic regression, plain Python).

    python scripts/train_writeback.py --labels eval/labels/dev/writeback.jsonl --root MIRROR [--write FILE]

Replays the labelled sessions with the current rules (`gate replay`'s own code), takes each labelled turn's
features (phrase evidence and every structural signal, read as the write-back gate reads the turn), and
fits an L2-regularised logistic regression on the turns no veto holds for (a vetoed turn never blocks,
whatever it scores). Classes are weighted to balance (few turns should block). The threshold is the one with
the best F-beta on the dev split (beta 0.5 by default: precision counts double, a false block costs the user).
Prints leave-one-owner-out figures (each owner's turns scored by a model fitted on the others), then the
weights as a TOML table to paste into rules/writeback.toml [score] / [score.weights], or writes them (--write).
The reminder's threshold (remind_threshold: not blocked, reminded at the next prompt) is the one with the
best F-beta at --remind-beta (2 by default: a reminder costs the user little, a miss loses the knowledge),
at most the block threshold. Turns a deferring veto holds (remind_vetoes: asks_user, unconfirmed_fix …) are
vetoed for the block and counted apart: the reminder takes them.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any


def collect(labels_path: str, root: str | None) -> list[tuple[str, dict[str, float], bool]]:
    """(owner, features, should block) for every labelled turn that the replay reached."""
    with tempfile.TemporaryDirectory() as home:
        os.environ["GATE_HOME"] = home
        from gate.paths import ProjectPaths
        from gate.replay.labels import load_labels
        from gate.replay.run import replay_all

        labels = load_labels(labels_path, root)
        project = os.path.join(home, "project")
        os.makedirs(os.path.join(project, ".git"))
        replay = replay_all(labels.transcripts, ProjectPaths.for_cwd(project), None, labels)
        rows = []
        for (transcript, turn), (block, _kind) in sorted(labels.block.items()):
            run = replay.runs.get(transcript)
            if run is None:
                continue
            stop = next((r for r in run.results if r.step.name == "Stop" and r.step.turn == turn), None)
            if stop is None:
                continue
            folder = os.path.relpath(transcript, root or os.path.dirname(labels_path)).split(os.sep)[0]
            rows.append((family(folder), features_at(transcript, stop.step), block))
        return rows


def family(folder: str) -> str:
    """The owner a corpus folder belongs to (OWNER+REPO): the unit left out in leave-one-owner-out, so one
    organization's repositories (entireio+cli, entireio+git-sync, …) are one owner, as they are one split."""
    return folder.split("+", 1)[0]


def features_at(transcript: str, step: Any) -> dict[str, float]:
    """Every feature of the turn a Stop step ends, as the gate reads it (all signals, weighed or not: the hook
    itself computes only the ones its weights use)."""
    from gate.gates.writeback.evidence import find_evidence
    from gate.gates.writeback.signals import turn_signals
    from gate.rules import load_rules
    from gate.session.transcript import read_turn

    rules = load_rules("writeback")
    last = step.event.get("last_assistant_message")
    turn = read_turn(transcript, last if isinstance(last, str) else None, end=step.end, previous_reply=True)
    return {**find_evidence(turn, rules).features, **turn_signals(turn, rules)}


def synthetic(directory: Path) -> list[tuple[str, dict[str, float], bool]]:
    """The product's own labelled Stop turns (tests/data/stop_turns): behaviours the gate must keep, learned
    alongside the real sessions so the weights cannot trade them away."""
    import tomllib

    from gate.gates.writeback.evidence import find_evidence
    from gate.gates.writeback.signals import turn_signals
    from gate.rules import load_rules
    from gate.session.transcript import read_turn

    rules = load_rules("writeback")
    rows = []
    for item in tomllib.loads((directory / "labels.toml").read_text(encoding="utf-8"))["turn"]:
        turn = read_turn(str(directory / item["file"]), previous_reply=True)
        features = {**find_evidence(turn, rules).features, **turn_signals(turn, rules)}
        rows.append(("synthetic", features, item["label"] == "block"))
    return rows


def vetoed(features: dict[str, float], rules: Any) -> bool:
    from gate.gates.writeback.verdict import decide

    return bool(decide(features, {"score": {**rules.get("score", {}), "weights": {}}}).veto)


def holding(features: dict[str, float], rules: Any) -> list[str]:
    """The vetoes that hold for a turn (lifted ones left out)."""
    score_rules = rules.get("score", {})
    lifted = score_rules.get("veto_lifted_by", {})
    return [v for v in score_rules.get("vetoes", []) if features.get(v)
            and not any(features.get(other) for other in lifted.get(v, []))]


def fit(rows: list[tuple[dict[str, float], bool]], names: list[str], l2: float, steps: int = 3000) -> list[float]:
    """Weights [bias, w1, …] by gradient descent on the class-balanced log loss."""
    positives = sum(1 for _, y in rows if y) or 1
    negatives = (len(rows) - positives) or 1
    weight_pos, weight_neg = len(rows) / (2 * positives), len(rows) / (2 * negatives)
    w = [0.0] * (len(names) + 1)
    rate = 0.1
    for _ in range(steps):
        grad = [0.0] * len(w)
        for features, y in rows:
            x = [1.0] + [features.get(n, 0.0) for n in names]
            z = sum(wi * xi for wi, xi in zip(w, x, strict=True))
            p = 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))
            g = (p - (1.0 if y else 0.0)) * (weight_pos if y else weight_neg)
            for i, xi in enumerate(x):
                grad[i] += g * xi
        for i in range(len(w)):
            penalty = l2 * w[i] if i else 0.0
            w[i] -= rate * (grad[i] / len(rows) + penalty)
    return w


def score(w: list[float], names: list[str], features: dict[str, float]) -> float:
    return w[0] + sum(wi * features.get(n, 0.0) for wi, n in zip(w[1:], names, strict=True))


def counts(pairs: list[tuple[bool, bool]]) -> tuple[int, int, int, int]:
    tp = sum(1 for e, p in pairs if e and p)
    fp = sum(1 for e, p in pairs if p and not e)
    fn = sum(1 for e, p in pairs if e and not p)
    return tp, fp, fn, len(pairs) - tp - fp - fn


def f_beta(tp: int, fp: int, fn: int, beta: float) -> float:
    b2 = beta * beta
    return (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp) if tp else 0.0


def best_threshold(scored: list[tuple[float, bool]], beta: float) -> float:
    candidates = sorted({s for s, _ in scored})
    best, best_f = 0.0, -1.0
    for t in candidates:
        tp, fp, fn, _ = counts([(y, s >= t) for s, y in scored])
        f = f_beta(tp, fp, fn, beta)
        if f > best_f:
            best, best_f = t, f
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", required=True)
    parser.add_argument("--root", default=None)
    parser.add_argument("--l2", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.5)
    parser.add_argument("--remind-beta", type=float, default=2.0)
    parser.add_argument("--write", type=Path, help="write the learned [score] tables to this TOML file")
    parser.add_argument("--with-unit-turns", type=Path, metavar="DIR",
                        help="also learn from a labelled set of the product's own (tests/data/stop_turns)")
    parser.add_argument("--unit-weight", type=int, default=1, help="how many times each of those turns counts")
    args = parser.parse_args(argv)

    from gate.rules import load_rules

    rows = collect(args.labels, args.root)
    if args.with_unit_turns:
        rows += synthetic(args.with_unit_turns) * args.unit_weight
    rules = load_rules("writeback")
    live = [(owner, f, y) for owner, f, y in rows if not vetoed(f, rules)]
    vetoes = rules.get("score", {}).get("vetoes", [])
    names = sorted({n for _, f, _ in live for n in f if n not in vetoes})
    print(f"{len(rows)} labelled turns ({sum(y for *_, y in rows)} should block); {len(live)} not vetoed; "
          f"features: {', '.join(names)}")

    owners = sorted({o for o, *_ in live})
    held: list[tuple[bool, bool]] = []
    for owner in owners:
        train = [(f, y) for o, f, y in live if o != owner]
        w = fit(train, names, args.l2)
        threshold = best_threshold([(score(w, names, f), y) for f, y in train], args.beta)
        held += [(y, score(w, names, f) >= threshold) for o, f, y in live if o == owner]
    held += [(y, False) for _, f, y in rows if vetoed(f, rules)]
    tp, fp, fn, tn = counts(held)
    print(f"leave-one-owner-out: precision {tp / (tp + fp) if tp + fp else float('nan'):.2f} "
          f"recall {tp / (tp + fn) if tp + fn else float('nan'):.2f} (tp={tp} fp={fp} fn={fn} tn={tn})")

    w = fit([(f, y) for _, f, y in live], names, args.l2)
    threshold = best_threshold([(score(w, names, f), y) for _, f, y in live], args.beta)
    tp, fp, fn, tn = counts([(y, score(w, names, f) >= threshold) for _, f, y in live]
                            + [(y, False) for _, f, y in rows if vetoed(f, rules)])
    print(f"fitted on all of dev: precision {tp / (tp + fp) if tp + fp else float('nan'):.2f} "
          f"recall {tp / (tp + fn) if tp + fn else float('nan'):.2f} (tp={tp} fp={fp} fn={fn} tn={tn})")
    scored = [(score(w, names, f), y) for _, f, y in live]
    remind = min(threshold, best_threshold(scored, args.remind_beta))
    deferring = set(rules.get("score", {}).get("remind_vetoes", []))
    deferred = [y for _, f, y in rows if vetoed(f, rules) and set(holding(f, rules)) <= deferring]
    print(f"remind_threshold {remind:.3f}; a deferring veto holds for {len(deferred)} turns "
          f"({sum(deferred)} should block): the reminder takes them")
    lines = ["[score]", f"threshold = {round(threshold, 3)}", f"remind_threshold = {round(remind, 3)}", "",
             "[score.weights]", f"bias = {round(w[0], 3)}"]
    lines += [f"{n} = {round(wi, 3)}" for n, wi in zip(names, w[1:], strict=True)]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        args.write.write_text("# learned by scripts/train_writeback.py from the dev split\n" + text)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.exit(main())
