"""The gate-quality figures of docs/quality.md, measured once and written from that one run.

    .venv/bin/python scripts/quality.py --root MIRROR            # replay dev and test, save the run, write the doc
    .venv/bin/python scripts/quality.py --root MIRROR --check    # replay, and fail if the run or the doc differ
    PYTHONPATH=OLD_CHECKOUT .venv/bin/python scripts/quality.py --root MIRROR --out eval/quality/before.json
                                                                 # the "before" column: another checkout's code

MIRROR is the corpus laid out as transcripts (`scripts/corpus/mirror.py --out MIRROR`); without --root the
mirror is built from ../shared/corpora into a temporary directory. Each split (eval/labels/dev, eval/labels/test)
is replayed once with its three label files together (write-back, delivery, shift), in a throwaway GATE_HOME, as
`gate replay --labels … --labels … --labels …` does. Only aggregate figures are kept (eval/quality/run.json): no
text of the sessions. docs/quality.md's gate-quality tables are rendered from that file and eval/quality/before.json
between the `quality-figures` markers; tests/test_labelled_sets.py checks that the doc is that rendering, and, where
the corpus is at hand, that today's code still measures exactly the saved run and keeps the floors.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
LABELS = REPO / "eval" / "labels"
RUN_FILE = REPO / "eval" / "quality" / "run.json"
BEFORE_FILE = REPO / "eval" / "quality" / "before.json"
DOC = REPO / "docs" / "quality.md"
CORPUS = REPO.parent / "shared" / "corpora"
SPLITS = ("dev", "test", "test-added")  # test-added: the owners issue 43 added to the test split
LABEL_FILES = ("writeback", "delivery", "shift")
BEGIN = "<!-- quality-figures: begin (written by scripts/quality.py from eval/quality/run.json; do not edit) -->"
END = "<!-- quality-figures: end -->"

WRITEBACK_KEYS = ("n", "tp", "fp", "fn", "tn", "precision", "recall", "recall_blocked_or_reminded",
                  "false_block_rate", "blocks_per_100_turns", "reminders_per_100_turns",
                  "reminders_on_ordinary_per_100_turns", "deferred_not_reminded", "long_sessions",
                  "long_sessions_with_false_block")
SHIFT_KEYS = ("n", "tp", "fp", "fn", "tn", "precision", "recall")
QUERIES = REPO / "eval" / "annotations" / "queries"  # <annotator>/<split>.jsonl: agent-written queries
QUERY_KEYS = ("expected", "reached_at_prompt", "recall_at_prompt", "shown", "shown_relevant", "precision", "noise",
              "noise_prompts")
DELIVERY_KEYS = ("expected", "reached", "recall", "recall_prompt_time", "recall_session_start", "recall_index_only",
                 "injected", "injected_relevant", "injected_precision", "noise", "noise_prompts", "leaks",
                 "leaks_measured")


def aggregates(scores: dict[str, Any]) -> dict[str, Any]:
    """What a split's scores say in figures alone (the wrong cases quote the sessions: they stay out). A split
    without labels of a kind (the owners added in issue 43 have no delivery labels yet) has no figures of it."""
    out: dict[str, Any] = {}
    if "writeback" in scores:
        out["writeback"] = {k: scores["writeback"][k] for k in WRITEBACK_KEYS}
    if "recall_shift" in scores:
        out["shift"] = {k: scores["recall_shift"][k] for k in SHIFT_KEYS}
        out["shift_verdict"] = {k: scores["shift_verdict"][k] for k in SHIFT_KEYS}
    if "delivery" in scores:
        delivery = scores["delivery"]
        out["delivery"] = {k: delivery[k] for k in DELIVERY_KEYS} | {"by_language": {
            language: {k: figures[k] for k in ("expected", "reached", "recall", "recall_prompt_time")}
            for language, figures in delivery["by_language"].items()}}
    out["unmatched"] = len(scores["unmatched"])
    return out


def _replay(labels: Any, queries: Any = None) -> Any:
    """Replay the labelled sessions with the current code and rules, in a throwaway project (gate's state goes to
    the GATE_HOME main() set)."""
    from gate.paths import ProjectPaths
    from gate.replay.run import replay_all

    with tempfile.TemporaryDirectory(prefix="gate-quality-") as scratch:
        project = Path(scratch) / "project"
        (project / ".git").mkdir(parents=True)
        paths = ProjectPaths.for_cwd(project)
        if queries is None:  # an older checkout's replay_all (the "before" column) takes no queries
            return replay_all(labels.transcripts, paths, None, labels)
        return replay_all(labels.transcripts, paths, None, labels, queries=queries)


def measure_split(root: Path, split: str) -> dict[str, Any]:
    """Replay one split's labelled sessions with the current code and rules; its aggregate figures, with their
    intervals (an older checkout's score has no by_session: no intervals)."""
    from gate.replay.labels import load_labels, merged, score

    labels = merged([load_labels(str(path), str(root)) for path in _label_files(split)])
    replay = _replay(labels)
    scores = score(labels, replay.runs, replay.store_ids)
    out = aggregates(scores)
    if "by_session" in scores:
        out["intervals"] = intervals(scores["by_session"])
        out["behind"] = behind(scores["by_session"], root)
        codex = {name: c for name, c in scores["by_session"].items()
                 if getattr(replay.runs[name].timeline, "agent", "") == "codex"}
        if codex:
            out["codex"] = codex_figures(codex)
    return out


def codex_figures(by_session: dict[str, dict[str, list[int]]]) -> dict[str, Any]:
    """The split's Codex CLI sessions apart (issue 45): their turns and prompts, and the headline figures on them."""
    total: dict[str, list[int]] = {}
    for session in by_session.values():
        for name, values in session.items():
            total[name] = [a + b for a, b in zip(total.get(name, [0] * len(values)), values, strict=True)]
    figures = {name: None if value is None else round(value, 3) for name, value in _figures(total).items()}
    return {"sessions": len(by_session), "turns": sum(total["block"]), "should_block": total["block"][0] +
            total["block"][2], "prompts": sum(total["shift"]), **figures}


# The headline figures, each from one session's counts summed over sessions (gate/replay/labels.py's by_session:
# block, either (blocked or reminded) and shift as tp, fp, fn, tn; delivery as SESSION_DELIVERY_KEYS).
def _figures(total: dict[str, list[int]]) -> dict[str, float | None]:
    def ratio(part: int, whole: int) -> float | None:
        return part / whole if whole else None

    tp, fp, fn, tn = total["block"]
    either_tp, _, either_fn, _ = total["either"]
    shift_tp, shift_fp, shift_fn, _ = total["shift"]
    expected, reached, at_prompt, injected, relevant = total["delivery"]
    return {
        "writeback_precision": ratio(tp, tp + fp), "writeback_recall": ratio(tp, tp + fn),
        "false_block_rate": ratio(fp, fp + tn), "recall_blocked_or_reminded": ratio(either_tp, either_tp + either_fn),
        "delivery_recall": ratio(reached, expected), "recall_prompt_time": ratio(at_prompt, expected),
        "injected_precision": ratio(relevant, injected),
        "shift_precision": ratio(shift_tp, shift_tp + shift_fp), "shift_recall": ratio(shift_tp, shift_tp + shift_fn),
    }


FIGURES = ("writeback_precision", "writeback_recall", "false_block_rate", "recall_blocked_or_reminded",
           "delivery_recall", "recall_prompt_time", "injected_precision", "shift_precision", "shift_recall")
BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 43  # fixed: the same run gives the same intervals, so --check can compare them


def intervals(by_session: dict[str, dict[str, list[int]]]) -> dict[str, list[float] | None]:
    """A 95 % interval for each headline figure: the sessions resampled with replacement (a session's turns and
    prompts are not independent of each other, so the session is the unit), the 2.5th and 97.5th percentiles."""
    import random

    sessions = [by_session[name] for name in sorted(by_session)]
    chance = random.Random(BOOTSTRAP_SEED)
    draws: dict[str, list[float]] = {}
    for _ in range(BOOTSTRAP_SAMPLES):
        total: dict[str, list[int]] = {}
        for session in chance.choices(sessions, k=len(sessions)):
            for name, values in session.items():
                total[name] = [a + b for a, b in zip(total.get(name, [0] * len(values)), values, strict=True)]
        for name, value in _figures(total).items():
            if value is not None:
                draws.setdefault(name, []).append(value)
    out: dict[str, list[float] | None] = {}
    for name in FIGURES:
        values = sorted(draws.get(name, []))
        if len(values) < BOOTSTRAP_SAMPLES // 2:  # a figure most resamples cannot compute (no case of its kind)
            out[name] = None
            continue
        low, high = values[int(0.025 * (len(values) - 1))], values[int(0.975 * (len(values) - 1))]
        out[name] = [round(low, 3), round(high, 3)]
    return out


def behind(by_session: dict[str, dict[str, list[int]]], root: Path) -> dict[str, int]:
    """How much evidence a split's figures stand on: its sessions, corpus folders and owners (an owner family:
    entireio+* is one), and the owners its should-block turns come from."""
    def owner(transcript: str) -> str:
        path = Path(transcript)
        return (path.relative_to(root) if path.is_relative_to(root) else path).parts[0]

    def family(transcript: str) -> str:  # entireio+cli and entireio+skills: one owner
        return owner(transcript).split("+", 1)[0]

    blocking = {name for name, c in by_session.items() if c["block"][0] + c["block"][2]}
    return {"sessions": len(by_session), "folders": len({owner(name) for name in by_session}),
            "owners": len({family(name) for name in by_session}),
            "should_block": sum(c["block"][0] + c["block"][2] for c in by_session.values()),
            "should_block_owners": len({family(name) for name in blocking})}


def _stores(split: str) -> int:
    """How many delivery stores a split's labels name."""
    lines = (LABELS / split / "delivery.jsonl").read_text(encoding="utf-8").splitlines()
    return sum(1 for line in lines if line.strip() and "store" in json.loads(line))


def _label_files(split: str) -> list[Path]:
    return [path for name in LABEL_FILES if (path := LABELS / split / f"{name}.jsonl").is_file()]


def measure_queries(root: Path, split: str) -> dict[str, Any]:
    """Each annotator's agent-written queries of a split (top 3 of plain `gate search` at each prompt), scored on
    the split's delivery labels: one replay of the delivery sessions per annotator (gate/replay/queries.py)."""
    from gate.replay.labels import load_labels

    try:
        from gate.replay.queries import load_queries, score_queries
    except ImportError:  # an older checkout (the "before" column) scores no agent queries: its cells read —
        return {}

    out: dict[str, Any] = {}
    labels = load_labels(str(LABELS / split / "delivery.jsonl"), str(root))
    for path in sorted(QUERIES.glob(f"*/{split}.jsonl")):
        queries = load_queries(str(path), str(root))
        replay = _replay(labels, queries)
        scores = score_queries(labels, replay.runs, queries)
        out[path.parent.name] = {"agent": {k: scores["agent"][k] for k in QUERY_KEYS},
                                 "unmatched": len(scores["unmatched"])}
        if "asked" in scores:  # (an older checkout scores no "asked" row)
            out[path.parent.name] |= {"asked": {k: scores["asked"][k] for k in QUERY_KEYS},
                                      "asks": scores["asks"], "prompts_replayed": scores["prompts_replayed"]}
    return out


def measure_padded(root: Path, split: str) -> dict[str, Any]:
    """Delivery with each of the split's stores padded by its other stores' memories (scripts/corpus/
    padded_stores.py): how the recall gate's floor holds in a store that holds many memories about other things."""
    sys.path.insert(0, str(REPO / "scripts" / "corpus"))
    try:
        from padded_stores import write_padded
    finally:
        sys.path.pop(0)
    from gate.replay.labels import load_labels, score

    with tempfile.TemporaryDirectory(prefix="gate-quality-") as scratch:
        padded_labels, _ = write_padded(LABELS / split / "delivery.jsonl", Path(scratch) / "padded")
        labels = load_labels(str(padded_labels), str(root))
        replay = _replay(labels)
        delivery = score(labels, replay.runs, replay.store_ids)["delivery"]
    return {k: delivery[k] for k in DELIVERY_KEYS}


def measure(root: Path) -> dict[str, Any]:
    out = {}
    for split in SPLITS:
        out[split] = measure_split(root, split)
        if (LABELS / split / "delivery.jsonl").is_file():  # (the agent's queries and the padded stores score
            out[split]["agent_queries"] = measure_queries(root, split)  # delivery)
            if _stores(split) >= 2:  # a store is padded with the split's other stores' memories
                out[split]["delivery_padded"] = measure_padded(root, split)
    return out


def build_mirror(out: Path) -> Path:
    if not (CORPUS / "sessions").is_dir():
        raise SystemExit(f"no corpus at {CORPUS} (give --root MIRROR)")
    subprocess.run([sys.executable, str(REPO / "scripts" / "corpus" / "mirror.py"), "--out", str(out),
                    "--corpus", str(CORPUS)], check=True, capture_output=True, timeout=600)
    return out


# --- the tables ------------------------------------------------------------------------------------------------


def _f(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def _n(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


ROWS: list[tuple[str, Any, str]] = [
    # (row, how a split's figures read in it, target on the test split: issues 29 and 30)
    ("write-back, blocks alone: precision / recall",
     lambda s: f"{_f(s['writeback']['precision'])}{_ci(s, 'writeback_precision')} / "
               f"{_f(s['writeback']['recall'])}{_ci(s, 'writeback_recall')}", "— / 0.30"),
    ("write-back: blocked, or reminded at the next prompt or session start (recall)",
     lambda s: _f(s["writeback"]["recall_blocked_or_reminded"]) + _ci(s, "recall_blocked_or_reminded"), "0.55"),
    ("write-back: false blocks, share of ordinary turns",
     lambda s: _pct(s["writeback"]["false_block_rate"]) + _ci(s, "false_block_rate", percent=True), "1.5 %"),
    ("write-back: blocks / reminders per 100 turns (reminders on ordinary turns)",
     lambda s: f"{_n(s['writeback']['blocks_per_100_turns'])} / {_n(s['writeback']['reminders_per_100_turns'])} "
               f"({_n(s['writeback']['reminders_on_ordinary_per_100_turns'])})", "— / (8)"),
    ("write-back: sessions of 10 turns or more with a false block",
     lambda s: f"{s['writeback']['long_sessions_with_false_block']} of {s['writeback']['long_sessions']}", ""),
    ("write-back: turns deferred whose reminder never came (withdrawn, capped, no later session)",
     lambda s: str(s["writeback"]["deferred_not_reminded"]), ""),
    ("recall: expected memories that reached the agent, index line or full text",
     lambda s: _f(s["delivery"]["recall"]) + _ci(s, "delivery_recall"), "0.80"),
    ("— of them in full at a prompt",
     lambda s: _f(s["delivery"]["recall_prompt_time"]) + _ci(s, "recall_prompt_time"), "0.45"),
    ("recall: injected memories relevant where injected",
     lambda s: _f(s["delivery"]["injected_precision"]) + _ci(s, "injected_precision"), "0.22"),
    ("recall: noise (memories injected at prompts that should get none)",
     lambda s: f"{s['delivery']['noise']} at {s['delivery']['noise_prompts']} prompts", "40"),
    ("recall: searched memory where a shift is labelled, precision / recall",
     lambda s: f"{_f(s['shift']['precision'])}{_ci(s, 'shift_precision')} / "
               f"{_f(s['shift']['recall'])}{_ci(s, 'shift_recall')}", ""),
    ("recall: the topic-shift verdict alone, precision / recall (a diagnostic)",
     lambda s: f"{_f(s['shift_verdict']['precision'])} / {_f(s['shift_verdict']['recall'])}", ""),
    ("recall: cross-project leaks", lambda s: str(s["delivery"]["leaks"]), "0"),
    ("recall, each store padded with the split's other stores' memories (irrelevant): at a prompt / precision / "
     "noise", lambda s: _padded(s), ""),
    ("recall, the agent's own queries (top 3 of `gate search`), each annotator: at a prompt / precision (noise)",
     lambda s: _queries(s), "0.60 / 0.25"),
    ("recall as a user of the gate gets it: the hook's hits, and the agent's search (as each annotator wrote it) "
     "where the gate asks for one: at a prompt / precision (noise); prompts asked", lambda s: _asked(s), ""),
]


def _ci(split: dict[str, Any], name: str, percent: bool = False) -> str:
    """" [low–high]": the figure's 95 % interval, sessions resampled (a run without intervals shows none)."""
    interval = split.get("intervals", {}).get(name)
    if not interval:
        return ""
    low, high = interval
    return f" [{100 * low:.1f}–{100 * high:.1f}]" if percent else f" [{low:.2f}–{high:.2f}]"


def _padded(split: dict[str, Any]) -> str:
    """The padded-store delivery (an older run without it reads —)."""
    d = split.get("delivery_padded")
    if not d:
        return "—"
    return f"{_f(d['recall_prompt_time'])} / {_f(d['injected_precision'])} / {d['noise']}"


def _annotator_cells(split: dict[str, Any], row: str) -> list[str]:
    """One cell per annotator for one row of its query scores: at a prompt / precision (noise); an older run
    without the row has none."""
    return [f"{name} {_f(q[row]['recall_at_prompt'])} / {_f(q[row]['precision'])} ({q[row]['noise']})"
            for name, q in sorted(split.get("agent_queries", {}).items()) if row in q]


def _queries(split: dict[str, Any]) -> str:
    """Every annotator's queries alone (an older run without them reads —)."""
    return "; ".join(_annotator_cells(split, "agent")) or "—"


def _asked(split: dict[str, Any]) -> str:
    """The hook with the agent's search only where the recall gate asked for one, per annotator (an older run
    without it reads —); the asks are the same for every annotator (the gate asks, not the agent)."""
    cells = _annotator_cells(split, "asked")
    if not cells:
        return "—"
    asks = {(q["asks"], q["prompts_replayed"]) for q in split["agent_queries"].values() if "asked" in q}
    return "; ".join(cells) + "; " + ", ".join(f"{a} of {n}" for a, n in sorted(asks))


def _codex(split: dict[str, Any]) -> str:
    c = split.get("codex")
    if not c:
        return "—"
    return (f"{c['sessions']} sessions, {c['turns']} turns ({c['should_block']} should block): "
            f"{_f(c['writeback_precision'])} / {_f(c['writeback_recall'])}, "
            f"false blocks {_pct(c['false_block_rate'])}, blocked or reminded {_f(c['recall_blocked_or_reminded'])}")


CODEX_ROW = ("Codex CLI sessions alone: turns; write-back blocks precision / recall, false blocks, blocked or "
             "reminded", _codex, "")


def _sizes(split: dict[str, Any]) -> str:
    parts = []
    if "writeback" in split:
        wb = split["writeback"]
        parts.append(f"{wb['n']} turns ({wb['tp'] + wb['fn']} should block, {wb['fp'] + wb['tn']} ordinary)")
    if "delivery" in split:
        parts.append(f"{split['delivery']['expected']} expected memories")
    if "shift" in split:
        sh = split["shift"]
        parts.append(f"{sh['n']} prompts ({sh['tp'] + sh['fn']} shifts)")
    text = ", ".join(parts)
    if "behind" in split:
        b = split["behind"]
        folders = f" ({b['folders']} corpus folders)" if b.get("folders", b["owners"]) != b["owners"] else ""
        text += (f"; {b['sessions']} sessions of {b['owners']} owners{folders}, the should-block turns from "
                 f"{b['should_block_owners']} of them")
    return text


TITLES = {
    "test": "test split (frozen; read in aggregate only)",
    "test-added": "test split, the owners issue 43 added (labelled and frozen before any change; read in aggregate "
                  "only)",
    "dev": "dev split (tuned on)",
}


def _cell(cell: Any, split: dict[str, Any] | None) -> str:
    """A row's cell for a split, "—" where the split has no figures of that kind."""
    if not split:
        return "—"
    try:
        return cell(split)
    except KeyError:
        return "—"


def render(run: dict[str, Any], before: dict[str, Any]) -> str:
    """The gate-quality tables (each test split, then dev) with the markers around them. Figures in brackets are
    95 % intervals, the sessions resampled."""
    lines = [BEGIN, ""]
    for split in ("test", "test-added", "dev"):
        if split not in run:
            continue
        now, old = run[split], before.get(split)
        targets = split.startswith("test")
        lines.append(f"{TITLES[split]}: {_sizes(now)}.")
        lines.append("")
        header = f"| {split} split | before ({before.get('code', '?')}) | now |"
        header += " target |" if targets else ""
        lines += [header, "| --- | ---: | ---: |" + (" ---: |" if targets else "")]
        for name, cell, target in [*ROWS, CODEX_ROW]:
            if _cell(cell, now) == "—" and _cell(cell, old) == "—":
                continue  # no figures of this kind on this split
            row = f"| {name} | {_cell(cell, old)} | {_cell(cell, now)} |"
            lines.append(row + (f" {target} |" if targets else ""))
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def doc_section(text: str) -> str | None:
    """The rendered part of docs/quality.md, markers included (None when the markers are missing)."""
    start, end = text.find(BEGIN), text.find(END)
    return text[start:end + len(END)] if start >= 0 and end > start else None


def write_doc(run: dict[str, Any], before: dict[str, Any]) -> None:
    text = DOC.read_text(encoding="utf-8")
    old = doc_section(text)
    if old is None:
        raise SystemExit(f"{DOC}: the quality-figures markers are missing (put them where the tables go)")
    DOC.write_text(text.replace(old, render(run, before)), encoding="utf-8")


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, help="the corpus mirror (scripts/corpus/mirror.py --out)")
    parser.add_argument("--out", type=Path, default=RUN_FILE, help="where the run goes (default: %(default)s)")
    parser.add_argument("--code", default="", help="the commit measured, kept in the run (default: git HEAD)")
    parser.add_argument("--check", action="store_true", help="write nothing: fail if the run or the doc differ")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gate-quality-home-") as home:
        os.environ["GATE_HOME"] = os.environ["HOME"] = home  # the replays' state stays out of the real one
        root = args.root or build_mirror(Path(home) / "mirror")
        import gate

        code_dir = Path(gate.__file__).resolve().parents[1]
        code = args.code or subprocess.run(["git", "-C", str(code_dir), "rev-parse", "--short", "HEAD"],
                                           capture_output=True, text=True).stdout.strip()
        run = {"code": code, **measure(root)} if args.out != RUN_FILE else measure(root)  # (the run's own code:
        # the commit that holds it, which cannot name itself)
    if args.check:
        saved, before = load(args.out), load(BEFORE_FILE)
        problems = [f"{split}: measured {run[split]} but {args.out.name} has {saved.get(split)}"
                    for split in SPLITS if saved.get(split) != run[split]]
        if doc_section(DOC.read_text(encoding="utf-8")) != render(saved, before):
            problems.append(f"{DOC.name} is not the rendering of {args.out.name}")
        print("\n".join(problems) or "the run and the doc are current")
        return 1 if problems else 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(run, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{args.out}: code {code} (gate from {code_dir})")
    for split in SPLITS:
        print(f"{split}: {json.dumps(run[split]['writeback'])}")
    if args.out == RUN_FILE:
        write_doc(run, load(BEFORE_FILE))
        print(f"{DOC}: tables written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
