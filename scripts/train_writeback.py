"""Learn the write-back score's weights from the labelled dev split (a small logistic regression, plain Python).

    python scripts/train_writeback.py --labels eval/labels/dev/writeback.jsonl --root MIRROR [--write FILE]

Replays the labelled sessions with the current rules (`gate replay`'s own code), takes each labelled turn's
features (phrase evidence and every structural signal, read as the write-back gate reads the turn), and
fits an L2-regularised logistic regression on the turns no veto holds for (a vetoed turn never blocks,
whatever it scores). Classes are weighted to balance (few turns should block). The threshold is the one with
the best F-beta on the dev split (beta 0.5 by default: precision counts double, a false block costs the user).
Prints leave-one-owner-out figures (each owner's turns scored by a model fitted on the others; an owner is an
owner family, the corpus folder's name before "+"), then the
weights as a TOML table to paste into rules/writeback.toml [score] / [score.weights], or writes them (--write).
The reminder's threshold (remind_threshold: not blocked, reminded at the next prompt) is the one with the
best F-beta at --remind-beta (2 by default: a reminder costs the user little, a miss loses the knowledge),
at most the block threshold. Turns a deferring veto holds (remind_vetoes: asks_user, unconfirmed_fix …) are
vetoed for the block and counted apart: the reminder takes them.

    python scripts/train_writeback.py --labels … --root MIRROR --cache /tmp/rows.json --words 0,50,200 \
        --word-l2 0.01,0.05 [--select chi2|logodds] [--bigrams] [--inner-threshold]

is an experiment, not a shipping path (issue 43): it adds bag-of-words features of the turn (the reply's words
and, apart, the prompt's), the vocabulary chosen inside each leave-one-owner-out fold from the training owners
only, and prints per (K, L2) the held-out precision, recall and false-block rate (per owner too, with the AUC of
its scores), the fit-on-all figures, and the best any threshold could have done on the held-out scores.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

Row = tuple[str, dict[str, float], bool, tuple[str, str]]


def owner_family(relpath: str) -> str:
    """The owner a corpus session belongs to: its folder's name before "+" (entireio+cli and entireio+skills
    are one owner), so leave-one-owner-out never trains on the held-out owner's other repositories."""
    return relpath.replace(os.sep, "/").split("/")[0].split("+")[0]


def collect(labels_path: str, root: str | None) -> list[Row]:
    """(owner, features, should block, (reply text, prompt text)) for every labelled turn the replay reached."""
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
            owner = owner_family(os.path.relpath(transcript, root or os.path.dirname(labels_path)))
            features, text = features_at(transcript, stop.step)
            rows.append((owner, features, block, text))
        return rows


def collect_cached(labels_path: str, root: str | None, cache: Path | None) -> list[Row]:
    """collect(), read from / saved to a JSON cache (the replay takes minutes; the word experiments reuse it).
    The cache holds the turns' text: keep it outside the repository."""
    import json

    if cache is not None and cache.exists():
        data = json.loads(cache.read_text(encoding="utf-8"))
        if data.get("labels") == os.path.abspath(labels_path):
            return [(o, f, bool(y), (t[0], t[1])) for o, f, y, t in data["rows"]]
    rows = collect(labels_path, root)
    if cache is not None:
        cache.write_text(json.dumps({"labels": os.path.abspath(labels_path), "rows": rows}), encoding="utf-8")
    return rows


def features_at(transcript: str, step: Any) -> tuple[dict[str, float], tuple[str, str]]:
    """Every feature of the turn a Stop step ends, as the gate reads it (all signals, weighed or not: the hook
    itself computes only the ones its weights use)."""
    from gate.gates.writeback.evidence import find_evidence
    from gate.gates.writeback.signals import turn_signals
    from gate.rules import load_rules
    from gate.session.transcript import read_turn

    rules = load_rules("writeback")
    last = step.event.get("last_assistant_message")
    turn = read_turn(transcript, last if isinstance(last, str) else None, end=step.end, previous_reply=True)
    return ({**find_evidence(turn, rules).features, **turn_signals(turn, rules)},
            ("\n".join(turn.assistant_texts), turn.prompt))


