"""Every command the README and docs/*.md show runs as written.

Each page's ```sh blocks run in order, in one bash (`-euo pipefail`, so a variable a block sets is there in the
next), in a throwaway HOME and GATE_HOME with "your project" at ~/code/my-project (a git repository):
- the README and docs/development.md in the checkout, with the venv NOT on PATH (a newcomer's shell);
- the other pages in the project, with `gate` on PATH and the project wired (`gate install`), which is where
  the README's set-up leaves a newcomer.
A block that cannot run so says why on the line before its fence: `<!-- not run: WHY -->`. The README's own
set-up (`./install.sh ~/code/my-project`) runs for real: pip is kept off the network (PIP_NO_INDEX), which works
because install.sh skips pip when the venv already holds gate from this checkout, and the checkout must be as
clean afterwards as before.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
PAGES = ["README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md"))]
IN_CHECKOUT = {"README.md", "docs/development.md"}
CI_BLOCKS = ("set-up", "tests")  # the README blocks .ci/run runs (scripts/readme-block.sh)
_MARK = re.compile(r"^<!--\s*(.*?)\s*-->\s*$")


@dataclass
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    text: str
    marks: dict[str, str]

    @property
    def runs(self) -> bool:
        return "not run" not in self.marks


def blocks(page: str) -> list[Block]:
    """The ```sh blocks of a page, with the marks of an HTML comment on the line right before each."""
    lines = (REPO / page).read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        if lines[index].strip() == "```sh":
            start = index
            index += 1
            body = []
            while index < len(lines) and lines[index].strip() != "```":
                body.append(lines[index])
                index += 1
            marks: dict[str, str] = {}
            comment = _MARK.match(lines[start - 1]) if start else None
            if comment:
                marks = _marks(comment.group(1))
            found.append(Block(page, start + 1, "\n".join(body), marks))
        index += 1
    return found


def _marks(comment: str) -> dict[str, str]:
    """`ci: NAME`, `not run: WHY`, or `ci: NAME; not run: WHY` (the reason is the rest of the comment)."""
    marks: dict[str, str] = {}
    if comment.startswith("ci:"):
        name, _, comment = comment[3:].partition(";")
        marks["ci"] = name.strip()
        comment = comment.strip()
    if comment.startswith("not run:"):
        marks["not run"] = comment[len("not run:") :].strip()
    elif comment:
        marks[comment] = ""  # not a mark this test knows: reported
    return marks


def _venv_stamp_is_current() -> bool:
    """install.sh's record that .venv holds gate from this checkout and pyproject.toml as it is now."""
    stamp = REPO / ".venv" / ".gate-installed"
    if not stamp.is_file():
        return False
    import hashlib

    digest = hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest()
    return stamp.read_text().strip() == f"{REPO} {digest}"


def _path_without_venv() -> str:
    parts = [p for p in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep) if p and Path(p) != VENV_BIN]
    return os.pathsep.join(parts)


def _script(page: str) -> str:
    steps = []
    for block in blocks(page):
        if block.runs:
            steps.append(f"printf '\\n### {page}:{block.line}\\n' >&2\n{block.text}\n")
    return "".join(steps)


def _git_status() -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--ignored=no"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout


@pytest.mark.parametrize("page", PAGES)
def test_not_run_marks_say_why(page: str) -> None:
    found = blocks(page)
    if page == "README.md":
        assert found, "the README shows commands"
    for block in found:
        unknown = set(block.marks) - {"not run", "ci"}
        assert not unknown, f"{page}:{block.line}: unknown mark(s) {unknown}"
        if not block.runs:
            assert len(block.marks["not run"].split()) >= 4, f"{page}:{block.line}: say why it is not run"


def test_the_readme_names_the_blocks_ci_runs() -> None:
    named = [b for b in blocks("README.md") if "ci" in b.marks]
    assert sorted(b.marks["ci"] for b in named) == sorted(CI_BLOCKS)
    setup = next(b for b in named if b.marks["ci"] == "set-up")
    assert setup.runs and "./install.sh" in setup.text  # the set-up runs here too, as written
    for name in CI_BLOCKS:
        proc = subprocess.run(
            ["bash", str(REPO / "scripts" / "readme-block.sh"), name], capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.rstrip("\n") == next(b.text for b in named if b.marks["ci"] == name)
    run = (REPO / ".ci" / "run").read_text()
    assert all(f"readme-block.sh {name}" in run for name in CI_BLOCKS)


def _runnable_pages() -> list[str]:
    return [page for page in PAGES if any(block.runs for block in blocks(page))]


def test_the_readme_and_most_pages_have_commands_that_run() -> None:
    runnable = _runnable_pages()
    assert "README.md" in runnable and len(runnable) >= len(PAGES) // 2, runnable


@pytest.mark.parametrize("page", _runnable_pages())
def test_commands_run_as_written(page: str, tmp_path: Path) -> None:
    script = _script(page)
    home = tmp_path / "home"
    project = home / "code" / "my-project"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GATE_", "CLAUDE", "VIRTUAL_ENV", "PIP_"))}
    env.update(
        HOME=str(home),
        GATE_HOME=str(tmp_path / "gate-home"),
        PIP_NO_INDEX="1",  # a test sends no traffic: install.sh must find gate installed and skip pip
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    if page in IN_CHECKOUT:
        cwd = REPO
        env["PATH"] = _path_without_venv()
        if "install.sh" in script:
            assert _venv_stamp_is_current(), (
                "pyproject.toml changed since .venv was set up (or install.sh never ran here): run ./install.sh"
            )
    else:
        cwd = project
        env["PATH"] = f"{VENV_BIN}{os.pathsep}{_path_without_venv()}"
        wired = subprocess.run(
            [str(VENV_BIN / "gate"), "install", "--project", str(project)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert wired.returncode == 0, wired.stderr
    before = _git_status()
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    failed_at = [line for line in proc.stderr.splitlines() if line.startswith("### ")]
    assert proc.returncode == 0, (
        f"{page}: a command failed in the block at {failed_at[-1][4:] if failed_at else '?'} "
        f"(exit {proc.returncode})\nstderr (end): {proc.stderr[-3000:]}\nstdout (end): {proc.stdout[-2000:]}"
    )
    assert _git_status() == before, f"{page}'s commands left the checkout changed"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but - and _ dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", PAGES)
def test_links_between_pages_resolve(page: str) -> None:
    """The README sends a reader to the docs pages, and they to each other: every relative link arrives."""
    text = (REPO / page).read_text(encoding="utf-8")
    for target, anchor in re.findall(r"\]\((?!https?:)([^)#\s]*)(?:#([^)\s]+))?\)", text):
        path = (REPO / page).parent / target if target else REPO / page
        assert path.is_file(), f"{page}: link to {target} goes nowhere"
        if anchor:
            headings = re.findall(r"^#+\s+(.*)$", path.read_text(encoding="utf-8"), re.MULTILINE)
            assert anchor in {_slug(h) for h in headings}, f"{page}: no heading #{anchor} in {target or page}"
