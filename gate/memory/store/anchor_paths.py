"""A memory's file paths as the store keeps them: relative to the project root (cold path, write time only).

The anchors gate sees a tool's path argument relative to the project root (gate/gates/delivery/anchors.py), so a
`--path` or a `path:` trigger fires only when it is stored the same way. Agents pass absolute paths, people
type paths relative to the directory they are in; both are turned into the root-relative form here, with a
glob's pattern characters kept as written. A path outside the project can never fire: it is refused.
"""

from __future__ import annotations

import os

from gate.errors import ValidationError

_MAGIC = "*?["


def _inside(path: str, root: str) -> str | None:
    """`path` relative to `root` ('/'-separated, '' for the root itself), or None when it lies outside."""
    prefix = root.rstrip(os.sep) + os.sep
    for resolve in (os.path.normpath, os.path.realpath):  # as the anchors gate tries them, the cheap one first
        try:
            candidate = resolve(path)
        except (OSError, ValueError):  # a NUL byte, a name too long: it names no file
            return None
        if candidate == root:
            return ""
        if candidate.startswith(prefix):
            return candidate[len(prefix) :].replace(os.sep, "/")
    return None


def base_dir(root: str, cwd: str | None) -> str:
    """Where a relative path typed at the command line starts: the cwd when it lies in the project (`cd
    billing; gate remember … --path invoice.py`), else the project root (`--project DIR` from elsewhere)."""
    if cwd and _inside(cwd, root) is not None:
        return cwd
    return root


def _split(glob: str) -> tuple[str, str]:
    """(the literal directories and file before the first wildcard segment, the rest from there on)."""
    segments = glob.split("/")
    for index, segment in enumerate(segments):
        if any(ch in segment for ch in _MAGIC):
            return "/".join(segments[:index]), "/".join(segments[index:])
    return glob, ""


def to_project(value: str, root: str, base: str | None = None, *, what: str = "--path", strict: bool = True) -> str:
    """`value` (a path or glob) relative to the project root; ValidationError when it lies outside (unless not
    `strict`: then it is kept as it is, for `gate verify` to name — a rewrite of an old memory must not fail).

    Absolute paths are made relative to the root. A relative one is resolved against `base` (see base_dir)
    when given, else kept as it is (a file or an import is written relative to the root already)."""
    text = value.strip()
    if text.startswith("~"):
        text = os.path.expanduser(text)
    text = text.replace("\\", "/") if os.sep == "\\" else text
    absolute = os.path.isabs(text)
    if not absolute and base is None:
        return value
    head, tail = _split(text)
    if absolute and not head:
        head = text[:1]  # `/*/x`: the file system's root, not the cwd
    start = head if absolute else os.path.join(base or root, head)
    relative = _inside(start, root)
    if relative is None and not strict:
        return value
    if relative is None:  # the value is not repeated: a refusal must not quote what may be a secret
        where = "an absolute path outside the project" if absolute else "leaves the project"
        raise ValidationError(
            f"{what}: {where} ({root}); a tool call there never fires it; nothing was written",
            hint="anchor a memory to a file of this project, as a path relative to its root (src/app.py) or "
            "an absolute path inside it; a fact about another project belongs in that project's store",
        )
    joined = "/".join(part for part in (relative, tail) if part)
    return joined or "**"  # the project root itself: every file in it


def triggers_to_project(specs: list[str], root: str, base: str | None = None, *, strict: bool = True) -> list[str]:
    """Each spec with its `path:` clauses made relative to the project root; the other clauses as written."""
    from gate.memory.cues.triggers import split_clauses

    out = []
    for spec in specs:
        if not isinstance(spec, str) or "path:" not in spec.lower():
            out.append(spec)
            continue
        try:
            clauses = split_clauses(spec)
        except ValidationError:
            out.append(spec)  # the trigger's own check names what is wrong with it
            continue
        if not any(name == "path" for name, _ in clauses):
            out.append(spec)
            continue
        made = [(name, to_project(value, root, base, what="trigger 'path:…'", strict=strict) if name == "path"
                 else value)
                for name, value in clauses]
        changed = made != clauses
        out.append(",".join(f"{name}:{value}" for name, value in made) if changed else spec)
    return out


def fields_to_project(data: dict, root: str, base: str | None = None, *, keep: tuple[list[str], ...] = ()) -> None:
    """Make the `paths` and `triggers` of a memory's table (an import line, an edit) root-relative. A value in
    `keep` (what the memory held before an edit) is left as it is when it lies outside: only new ones are
    refused."""
    kept = {value for values in keep for value in values}
    paths = data.get("paths")
    if isinstance(paths, list) and all(isinstance(p, str) for p in paths):
        data["paths"] = [to_project(p, root, base, strict=p not in kept) for p in paths]
    triggers = data.get("triggers")
    if isinstance(triggers, list):
        data["triggers"] = [
            spec if spec in kept else triggers_to_project([spec], root, base)[0] for spec in triggers
        ]