def synthetic(directory: Path) -> list[Row]:
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
        rows.append(("synthetic", features, item["label"] == "block", ("\n".join(turn.assistant_texts), turn.prompt)))
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

# --- word features (an experiment, issue 43: does the turn's wording carry signal that transfers across owners?)

_TOKEN = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def tokens(text: str) -> list[str]:
    """Lowercased word tokens (letters only: numbers and ids are one session's, not a kind of turn)."""
    return _TOKEN.findall(text.lower())


def word_set(reply: str, prompt: str, bigrams: bool = False) -> frozenset[str]:
    """The turn's word features, present or not: "r:" words of the reply, "p:" words of the prompt, and with
    `bigrams` their adjacent pairs ("r:run the"). Derivable by the hook from the turn alone."""
    out: set[str] = set()
    for tag, text in (("r:", reply), ("p:", prompt)):
        toks = tokens(text)
        out.update(tag + t for t in toks)
        if bigrams:
            out.update(f"{tag}{a} {b}" for a, b in itertools.pairwise(toks))
    return frozenset(out)


def chi_square(a: int, b: int, c: int, d: int) -> float:
    """Chi-square of a 2x2 table: a = word & block, b = word & ordinary, c = no word & block, d = neither."""
    n = a + b + c + d
    den = (a + b) * (c + d) * (a + c) * (b + d)
    return n * (a * d - b * c) ** 2 / den if den else 0.0


def log_odds_z(a: int, b: int, c: int, d: int) -> float:
    """|z| of the smoothed log odds ratio of a 2x2 table (as chi_square): favours words frequent enough for
    their association to be sure, where chi-square favours rare words seen only with the rare class."""
    delta = math.log((a + 0.5) / (c + 0.5)) - math.log((b + 0.5) / (d + 0.5))
    return abs(delta) / math.sqrt(1 / (a + 0.5) + 1 / (b + 0.5) + 1 / (c + 0.5) + 1 / (d + 0.5))


SELECTORS = {"chi2": chi_square, "logodds": log_odds_z}


def select_vocabulary(train: list[tuple[str, frozenset[str], bool]], k: int, min_df: int = 5,
                      min_owners: int = 2, select: str = "chi2") -> list[str]:
    """The top-k words by `select` (chi2, logodds) against the label, from the training rows (owner, words,
    block) only: a word must be in at least `min_df` turns of at least `min_owners` owners. Ties go by name."""
    if k <= 0:
        return []
    measure = SELECTORS[select]
    df: dict[str, int] = {}
    pos: dict[str, int] = {}
    owners: dict[str, set[str]] = {}
    for owner, words, y in train:
        for word in words:
            df[word] = df.get(word, 0) + 1
            if y:
                pos[word] = pos.get(word, 0) + 1
            owners.setdefault(word, set()).add(owner)
    n_pos = sum(1 for *_, y in train if y)
    n_neg = len(train) - n_pos
    scored = []
    for word, count in df.items():
        if count < min_df or len(owners[word]) < min_owners:
            continue
        a = pos.get(word, 0)
        b = count - a
        scored.append((-measure(a, b, n_pos - a, n_neg - b), word))
    return [word for _, word in sorted(scored)[:k]]


Sparse = list[tuple[int, float]]


def sparse_rows(features: list[dict[str, float]], words: list[frozenset[str]], names: list[str]) -> list[Sparse]:
    """Each turn as (index, value) pairs over `names` (hook features, then words), index 0 the bias."""
    index = {n: i + 1 for i, n in enumerate(names)}
    out = []
    for f, ws in zip(features, words, strict=True):
        row: Sparse = [(0, 1.0)]
        row += [(index[n], v) for n, v in sorted(f.items()) if n in index and v]
        row += [(index[w], 1.0) for w in sorted(ws) if w in index]
        out.append(row)
    return out


