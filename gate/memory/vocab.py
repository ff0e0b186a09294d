"""The closed vocabularies of a memory, and how its two cue fields read as one: importable by the hot path
without the model's machinery."""

KINDS = ("directive", "gotcha", "finding", "decision", "fix", "task", "preference", "reference")
SCOPES = ("private", "team", "user")
SOURCES = ("agent", "user", "human")
STATUSES = ("active", "superseded", "forgotten", "done")  # done: a finished task (`gate done`)
# Order matters: the related appendix lists edges in this order.
LINK_TYPES = ("supersedes", "fixes", "caused_by", "contradicts", "relates")


def joined_cues(cues: object, derived: object) -> str:
    """A memory's cues as the index, the pair filter and the search read them: the writer's, then the words gate
    took from the turn it was written in (Memory.derived_cues, gate/session/turn_cues.py). Takes a record's
    values as they come (a list of cues from an older file, a missing field)."""
    own = " ".join(str(c) for c in cues) if isinstance(cues, list) else str(cues or "")
    added = derived if isinstance(derived, str) else ""
    return f"{own}; {added}" if own and added else own or added
