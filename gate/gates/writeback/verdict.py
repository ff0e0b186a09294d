"""Block or not (hot path): a linear score over the turn's evidence, with weights and threshold from
rules/writeback.toml [score], and vetoes that no score overrides.

score = bias + Σ weight[name] × feature[name]; the turn is blocked when score ≥ threshold and no veto holds.
A turn the score cannot settle is deferred to the next prompt (a reminder, gate/gates/writeback/reminder.py): one that
reaches remind_threshold without a veto, or the block threshold with only a deferring veto (remind_vetoes: a
reply that ends by asking the user may still have settled something).
Features are the phrase evidence of gate/gates/writeback/evidence.py (decision, fix, gotcha, learning, preference,
user_decision, tool_fix) and the structural signals of gate/gates/writeback/signals.py. The weights are hand-set or
learned from the labelled dev split by scripts/train_writeback.py; either way they are data.
"""

from __future__ import annotations

from gate.rule_reading import rule_section

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    Rules = Mapping[str, Any]

# Which kind of memory a structural signal stands for, in the MEMORY CHECK message.
KIND_OF_SIGNAL = {"choice": "decision", "user_decision": "decision", "correction": "preference",
                  "recovered": "gotcha", "tool_fix": "fix"}


class Verdict:
    __slots__ = ("block", "contributions", "kinds", "reached", "remind", "score", "veto")

    def __init__(
        self, reached: bool, score: float, contributions: dict[str, float], kinds: list[str], veto: str,
        remind: bool = False,
    ):
        self.reached = reached  # the score reached the threshold
        self.block = reached and not veto
        self.remind = remind and not self.block  # not blocked, but worth a reminder at the next prompt
        self.score = score
        self.contributions = contributions  # feature -> weight × value, the ones that counted
        self.kinds = kinds  # the kinds of memory the positive contributions stand for, strongest first
        self.veto = veto  # the veto that held ("" when none; it matters only when the score reached the threshold)

    def __repr__(self) -> str:
        return (f"Verdict(block={self.block}, remind={self.remind}, score={self.score:.2f}, kinds={self.kinds}, "
                f"veto={self.veto!r})")


def _float(value: Any, default: float) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


def lowest_threshold(rules: Rules) -> float:
    """The score from which vetoes matter: the reminder's threshold when it is lower than the block's."""
    score_rules = rule_section(rules, "score")
    threshold = _float(score_rules.get("threshold"), 1.0)
    return min(threshold, _float(score_rules.get("remind_threshold"), threshold))


def score_inputs(rules: Rules) -> tuple[set[str], set[str]]:
    """(the features the score weighs, the vetoes): what is worth computing for a turn."""
    score_rules = rule_section(rules, "score")
    weights = score_rules.get("weights", {})
    weighed = {n for n, w in weights.items() if n != "bias" and w} if isinstance(weights, dict) else set()
    vetoes = {v for v in score_rules.get("vetoes", []) if isinstance(v, str)}
    return weighed, vetoes


def decide(features: Mapping[str, float], rules: Rules) -> Verdict:
    score_rules = rule_section(rules, "score")
    weights = score_rules.get("weights", {})
    weights = weights if isinstance(weights, dict) else {}
    score = _float(weights.get("bias"), 0.0)
    contributions: dict[str, float] = {}
    for name, value in features.items():
        weight = _float(weights.get(name), 0.0)
        if weight and value:
            contributions[name] = round(weight * value, 4)
            score += weight * value
    vetoes = score_rules.get("vetoes", [])
    lifted = score_rules.get("veto_lifted_by", {})
    lifted = lifted if isinstance(lifted, dict) else {}

    def holds(name: Any) -> bool:
        if not isinstance(name, str) or not features.get(name):
            return False
        lifters = lifted.get(name, [])
        return not (isinstance(lifters, list) and any(features.get(other) for other in lifters))

    holding = [name for name in vetoes if holds(name)]
    veto = holding[0] if holding else ""
    threshold = _float(score_rules.get("threshold"), 1.0)
    remind_threshold = _float(score_rules.get("remind_threshold"), threshold)
    deferring = score_rules.get("remind_vetoes", [])
    deferring = set(deferring) if isinstance(deferring, list) else set()
    if not holding:
        remind = score >= remind_threshold
    else:  # only deferring vetoes hold: what the block threshold would have blocked is deferred
        remind = score >= threshold and all(name in deferring for name in holding)
    positive = sorted((c, n) for n, c in contributions.items() if c > 0)
    kinds: list[str] = []
    for _, name in reversed(positive):
        kind = KIND_OF_SIGNAL.get(name, name)
        if kind in ("decision", "fix", "gotcha", "learning", "preference") and kind not in kinds:
            kinds.append(kind)
    return Verdict(score >= threshold, round(score, 4), contributions, kinds, veto, remind)