def _loss_grad(w: list[float], rows: list[Sparse], ys: list[bool], l2: float) -> tuple[float, list[float]]:
    """The class-balanced mean log loss + l2/2 |w|^2 (bias not penalised), as fit() minimises, and its gradient."""
    positives = sum(ys) or 1
    negatives = (len(ys) - positives) or 1
    weight_pos, weight_neg = len(ys) / (2 * positives), len(ys) / (2 * negatives)
    loss = 0.0
    grad = [0.0] * len(w)
    for row, y in zip(rows, ys, strict=True):
        z = 0.0
        for i, v in row:
            z += w[i] * v
        weight = weight_pos if y else weight_neg
        m = -z if y else z  # loss = log(1 + e^m)
        loss += weight * (m + math.log1p(math.exp(-m)) if m > 0 else math.log1p(math.exp(m)))
        p = 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))
        g = (p - (1.0 if y else 0.0)) * weight
        for i, v in row:
            grad[i] += g * v
    n = len(ys)
    loss /= n
    for i in range(len(w)):
        grad[i] /= n
        if i:
            loss += 0.5 * l2 * w[i] * w[i]
            grad[i] += l2 * w[i]
    return loss, grad


def fit_sparse(rows: list[Sparse], ys: list[bool], size: int, l2: float, iterations: int = 300) -> list[float]:
    """Weights [bias, w1, …] minimising the same objective as fit(), by L-BFGS (deterministic: no sampling).
    Gradient descent at fit()'s step needs thousands of passes; this needs a few hundred at most."""
    w = [0.0] * size
    loss, grad = _loss_grad(w, rows, ys, l2)
    history: list[tuple[list[float], list[float], float]] = []
    for _ in range(iterations):
        # two-loop recursion: direction = -H grad
        q = grad[:]
        alphas = []
        for s_, y_, rho in reversed(history):
            a = rho * sum(si * qi for si, qi in zip(s_, q, strict=True))
            alphas.append(a)
            q = [qi - a * yi for qi, yi in zip(q, y_, strict=True)]
        if history:
            s_, y_, _ = history[-1]
            gamma = sum(si * yi for si, yi in zip(s_, y_, strict=True)) / sum(yi * yi for yi in y_)
            q = [gamma * qi for qi in q]
        for (s_, y_, rho), a in zip(history, reversed(alphas), strict=True):
            b = rho * sum(yi * qi for yi, qi in zip(y_, q, strict=True))
            q = [qi + (a - b) * si for qi, si in zip(q, s_, strict=True)]
        direction = [-qi for qi in q]
        slope = sum(d * g for d, g in zip(direction, grad, strict=True))
        if slope >= 0:  # not a descent direction: restart from the gradient
            history.clear()
            direction = [-g for g in grad]
            slope = -sum(g * g for g in grad)
        step = 1.0 if history else 1.0 / max(1.0, math.sqrt(-slope))
        while True:
            trial = [wi + step * d for wi, d in zip(w, direction, strict=True)]
            new_loss, new_grad = _loss_grad(trial, rows, ys, l2)
            if new_loss <= loss + 1e-4 * step * slope or step < 1e-10:
                break
            step /= 2
        s_ = [t - wi for t, wi in zip(trial, w, strict=True)]
        y_ = [ng - g for ng, g in zip(new_grad, grad, strict=True)]
        sy = sum(a * b for a, b in zip(s_, y_, strict=True))
        if sy > 1e-12:
            history.append((s_, y_, 1.0 / sy))
            del history[:-10]
        done = abs(loss - new_loss) <= 1e-9 * max(1.0, abs(loss))
        w, loss, grad = trial, new_loss, new_grad
        if done or math.sqrt(sum(g * g for g in grad)) < 1e-6:
            break
    return w


def score_sparse(w: list[float], row: Sparse) -> float:
    return sum(w[i] * v for i, v in row)


WordRow = tuple[str, dict[str, float], frozenset[str], bool]


class WordSetup:
    """How the word models are built: vocabulary size, selection and cuts, L2, threshold choice."""

    def __init__(self, k: int, l2: float, beta: float = 0.5, min_df: int = 5, min_owners: int = 2,
                 select: str = "chi2", inner: bool = False) -> None:
        self.k, self.l2, self.beta, self.min_df, self.min_owners = k, l2, beta, min_df, min_owners
        self.select, self.inner = select, inner


