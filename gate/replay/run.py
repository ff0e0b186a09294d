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


def _distinct_sessions(timelines: list[Timeline]) -> None:
    """Give each transcript a session id of its own: the transcripts of an agent team's teammates (and some
    exports) carry one session id between them, and each is replayed as a session of its own (its own ledger), so
    a deferral one of them ends with is another's to take at its start — and is scored as that one's alone."""
    seen: dict[str, int] = {}
    for timeline in timelines:
        count = seen.get(timeline.session_id, 0)
        seen[timeline.session_id] = count + 1
        if count:
            timeline.session_id = f"{timeline.session_id}~{count}"
            for step in timeline.steps:
                step.event["session_id"] = timeline.session_id


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
    _distinct_sessions(timelines)
    with tempfile.TemporaryDirectory(prefix="gate-replay-") as scratch:
        if labels is not None and labels.stores:
            from gate.replay import sandbox

            with redirect_home(scratch):
                paths_for, replay.store_ids = sandbox.build(scratch, labels.stores)
                settings = load_settings(ProjectPaths.for_cwd(_empty_project(scratch, "")).root)
                empty: dict[str, ProjectPaths] = {}  # recorded project -> the storeless project of its sessions
                runs: dict[str, SessionRun] = {}
                left: dict[str, ProjectPaths] = {}  # project -> where its last replayed session left its state
                for timeline in _by_project_in_time(timelines, labels.stores):
                    project_of = _project_of(timeline, labels.stores)
                    paths = paths_for.get(timeline.path)
                    if paths is None:
                        if project_of not in empty:
                            empty[project_of] = ProjectPaths.for_cwd(_empty_project(scratch, f"p{len(empty):04d}"))
                        paths = empty[project_of]
                    if project_of in left:
                        _carry_state(left[project_of], paths)
                    runs[timeline.path] = replay_timeline(
                        timeline, paths, settings, rules_overlay, by_transcript.get(timeline.path), agent_search
                    )
                    left[project_of] = paths
                    replay.store_ids.setdefault(timeline.path, set())
                replay.runs = {t.path: runs[t.path] for t in timelines}  # reported in the order given
            return replay
        from gate.memory.index.read import MemoryIndex

        MemoryIndex(project).catch_up()  # as `gate search` does: the hooks then find the index current
        settings = load_settings(project.root)
        runs = {}
        for number, group in enumerate(_by_recorded_project(timelines)):
            # One state directory per recorded project: what one session leaves for the next (its deferred turns,
            # gate/session/carryover.py; the prompt table) reaches the sessions of its own project, in the order
            # they began, never another project's.
            with redirect_state(os.path.join(scratch, "state", f"p{number:04d}")):
                sandboxed = ProjectPaths.for_cwd(project.root)  # carries the redirected state directory
                for timeline in group:
                    runs[timeline.path] = replay_timeline(
                        timeline, sandboxed, settings, rules_overlay, by_transcript.get(timeline.path), agent_search
                    )
        replay.runs = {t.path: runs[t.path] for t in timelines}  # reported in the order given
    return replay


def _recorded_project(timeline: Timeline) -> str:
    """The project a session was recorded in: the working directory Claude Code gave it, else its folder."""
    return timeline.cwd or os.path.dirname(timeline.path)


def _project_of(timeline: Timeline, stores: dict[str, str]) -> str:
    """A session's project in a labelled replay: its store's (one store file per project), else the recorded one."""
    store = stores.get(timeline.path)
    return f"store:{store}" if store else f"recorded:{_recorded_project(timeline)}"


def _by_project_in_time(timelines: list[Timeline], stores: dict[str, str]) -> list[Timeline]:
    """The sessions of each project in the order they began: what one session left (the prompt table,
    gate/session/prompt_terms.py; its deferred turns, gate/session/carryover.py) reaches the sessions after it, as it
    would have live."""
    from gate.replay.sandbox import session_start

    return sorted(timelines, key=lambda t: (_project_of(t, stores), session_start(t.path), t.path))


def _by_recorded_project(timelines: list[Timeline]) -> list[list[Timeline]]:
    """The sessions grouped by the project they were recorded in, each group in the order its sessions began."""
    from gate.replay.sandbox import session_start

    groups: dict[str, list[Timeline]] = {}
    for timeline in timelines:
        groups.setdefault(_recorded_project(timeline), []).append(timeline)
    return [sorted(group, key=lambda t: (session_start(t.path), t.path)) for group in groups.values()]


def prompt_table(paths: ProjectPaths) -> str:
    from gate.session.prompt_terms import table_file

    return table_file(paths)


def _carry_state(previous: ProjectPaths, paths: ProjectPaths) -> None:
    """A session with a store has a project of its own (its store as it was then); what the real project keeps
    between sessions (the prompt table, the deferred turns) is the project's, so the session starts from what its
    project's previous session left."""
    import shutil

    from gate.session.carryover import carry_file

    for source, target in ((prompt_table(previous), prompt_table(paths)), (carry_file(previous), carry_file(paths))):
        if os.path.abspath(target) == os.path.abspath(source):
            continue  # the sessions of a project without a store share one project, and so its state
        if os.path.exists(source):
            os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
            shutil.copyfile(source, target)
        elif os.path.exists(target):
            os.remove(target)


def _empty_project(home: str, name: str) -> str:
    root = os.path.join(home, "projects", "no-store", name)
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
