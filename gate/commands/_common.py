"""Pieces every subcommand shares: the --project and --json options, opening the store, printing."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from gate.memory.model import Memory
from gate.memory.store.store import Store


def add_project_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project", metavar="DIR", default=None, help="act on the project of DIR instead of the cwd"
    )


def add_json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def open_store(args: argparse.Namespace) -> Store:
    store = Store.for_cwd(getattr(args, "project", None))
    # Directory mtimes, as the hooks check them: a full stat pass costs ~1 s at 100k memories. Files edited
    # in place by hand (not through `gate edit`) are caught by `gate reindex` and `gate doctor`.
    store.catch_up()
    for path, reason in store.index.corrupt_files():
        print(f"gate: warning: skipped {path}: {reason}", file=sys.stderr)
    return store


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, ensure_ascii=False, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")


def index_line(memory: Memory | dict[str, Any]) -> str:
    data = memory.to_dict() if isinstance(memory, Memory) else memory
    status = "" if data["status"] == "active" else f" [{data['status']}]"
    return f"{data['id']} · {data['kind']} · {data['created'][:10]} · {data['title']}{status}"
