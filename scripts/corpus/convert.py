#!/usr/bin/env python3
"""Convert one exported Claude Code session (markdown or /export text) to the CLI's transcript JSONL.

    python scripts/corpus/convert.py EXPORT.md [-o OUT.jsonl]

The format is detected from the text (see exports/). The output is deterministic: the same export always gives
the same bytes. A summary goes to stderr. Exit 2 when the file is not a known export or not UTF-8 text.
A dev tool (the standard library, and gate's transcript reader to classify lines); converted sessions are
other people's text and stay out of the repository.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from exports import UnknownFormat
from exports import convert as convert_text
from exports.classify import Counts, count_lines


class ExportError(Exception):
    """The file cannot be converted; `reason` says why."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.reason = reason


def convert_file(path: Path) -> tuple[str, bytes, Counts]:
    """(format, JSONL bytes, counts of the output plus what the conversion skipped) for one export file."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise ExportError(path, f"not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise ExportError(path, error.strerror or str(error)) from None
    try:
        name, writer = convert_text(text.replace("\r\n", "\n"), seed=path.name)
    except UnknownFormat as error:
        raise ExportError(path, str(error)) from None
    data = writer.jsonl()
    counts = count_lines(data.split(b"\n")[:-1])
    counts.skipped.update(writer.skipped)
    counts.skipped.update({f"note: {k}": v for k, v in writer.notes.items()})
    return name, data, counts


def write_atomically(path: Path, data: bytes) -> bool:
    """Write unless the file already holds exactly these bytes; True when written."""
    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return True


def summary(name: str, counts: Counts) -> str:
    text = (
        f"{name}: {counts.lines} lines, {counts.prompts} prompts, {counts.commands} commands, {counts.turns} turns, "
        f"{counts.assistant_lines} assistant lines, {counts.tool_calls} tool calls, {counts.tool_results} results"
    )
    if counts.skipped:
        text += "; skipped: " + ", ".join(f"{cause} {n}" for cause, n in sorted(counts.skipped.items()))
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("export", type=Path, help="the exported session (markdown or /export text)")
    parser.add_argument("-o", "--out", type=Path, help="where to write the JSONL (default: stdout)")
    args = parser.parse_args(argv)
    try:
        name, data, counts = convert_file(args.export)
    except ExportError as error:
        print(f"convert: {error}", file=sys.stderr)
        return 2
    if args.out:
        write_atomically(args.out, data)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    print(summary(name, counts), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
