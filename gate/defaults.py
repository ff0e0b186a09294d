"""The one source of setting defaults, read by the hook's stdlib loader and the CLI's pydantic model."""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any


DEFAULTS: dict[str, Any] = {
    # write-back gate
    "writeback": True,  # GATE_WRITEBACK=off disables blocking (e.g. for headless CI runs of Claude Code)
    "writeback_cap": 5,  # blocks per session at most
    # recall gate
    "recall": True,
    "recall_budget_tokens": 1500,
    "recall_max_hits": 5,
    "session_start_budget_tokens": 1000,
    "anchor_budget_tokens": 600,
    # where recall fires, the agent must search in its own words before its first change of the turn:
    # refuse (that change is refused once until it has), remind (it is reminded once), off (only asked)
    "agent_search": "refuse",
    # housekeeping
    "audit": True,
    "ledger_max_age_days": 14,
    "audit_max_bytes": 20_000_000,
    # the history of every write (gate show --history, gate restore)
    "history_max_age_days": 180,  # versions replaced longer ago than this are pruned
    "history_max_bytes": 20_000_000,  # per history directory (a project's private or team memories, user memories)
}

# Settings that take one of a few words (the first is the default's spelling); any case is accepted.
CHOICES: dict[str, tuple[str, ...]] = {"agent_search": ("refuse", "remind", "off")}

# Keys that say where state lives; a project's checked-in config may never set them.
LOCATION_KEYS: frozenset[str] = frozenset({"home", "data_dir", "state_dir", "cache_dir", "config_dir", "log_dir"})