Model = tuple[list[str], list[float], float]


def fit_words(train: list[WordRow], names: list[str], setup: WordSetup) -> Model:
    """Names (hook features, then the vocabulary chosen from `train` only), weights and threshold of one model.
    The threshold is the best F-beta on `train`'s own scores, or with `setup.inner` on the scores each training
    owner gets from a model fitted on the other training owners (an in-sample fit over many words scores its
    own turns too well for its threshold to hold on a new owner)."""
    vocabulary = select_vocabulary([(o, ws, y) for o, _, ws, y in train], setup.k, setup.min_df,
                                   setup.min_owners, setup.select)
    all_names = names + vocabulary
    rows = sparse_rows([f for _, f, _, _ in train], [ws for _, _, ws, _ in train], all_names)
    ys = [y for *_, y in train]
    w = fit_sparse(rows, ys, len(all_names) + 1, setup.l2)
    owners = sorted({o for o, *_ in train})
    if setup.inner and len(owners) > 1:
        outer = WordSetup(setup.k, setup.l2, setup.beta, setup.min_df, setup.min_owners, setup.select)
        scored = []
        for owner in owners:
            inner_names, inner_w, _ = fit_words([r for r in train if r[0] != owner], names, outer)
            held = [r for r in train if r[0] == owner]
            scored += [(s, r[3]) for r, s in zip(held, scores_words((inner_names, inner_w, 0.0), held),
                                                  strict=True)]
    else:
        scored = [(score_sparse(w, r), y) for r, y in zip(rows, ys, strict=True)]
    return all_names, w, best_threshold(scored, setup.beta)


def scores_words(model: Model, rows: list[WordRow]) -> list[float]:
    names, w, _ = model
    return [score_sparse(w, r) for r in sparse_rows([f for _, f, _, _ in rows], [ws for _, _, ws, _ in rows],
                                                    names)]


def predict_words(model: Model, rows: list[WordRow]) -> list[bool]:
    return [s >= model[2] for s in scores_words(model, rows)]


def auc(scored: list[tuple[float, bool]]) -> float | None:
    """The chance a should-block turn outscores an ordinary one (ties half): the ranking, whatever the threshold."""
    pos = [s for s, y in scored if y]
    neg = sorted(s for s, y in scored if not y)
    if not pos or not neg:
        return None
    import bisect

    wins = sum(bisect.bisect_left(neg, s) + 0.5 * (bisect.bisect_right(neg, s) - bisect.bisect_left(neg, s))
               for s in pos)
    return wins / (len(pos) * len(neg))


Fold = tuple[list[str], list[tuple[bool, bool]], list[tuple[float, bool]], list[float]]


def leave_one_owner_out(live: list[WordRow], names: list[str], setup: WordSetup) -> dict[str, Fold]:
    """Per held-out owner: the vocabulary its fold chose (from the other owners' turns only), its turns'
    (should block, blocked) pairs, (score, should block) pairs and thresholds, by the model fitted on the other
    owners."""
    out = {}
    for owner in sorted({o for o, *_ in live}):
        model = fit_words([r for r in live if r[0] != owner], names, setup)
        held = [r for r in live if r[0] == owner]
        scores = scores_words(model, held)
        out[owner] = (model[0][len(names):], [(r[3], s >= model[2]) for r, s in zip(held, scores, strict=True)],
                      [(s, r[3]) for r, s in zip(held, scores, strict=True)], [model[2]] * len(held))
    return out


def _figures(pairs: list[tuple[bool, bool]]) -> str:
    tp, fp, fn, tn = counts(pairs)
    ordinary = fp + tn
    precision = f"{tp / (tp + fp):.2f}" if tp + fp else "  - "
    recall = f"{tp / (tp + fn):.2f}" if tp + fn else "  - "
    false_rate = f"{100 * fp / ordinary:.1f}%" if ordinary else "-"
    return f"P {precision} R {recall} false blocks {false_rate:>5} (tp={tp} fp={fp} fn={fn} tn={tn})"


