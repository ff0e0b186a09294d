"""Which transcripts to replay, against which store, and the replay itself (cold path, `gate replay`)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from gate.claude_code import project_sessions_dir, project_transcripts
from gate.errors import GateError
from gate.paths import ProjectPaths, redirect_home, redirect_state
from gate.replay.engine import SessionRun, replay_timeline
from gate.replay.labels import Labels
from gate.replay.timeline import Timeline, read_timeline


def find_transcripts(files: list[str], directory: str | None, project: ProjectPaths) -> list[str]:
    """The files named, else every *.jsonl under DIRECTORY, else this project's sessions in Claude Code."""
    if files:
        return [os.path.abspath(f) for f in files]
    if directory:
        folder = Path(directory)
        if not folder.is_dir():
            raise GateError(f"no such directory: {directory}")
        # (a session's subagents/ transcripts are replayed with it, not as sessions of their own)
        found = sorted(
            str(p.resolve()) for p in folder.rglob("*.jsonl") if p.is_file() and p.parent.name != "subagents"
        )
        if not found:
            raise GateError(f"no *.jsonl transcripts under {directory}")
        return found
    found = [str(p) for p in project_transcripts(project.root)]
    if not found:
        raise GateError(
            f"Claude Code has no sessions of {project.root} (looked in {project_sessions_dir(project.root)})",
            hint="name transcripts (gate replay FILE.jsonl …) or a folder of them (--dir DIR)",
        )
    return found


class Replay:
    """Every session replayed under one policy, with what could not be read."""

    def __init__(self) -> None:
        self.runs: dict[str, SessionRun] = {}
        self.unreadable: dict[str, str] = {}  # transcript -> why it could not be opened
        self.store_ids: dict[str, set[str]] | None = None  # with labelled stores: each session's own memories

    def timelines(self) -> list[Timeline]:
        return [run.timeline for run in self.runs.values()]


def _timelines(transcripts: list[str], replay: Replay) -> list[Timeline]:
    out = []
    for transcript in transcripts:
        try:
            out.append(read_timeline(transcript))
        except OSError as error:
            replay.unreadable[transcript] = error.strerror or str(error)
    return out


def replay_all(
    transcripts: list[str],
    project: ProjectPaths,
    rules_overlay: str | None = None,
    labels: Labels | None = None,
    timelines: list[Timeline] | None = None,
    queries: dict[tuple[str, int], str] | None = None,
) -> Replay:
    """Replay each transcript in order, against the current store (or, when the labels name store files,
    against throwaway stores built from them), with every gate's state in a throwaway directory. `queries`:
    (transcript, prompt line) -> the agent's own search there, run too (gate.replay.queries)."""
    from gate.settings import load_settings

    agent_search = None
    by_transcript: dict[str, dict[int, str]] = {}
    if queries:
        from gate.replay.queries import AgentSearch

        agent_search = AgentSearch(rules_overlay)
        for (transcript, line), query in queries.items():
            by_transcript.setdefault(transcript, {})[line] = query

    replay = Replay()
    timelines = timelines if timelines is not None else _timelines(transcripts, replay)
    with tempfile.TemporaryDirectory(prefix="gate-replay-") as scratch:
        if labels is not None and labels.stores:
            from gate.replay import sandbox

            with redirect_home(scratch):
                paths_for, replay.store_ids = sandbox.build(scratch, labels.stores)
                empty = ProjectPaths.for_cwd(_empty_project(scratch))
                settings = load_settings(empty.root)
                for timeline in timelines:
                    paths = paths_for.get(timeline.path, empty)
                    replay.runs[timeline.path] = replay_timeline(
                        timeline, paths, settings, rules_overlay, by_transcript.get(timeline.path), agent_search
                    )
                    replay.store_ids.setdefault(timeline.path, set())
            return replay
        from gate.memory.index import MemoryIndex

        MemoryIndex(project).catch_up()  # as `gate search` does: the hooks then find the index current
        settings = load_settings(project.root)
        with redirect_state(os.path.join(scratch, "state")):
            sandboxed = ProjectPaths.for_cwd(project.root)  # carries the redirected state directory
            for timeline in timelines:
                replay.runs[timeline.path] = replay_timeline(
                    timeline, sandboxed, settings, rules_overlay, by_transcript.get(timeline.path), agent_search
                )
    return replay


def _empty_project(home: str) -> str:
    root = os.path.join(home, "projects", "no-store")
    os.makedirs(os.path.join(root, ".git"), exist_ok=True)
    return root


def skipped_lines(replay: Replay) -> dict[str, Any]:
    skipped: dict[str, int] = {}
    repaired: dict[str, int] = {}
    for timeline in replay.timelines():
        for cause, count in timeline.skipped.items():
            skipped[cause] = skipped.get(cause, 0) + count
        for cause, count in timeline.repaired.items():
            repaired[cause] = repaired.get(cause, 0) + count
    return {"skipped": dict(sorted(skipped.items())), "repaired": dict(sorted(repaired.items()))}
