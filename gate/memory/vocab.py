"""The closed vocabularies of a memory, importable by the hot path without the model's machinery."""

KINDS = ("directive", "gotcha", "finding", "decision", "fix", "task", "preference", "reference")
SCOPES = ("private", "team", "user")
SOURCES = ("agent", "user", "human")
STATUSES = ("active", "superseded", "forgotten")
# Order matters: the related appendix lists edges in this order.
LINK_TYPES = ("supersedes", "fixes", "caused_by", "contradicts", "relates")