def best_shift(folds: dict[str, Fold], vetoed_should: list[bool], min_recall: float) -> str:
    """Hindsight bound: each fold's held-out scores less its own threshold, pooled, cut at the one shift with the
    best precision at recall >= min_recall. The shift is chosen on the held-out turns themselves, so no model
    ships this; it says whether any threshold could have met the bar with this ranking."""
    margins = sorted(((s - t, y) for fold in folds.values() for (s, y), t in
                      zip(fold[2], fold[3], strict=True)), reverse=True)
    total = sum(y for _, y in margins) + sum(vetoed_should)
    ordinary = len(margins) + len(vetoed_should) - total
    best = None
    tp = fp = 0
    for i, (m, y) in enumerate(margins):
        tp += y
        fp += not y
        if i + 1 < len(margins) and margins[i + 1][0] == m:
            continue
        if total and tp / total >= min_recall and (best is None or tp / (tp + fp) > best[0]):
            best = (tp / (tp + fp), tp / total, fp / ordinary if ordinary else 0.0)
    if best is None:
        return "-"
    return f"P {best[0]:.2f} R {best[1]:.2f} false blocks {100 * best[2]:.1f}%"


def word_experiment(rows: list[Row], rules: Any, ks: list[int], l2s: list[float], beta: float, bigrams: bool,
                    min_df: int, min_owners: int, select: str = "chi2", inner: bool = False) -> None:
    """Print, for each (k words, L2): leave-one-owner-out figures (per owner too, with the AUC of the held-out
    owner's scores) and the fit-on-all figures. Vetoed turns never block (as in the gate); false blocks are
    counted over all ordinary (should-not-block) turns, vetoed ones included."""
    veto_names = set(rules.get("score", {}).get("vetoes", []))
    vetoed_rows = [r for r in rows if vetoed(r[1], rules)]
    live: list[WordRow] = [(o, f, word_set(*t, bigrams=bigrams), y) for o, f, y, t in rows
                           if not vetoed(f, rules)]
    names = sorted({n for _, f, _, _ in live for n in f if n not in veto_names})
    vetoed_by_owner: dict[str, list[tuple[bool, bool]]] = {}
    for o, _, y, _ in vetoed_rows:
        vetoed_by_owner.setdefault(o, []).append((y, False))
    print(f"word features: {'unigrams and bigrams' if bigrams else 'unigrams'} of reply (r:) and prompt (p:), "
          f"vocabulary top-k by {select} inside each fold (min {min_df} turns, {min_owners} owners); threshold: "
          f"{'inner leave-one-owner-out' if inner else 'in-sample'} F-beta {beta} on the training owners")
    for k in ks:
        for l2 in l2s:
            setup = WordSetup(k, l2, beta, min_df, min_owners, select, inner)
            folds = leave_one_owner_out(live, names, setup)
            held = [p for o in folds for p in folds[o][1] + vetoed_by_owner.get(o, [])]
            held += [p for o, ps in vetoed_by_owner.items() if o not in folds for p in ps]
            model = fit_words(live, names, setup)
            on_all = [(r[3], p) for r, p in zip(live, predict_words(model, live), strict=True)]
            on_all += [(r[2], False) for r in vetoed_rows]
            aucs = [a for fold in folds.values() if (a := auc(fold[2])) is not None]
            print(f"k={k:<5} l2={l2:<6} LOO {_figures(held)} mean AUC {sum(aucs) / len(aucs):.2f} | "
                  f"fit on all {_figures(on_all)} | hindsight best at R>=0.25: "
                  f"{best_shift(folds, [r[2] for r in vetoed_rows], 0.25)}", flush=True)
            for owner, (vocabulary, pairs, scored, _) in folds.items():
                a = auc(scored)
                print(f"    {owner:<18} {_figures(pairs + vetoed_by_owner.get(owner, []))} AUC "
                      f"{'-' if a is None else f'{a:.2f}'}  top words: {', '.join(vocabulary[:6])}", flush=True)


