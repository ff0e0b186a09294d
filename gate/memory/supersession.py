"""The one rule of supersession (hot path: no imports): a memory is superseded while a memory that is not
forgotten links to it with `supersedes`.

Nothing stores the result. The index derives it whenever it catches up with the files (gate/memory/index/write.py),
the cue table when it rebuilds (gate/memory/cues/build.py), and the commands that read files
(gate.memory.store.store.effective_statuses) — all from these two functions. So a link written by `gate remember
--supersedes`, an import, a `git pull` or a hand edit takes effect the same way, and forgetting the successor
makes the memory it replaced current again (unless another live successor still supersedes it).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any


def live_supersedes(status: str, links: list[Any]) -> list[str]:
    """What a memory replaces: its `supersedes` targets, unless it is forgotten. `links` are Link objects or
    {type, target} tables."""
    if status == "forgotten":
        return []
    targets = []
    for link in links:
        link_type, target = (link["type"], link["target"]) if isinstance(link, dict) else (link.type, link.target)
        if link_type == "supersedes":
            targets.append(target)
    return targets


def effective_status(file_status: str, superseded: bool) -> str:
    """The status readers see: forgotten and done (a finished task) as written; otherwise superseded exactly while a
    live successor exists (a file's own `status = "superseded"`, written by earlier versions, no longer decides
    anything)."""
    if file_status in ("forgotten", "done"):
        return file_status
    return "superseded" if superseded else "active"


def closing_chain(source: str, targets: list[str], supersedes_of: Any) -> list[str] | None:
    """The chain `source supersedes t … supersedes source` that links from `source` to `targets` would close,
    or None. `supersedes_of(id)` gives what a memory replaces now (its live `supersedes` targets). A cycle
    supersedes every memory in it, so none of them is delivered: such a link is refused where it is written."""
    for target in targets:
        # depth first from the target, back to the source; each memory looked at once
        trail: dict[str, str | None] = {target: None}
        stack = [target]
        while stack:
            current = stack.pop()
            if current == source:
                chain = [current]
                step = trail[current]
                while step is not None:
                    chain.append(step)
                    step = trail[step]
                return [source, *reversed(chain[1:]), source] if len(chain) > 1 else [source, source]
            for following in supersedes_of(current):
                if following not in trail:
                    trail[following] = current
                    stack.append(following)
    return None


def cycles(supersedes: dict[str, list[str]]) -> list[list[str]]:
    """Every supersession cycle of a store (id -> live `supersedes` targets), each as a chain that starts and
    ends at its smallest id, each cycle once (for `gate doctor`: a pulled team file can bring one)."""
    found: dict[tuple[str, ...], list[str]] = {}
    for source in sorted(supersedes):
        chain = closing_chain(source, supersedes.get(source, []), lambda i: supersedes.get(i, []))
        if chain is None:
            continue
        ring = chain[:-1]
        first = ring.index(min(ring))
        ring = ring[first:] + ring[:first]
        found.setdefault(tuple(ring), [*ring, ring[0]])
    return list(found.values())


def cycle_refusal(chain: list[str]) -> tuple[str, str]:
    """(message, hint) refusing a link that closes the supersession cycle `chain` (first id = last id)."""
    source, target, last = chain[0], chain[1], chain[-2]
    named = " supersedes ".join(chain)
    return (
        f"{source} supersedes {target} would close a supersession cycle ({named}): every memory in it would be "
        "superseded, and none delivered or found; nothing was written",
        f"if {source} replaces {target}, undo the link the other way first: `gate edit {last}` and delete its "
        f"supersedes link to {source} (or `gate forget {last}`); `gate link {source} relates {target}` keeps "
        "both, linked",
    )
