"""`gate edit ID`: open the memory's TOML in $EDITOR; the result is validated before it replaces the file."""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import tempfile
import tomllib
from pathlib import Path

from gate.commands._common import add_project_option, open_store
from gate.errors import GateError, ValidationError
from gate.memory.files import to_toml
from gate.memory.model import Memory


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("edit", help="edit a memory in $EDITOR")
    parser.add_argument("memory_id", metavar="ID")
    add_project_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    memory = store.get(args.memory_id)
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory() as tmp:
        draft = Path(tmp) / f"{memory.id}.toml"
        draft.write_text(to_toml(memory), encoding="utf-8")
        if subprocess.call([*shlex.split(editor), str(draft)]) != 0:
            raise GateError("the editor failed; nothing changed")
        try:
            data = tomllib.loads(draft.read_text(encoding="utf-8"))
            edited = Memory.from_dict(data, fill_defaults=False)
        except (tomllib.TOMLDecodeError, ValidationError) as error:
            raise ValidationError(f"the edit is not a valid memory ({error}); nothing changed") from error
    if edited.id != memory.id:
        raise ValidationError("the id cannot change in an edit; nothing changed")
    if edited.to_dict() == memory.to_dict():
        print("no change")
        return 0
    edited.scope = memory.scope
    if edited.source == "agent":
        edited.source = "human"  # a person edited it: it is no longer only an agent's claim
    store.update(edited)
    print(f"updated {edited.id}")
    return 0
