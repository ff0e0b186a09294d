"""A realistic Claude Code auto-memory directory, as 2.1.3xx writes it (and as earlier versions left it).

Topic files with front matter (the type under `metadata:` as 2.1.332 writes it, or top-level as before), one
legacy topic file without front matter, one in the team directory, and the MEMORY.md index with one line per
memory. Written fresh into any directory by `write_sample`; the bad files of `write_bad_files` are added
separately, so a test chooses what it feeds the importer.
"""

from __future__ import annotations

from pathlib import Path

TOPIC_FILES = {
    "user_role.md": """---
name: user-role
description: Deep Go expertise, new to React and to this project's frontend
metadata:
  type: user
---

Frame frontend explanations in terms of backend analogues.
""",
    "feedback_testing.md": """---
name: integration-tests-real-db
description: Integration tests must hit a real database, not mocks
metadata:
  type: feedback
---

Integration tests must hit a real database, not mocks.

**Why:** last quarter the mocked tests passed while the production migration failed.
**How to apply:** every test under tests/integration uses the compose Postgres; see [[merge-freeze]].
""",
    "feedback_terse.md": """---
name: terse-responses
description: This user wants terse responses with no trailing summaries
type: feedback
---
This user wants terse responses with no trailing summaries: they read the diff.
""",
    "project_auth.md": """---
name: auth-rewrite
description: "Auth middleware rewrite: driven by legal compliance, not tech-debt cleanup"
metadata:
  type: project
---

We decided to rewrite the middleware instead of patching how it stores session tokens.

**Why:** legal flagged the token storage against the new compliance requirements.
**How to apply:** scope decisions favour compliance over ergonomics.
""",
    "project_freeze.md": """---
name: merge-freeze
description: Merge freeze begins 2026-03-05 for the mobile release cut
metadata:
  type: project
  modified: 2026-02-27T10:00:00Z
---

Flag any non-critical pull request scheduled after that date.
""",
    "reference_linear.md": """---
name: linear-ingest
description: Pipeline bugs are tracked in the Linear project INGEST
metadata:
  type: reference
---

Check it for context on pipeline tickets.
""",
    "debugging.md": """# Debugging notes

The ledger tests need TZ=UTC; they fail around midnight otherwise.
""",
    "team/changelog.md": """---
name: changelog-entry
description: Every pull request needs an entry in CHANGES.md
metadata:
  type: feedback
---

Every pull request needs an entry in CHANGES.md, under the next release.
""",
}

INDEX = """- [User role](user_role.md) — Go expert, new to React
- [Real database in integration tests](feedback_testing.md) — no mocks
- [Terse responses](feedback_terse.md) — no trailing summaries
- [Auth rewrite](project_auth.md) — compliance, not tech debt
- [Merge freeze](project_freeze.md) — from 2026-03-05
- [Pipeline bugs](reference_linear.md) — Linear INGEST
- [Debugging notes](debugging.md) — TZ=UTC
"""

# Each is refused on its own, with the reason; the key is the word the refusal names.
BAD_FILES = {
    "malformed.md": (b"---\nname: broken\n  description: indented wrong\nmetadata:\n  type: feedback\n---\nx\n",
                     "front matter"),
    "unclosed.md": (b"---\nname: unclosed\ndescription: never closed\n", "never closed"),
    "opinion.md": (b"---\nname: odd\ndescription: Tabs beat spaces\nmetadata:\n  type: opinion\n---\nx\n",
                   "unknown type"),
    "latin1.md": (b"---\nname: latin\ndescription: caf\xe9 au lait\ntype: user\n---\nx\n", "UTF-8"),
    "deploy_token.md": (
        b"---\nname: deploy\ndescription: The CI deploy token\ntype: reference\n---\n"
        b"The token is ghp_abcdefghijklmnopqrstuvwxyz0123456789AB\n",
        "secret",
    ),
}


def write_sample(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in TOPIC_FILES.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (directory / "MEMORY.md").write_text(INDEX, encoding="utf-8")
    return directory


def write_bad_files(directory: Path) -> None:
    for name, (data, _) in BAD_FILES.items():
        (directory / name).write_bytes(data)