def compare_rankings(rows: list[Row], rules: Any, l2s: list[float]) -> dict[str, dict[str, float | None]]:
    """The shipped score against learned ones, by how well each ranks a held-out owner's turns (AUC: the chance a
    should-block turn outscores an ordinary one), on the turns no veto holds. The shipped table is scored as it
    is; each learned table (L2 in `l2s`, the shipped table's features) is fitted on the other owners. A table
    that ranks a new owner's turns no better than the shipped one cannot reach better figures at any threshold.
    Returns {model: {owner: AUC, …, "pooled": AUC}}, "shipped" first."""
    from gate.gates.writeback.verdict import decide

    live = [(o, f, y) for o, f, y, _ in rows if not vetoed(f, rules)]
    veto_names = set(rules.get("score", {}).get("vetoes", []))
    names = sorted({n for _, f, _ in live for n in f if n not in veto_names})
    owners = sorted({o for o, *_ in live})

    def summary(by_owner: dict[str, list[tuple[float, bool]]]) -> dict[str, float | None]:
        out: dict[str, float | None] = {o: auc(s) for o, s in by_owner.items()}
        out["pooled"] = auc([p for s in by_owner.values() for p in s])
        return out

    result = {"shipped": summary({o: [(decide(f, rules).score, y) for oo, f, y in live if oo == o]
                                  for o in owners})}
    for l2 in l2s:
        by_owner = {}
        for owner in owners:
            train = [r for r in live if r[0] != owner]
            held = [r for r in live if r[0] == owner]
            w = fit_sparse(sparse_rows([f for _, f, _ in train], [frozenset()] * len(train), names),
                           [y for *_, y in train], len(names) + 1, l2)
            by_owner[owner] = [(score_sparse(w, x), y) for x, (_, _, y) in
                               zip(sparse_rows([f for _, f, _ in held], [frozenset()] * len(held), names), held,
                                   strict=True)]
        result[f"learned l2={l2}"] = summary(by_owner)
    return result


def ranks_best(result: dict[str, dict[str, float | None]]) -> str:
    """The table whose held-out ranking is best pooled ("shipped" on a tie): the one that should ship."""
    return max(result, key=lambda m: (result[m]["pooled"] or 0.0, m == "shipped"))


