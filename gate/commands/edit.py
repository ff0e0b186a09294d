"""`gate edit ID`: open the memory's TOML in $EDITOR; the result is validated before it replaces the file.

`--cues TEXT` / `--add-cues TEXT` set or extend the memory's cue words without an editor. Either way the version
replaced is kept (`gate show --history ID`)."""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from gate.commands._common import add_project_option, open_store
from gate.errors import GateError, ValidationError
from gate.memory.model import Memory
from gate.memory.store.anchor_paths import fields_to_project
from gate.memory.store.files import to_toml
from gate.memory.store.store import Store


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "edit",
        help="edit a memory in $EDITOR, or set its cue words",
        description="Opens the memory's TOML in $VISUAL or $EDITOR (vi in a terminal); the result is validated "
        "before it replaces the file, and an invalid edit is kept in a temporary file, named. Without a "
        "terminal and without $EDITOR it refuses: use --cues / --add-cues. The version replaced is kept "
        "(`gate show --history ID`).",
    )
    parser.add_argument("memory_id", metavar="ID")
    cues = parser.add_mutually_exclusive_group()
    cues.add_argument("--cues", metavar="TEXT", default=None,
                      help="replace its cue words (how someone would ask about it), without an editor; the cues "
                      "gate added from the turn it was written in go too")
    cues.add_argument("--add-cues", metavar="TEXT", default=None, help="add cue words to the ones it has")
    add_project_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    memory = store.get(args.memory_id)
    if args.cues is not None or args.add_cues is not None:
        return _set_cues(store, memory, args.cues, args.add_cues)
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor and not (sys.stdin.isatty() and sys.stdout.isatty()):
        # The agent's Bash tool has no terminal: a default vi there hangs or prints escape codes.
        raise ValidationError(
            f"gate edit {memory.id} opens an editor, and there is no terminal here (and no $EDITOR); nothing changed",
            hint=f"`gate edit {memory.id} --cues TEXT` or `--add-cues TEXT` change its cue words without one; "
            f"for other fields set EDITOR (or VISUAL) to a command that edits the file it is given, or replace "
            f"the memory: `gate remember TEXT --supersedes {memory.id}`",
        )
    with tempfile.TemporaryDirectory() as tmp:
        draft = Path(tmp) / f"{memory.id}.toml"
        draft.write_text(to_toml(memory), encoding="utf-8")
        if _run_editor([*shlex.split(editor or "vi"), str(draft)]) != 0:
            raise GateError(f"the editor failed; nothing changed ({_keep(draft)})")
        try:
            data = tomllib.loads(draft.read_text(encoding="utf-8"))
            # an absolute path inside the project is made relative; a new one outside it is refused
            fields_to_project(data, store.paths.root, keep=(memory.paths, memory.triggers))
            edited = Memory.from_dict(data, fill_defaults=False)
        except (tomllib.TOMLDecodeError, ValidationError) as error:
            raise ValidationError(f"the edit is not a valid memory ({error}); nothing changed",
                                  hint=f"{_keep(draft)}: fix it there, then run `gate edit {memory.id}` again "
                                  "and copy it in") from error
        text = draft.read_text(encoding="utf-8")  # for the refusals below, after the draft is gone
    if edited.id != memory.id:
        raise ValidationError(f"the id cannot change in an edit; nothing changed ({_keep(text, memory.id)})")
    if edited.status == "superseded" and memory.status != "superseded":
        raise ValidationError(
            f"status \"superseded\" is not written by hand; nothing changed ({_keep(text, memory.id)})",
            hint=f"a successor's link supersedes it: `gate link NEW_ID supersedes {memory.id}`; "
            f"or `gate forget {memory.id}`",
        )
    if edited.to_dict() == memory.to_dict():
        print("no change")
        return 0
    edited.scope = memory.scope
    if edited.paths != memory.paths:  # new anchors: their files' hashes now, as `gate remember` records them
        store.anchor(edited)
    if edited.source == "agent":
        edited.source = "human"  # a person edited it: it is no longer only an agent's claim
    try:
        store.update(edited)
    except GateError as error:  # refused (a secret, a link to nothing): the text stays where it can be fixed
        raise type(error)(f"{error} ({_keep(text, memory.id)})", error.hint) from None
    except KeyboardInterrupt:  # the file is the old memory or the new one (atomic write); the text is not lost
        raise GateError(f"interrupted; the memory may not have changed ({_keep(text, memory.id)})",
                        hint=f"`gate show {memory.id}` shows which; run `gate edit {memory.id}` again and copy it in") \
            from None
    print(f"updated {edited.id}")
    return 0


def _run_editor(command: list[str]) -> int:
    """Run the editor in the foreground; its exit status. Ctrl-C reaches the whole terminal group: the editor
    handles it (vi ignores it), and gate must not die of it, or the draft and the text saved in it go with the
    temporary directory (as git ignores SIGINT while its editor runs)."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return subprocess.call(command, preexec_fn=_default_sigint)
    finally:
        signal.signal(signal.SIGINT, previous)


def _default_sigint() -> None:
    """In the editor's process: Ctrl-C as it would be without gate (an ignored signal is inherited)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _keep(draft: Path | str, memory_id: str = "") -> str:
    """Copy an edit that was not applied to a file of its own (0600, kept), and say where it is."""
    text = draft.read_text(encoding="utf-8") if isinstance(draft, Path) else draft
    name = draft.stem if isinstance(draft, Path) else memory_id
    fd, kept = tempfile.mkstemp(prefix="gate-edit-", suffix=f"-{name}.toml")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return f"your text is kept in {kept}"


def _set_cues(store: Store, memory: Memory, replace: str | None, add: str | None) -> int:
    # Replacing says what the cues are now: gate's cues from the turn go with the old ones. Adding keeps both.
    derived = memory.derived_cues if replace is None else ""
    if replace is not None:
        cues = " ".join(replace.split())
    else:
        added = " ".join((add or "").split())
        cues = f"{memory.cues}; {added}" if memory.cues and added else memory.cues or added
    if cues == memory.cues and derived == memory.derived_cues:
        print("no change")
        return 0
    memory.cues, memory.derived_cues = cues, derived
    store.update(memory, action="cues")
    print(f"updated {memory.id}: cues = {cues!r}" if cues else f"updated {memory.id}: no cues")
    if derived:
        print(f"cues from the turn (added by gate), kept: {derived!r}")
    return 0
