"""The shipped rules and the project's own: present and parseable."""

from __future__ import annotations

from pathlib import Path

from gate.install.diagnose.base import Check
from gate.paths import ProjectPaths


def rules_health(root: Path) -> list[Check]:
    import tomllib

    from gate.rules import shipped_rules_dir

    directory = Path(shipped_rules_dir())
    found = sorted(directory.glob("*.toml")) if directory.is_dir() else []
    if not found:
        return [Check("rules", "fail", f"no rules found in {directory}", "reinstall gate; the rules ship with it")]
    broken = []
    for path in found:
        try:
            tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            broken.append(f"{path.name}: {error}")
    for layer in (Path(ProjectPaths.for_cwd(root).root, ".gate", "rules"),):
        for path in sorted(layer.glob("*.toml")) if layer.is_dir() else []:
            try:
                tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                broken.append(f"{path}: {error}")
    if broken:
        return [Check("rules", "fail", f"unreadable rules: {'; '.join(broken)}")]
    return [Check("rules", "ok", f"{len(found)} rule files in {directory}")]