def print_comparison(result: dict[str, dict[str, float | None]]) -> None:
    owners = [o for o in result["shipped"] if o != "pooled"]
    print("leave-one-owner-out ranking (AUC) of the turns no veto holds: the shipped table as it is, each learned "
          "table fitted on the other owners")
    print(f"{'':22} {'pooled':>7} " + " ".join(f"{o[:10]:>10}" for o in owners))
    for model, aucs in result.items():
        cells = [aucs.get(o) for o in ["pooled", *owners]]
        print(f"{model:22} " + " ".join(f"{'-' if a is None else f'{a:.3f}':>{7 if i == 0 else 10}}"
                                        for i, a in enumerate(cells)))
    shipped = result["shipped"]["pooled"] or 0.0
    best = ranks_best(result)
    if best == "shipped":
        print(f"the shipped table ranks best ({shipped:.3f}): no learned table earns its place")
    else:
        print(f"{best} ranks better than the shipped table ({result[best]['pooled']:.3f} > {shipped:.3f})")


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
    parser.add_argument("--words", metavar="K[,K…]",
                        help="the word experiment instead: add the top-K words of reply and prompt (chosen inside "
                             "each leave-one-owner-out fold) and print the figures for each K and each --word-l2")
    parser.add_argument("--word-l2", default=None, metavar="L2[,L2…]", help="L2 values of the word experiment")
    parser.add_argument("--bigrams", action="store_true", help="word experiment: also adjacent word pairs")
    parser.add_argument("--min-df", type=int, default=5, help="word experiment: a word is in at least N turns")
    parser.add_argument("--min-owners", type=int, default=2, help="word experiment: … of at least N owners")
    parser.add_argument("--select", choices=sorted(SELECTORS), default="chi2",
                        help="word experiment: how the fold's vocabulary is ranked")
    parser.add_argument("--inner-threshold", action="store_true",
                        help="word experiment: threshold from the training owners' own leave-one-owner-out scores")
    parser.add_argument("--cache", type=Path, help="read/save the replayed turns (features and text) here")
    parser.add_argument("--compare", metavar="L2[,L2…]",
                        help="rank held-out owners' turns by the shipped table and by learned ones (AUC) and stop")
    parser.add_argument("--save", type=Path, help="with --compare: save the AUCs here (eval/fits/writeback.json)")
    args = parser.parse_args(argv)

    from gate.rules import load_rules

    rows = collect_cached(args.labels, args.root, args.cache)
    if args.with_unit_turns:
        rows += synthetic(args.with_unit_turns) * args.unit_weight
    rules = load_rules("writeback")
    if args.compare is not None:
        print(f"{len(rows)} labelled turns ({sum(r[2] for r in rows)} should block), "
              f"{len({r[0] for r in rows})} owners")
        result = compare_rankings(rows, rules, [float(v) for v in args.compare.split(",")])
        print_comparison(result)
        if args.save:
            import json

            rounded = {m: {o: None if a is None else round(a, 4) for o, a in aucs.items()}
                       for m, aucs in result.items()}
            args.save.write_text(json.dumps({"labels": "eval/labels/dev/writeback.jsonl", "auc": rounded},
                                            indent=1) + "\n", encoding="utf-8")
        return 0
    if args.words is not None:
        ks = [int(k) for k in args.words.split(",")]
        l2s = [float(v) for v in (args.word_l2 or str(args.l2)).split(",")]
        print(f"{len(rows)} labelled turns ({sum(r[2] for r in rows)} should block), "
              f"{len({r[0] for r in rows})} owners")
        word_experiment(rows, rules, ks, l2s, args.beta, args.bigrams, args.min_df, args.min_owners, args.select,
                        args.inner_threshold)
        return 0
    rows3 = [(owner, f, y) for owner, f, y, _ in rows]
    live = [(owner, f, y) for owner, f, y in rows3 if not vetoed(f, rules)]
    vetoes = rules.get("score", {}).get("vetoes", [])
    names = sorted({n for _, f, _ in live for n in f if n not in vetoes})
    print(f"{len(rows3)} labelled turns ({sum(y for *_, y in rows3)} should block); {len(live)} not vetoed; "
          f"features: {', '.join(names)}")

    owners = sorted({o for o, *_ in live})
    held: list[tuple[bool, bool]] = []
    for owner in owners:
        train = [(f, y) for o, f, y in live if o != owner]
        w = fit(train, names, args.l2)
        threshold = best_threshold([(score(w, names, f), y) for f, y in train], args.beta)
        held += [(y, score(w, names, f) >= threshold) for o, f, y in live if o == owner]
    held += [(y, False) for _, f, y in rows3 if vetoed(f, rules)]
    tp, fp, fn, tn = counts(held)
    print(f"leave-one-owner-out: precision {tp / (tp + fp) if tp + fp else float('nan'):.2f} "
          f"recall {tp / (tp + fn) if tp + fn else float('nan'):.2f} (tp={tp} fp={fp} fn={fn} tn={tn})")

    w = fit([(f, y) for _, f, y in live], names, args.l2)
    threshold = best_threshold([(score(w, names, f), y) for _, f, y in live], args.beta)
    tp, fp, fn, tn = counts([(y, score(w, names, f) >= threshold) for _, f, y in live]
                            + [(y, False) for _, f, y in rows3 if vetoed(f, rules)])
    print(f"fitted on all of dev: precision {tp / (tp + fp) if tp + fp else float('nan'):.2f} "
          f"recall {tp / (tp + fn) if tp + fn else float('nan'):.2f} (tp={tp} fp={fp} fn={fn} tn={tn})")
    scored = [(score(w, names, f), y) for _, f, y in live]
    remind = min(threshold, best_threshold(scored, args.remind_beta))
    deferring = set(rules.get("score", {}).get("remind_vetoes", []))
    deferred = [y for _, f, y in rows3 if vetoed(f, rules) and set(holding(f, rules)) <= deferring]
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
