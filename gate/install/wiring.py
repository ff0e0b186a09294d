"""What gate wires into a Claude Code settings file, and how it is added and removed again.

Gate's hook entries are recognised by a marker at the end of their command (a shell comment, as pre-commit
marks the hook scripts it writes): `uninstall` removes exactly those entries and whatever container only they
filled, and nothing else. Claude Code runs hook commands with `/bin/sh -c`, so the comment is inert.
"""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gate.install import jsonedit, launcher
from gate.install.launcher import RELATIVE as LAUNCHER

MARKER = "# memory-gate"
_MARKER_RE = re.compile(r"#\s*memory-gate\s*$")

# Every event the hook entry dispatches on, with the matcher that selects it and a timeout in seconds.
# UserPromptSubmit sits far under Claude Code's 30 s default: a recall that slow is a bug, and a prompt must
# never wait on it. Matchers: tool names for PreToolUse, `source` for SessionStart; the others take none.
# PreToolUse's is a regular expression (Claude Code tests a matcher that is not a plain `A|B` list as one), anchored
# so each tool name matches whole (Agent/Task: spawns), and MCP tools whose name says they write: a reading MCP
# call costs no hook process.


def _mcp_change_matcher() -> str:
    """The MCP tools the search-first check counts as a change (the shipped rules/triggers.toml [search_first]
    change_tools, mcp__SERVER__TOOL), as one expression: the hook is given exactly those calls."""
    import tomllib

    from gate.rules import shipped_rules_dir

    with open(Path(shipped_rules_dir()) / "triggers.toml", "rb") as handle:
        patterns = tomllib.load(handle).get("search_first", {}).get("change_tools", [])
    return "|".join(p for p in patterns if isinstance(p, str))


MCP_CHANGE_MATCHER = _mcp_change_matcher()
TOOL_MATCHER = rf"^(?:Read|Edit|Write|MultiEdit|NotebookEdit|Grep|Glob|Bash|Agent|Task)$|{MCP_CHANGE_MATCHER}"


@dataclass(frozen=True)
class EventSpec:
    event: str
    matcher: str | None
    timeout: int


EVENTS: tuple[EventSpec, ...] = (
    EventSpec("SessionStart", "startup|resume|clear|compact", 10),
    EventSpec("UserPromptSubmit", None, 10),
    EventSpec("PreToolUse", TOOL_MATCHER, 5),
    EventSpec("Stop", None, 10),
    EventSpec("PreCompact", None, 10),
    EventSpec("SubagentStop", None, 5),  # audited only: it never answers (gate/gates/recall/subagent.py)
)
EVENT_NAMES: tuple[str, ...] = tuple(spec.event for spec in EVENTS)


def default_python() -> str:
    """The interpreter running gate now, unresolved: a venv's bin/python is a symlink that must stay one."""
    executable = sys.executable
    if not executable or not Path(executable).is_absolute():
        from gate.errors import GateError

        raise GateError(
            "cannot tell which Python interpreter runs gate (sys.executable is empty)",
            "run gate from its virtual environment, e.g. .venv/bin/gate install",
        )
    return executable


def hook_command(python: str) -> str:
    """The command for every event: the hook entry under an absolute interpreter, so no PATH is needed.

    `-I -S` and an explicit sys.path, as the launcher runs it (gate/install/launcher.py): `-I` keeps the
    session's cwd off sys.path (a project with its own `gate/` package must not shadow gate), `-S` skips `site`.
    `-c` rather than `-m gate.hook`: -m loads runpy and importlib.util first, ~3 ms on every hook run.
    """
    return f"{shlex.join(launcher.hook_argv(python))} {MARKER}"


# The commands a project settings file gets (it is usually committed, so they name no machine's paths): run this
# machine's launcher (gate/install/launcher.py), found under $HOME when the hook runs; where there is none (a
# teammate without gate), drain the event and exit 0. Claude Code runs them with /bin/sh -c. They hold no prose:
# the CLI may show a command to the model (after a `decision: block` it sent "Stop hook blocking error from
# command: "<the command>": …", measured on 2.1.332; an earlier command said "memory-gate is not set up on this
# machine" there, while gate was blocking). SessionStart, which never blocks and is never echoed, adds the one
# line a teammate without gate is shown: a `systemMessage`, which the CLI shows the user ("SessionStart:startup
# says: …") and not the model; a few words, naming what is missing and where to read more.
def portable_command(agent_args: tuple[str, ...] = ()) -> str:
    """The committed command that runs this machine's launcher (told the agent, for another agent than Claude
    Code), or drains the event and exits 0 where there is none."""
    run = " ".join(('exec /bin/sh "$l"', *agent_args))
    return f'l="$HOME/{LAUNCHER}"; [ -f "$l" ] && {run}; cat >/dev/null 2>&1; exit 0 {MARKER}'


PORTABLE_COMMAND = portable_command()
# The other agents whose project hooks file runs the launcher (gate/hosts/<agent>/install.py): one command for
# every event, PORTABLE_COMMAND told the agent. Their CLIs are not shown a line at session start.
PORTABLE_AGENTS = ("codex", "gemini")
NOT_INSTALLED = "memory-gate not installed: its hooks do nothing here (see its README)"
# The message goes out in a JSON string inside '...': no single quote, double quote or backslash in it.
PORTABLE_SESSION_START = PORTABLE_COMMAND.replace(
    "exit 0", f"""echo '{{"systemMessage":"{NOT_INSTALLED}"}}'; exit 0""")
_PORTABLE = frozenset({PORTABLE_COMMAND, PORTABLE_SESSION_START} | {
    portable_command(("--agent", agent)) for agent in PORTABLE_AGENTS})


def _earlier(message: str, agent_args: tuple[str, ...] = ()) -> str:
    return portable_command(agent_args).replace("exit 0", f"echo '{message}' >&2; exit 0")


# The set-up messages earlier commands carried (on stderr, then at SessionStart in a `systemMessage`).
_EARLIER_MESSAGES = (
    "memory-gate: the hooks of this project run memory-gate, which is not set up on this machine, so they do "
    "nothing here; to set it up, run ./install.sh in a memory-gate checkout, then gate install in this project",
    "memory-gate: the hooks of this project run memory-gate, which is not set up on this machine, so they do "
    "nothing here; to set it up, run ./install.sh /path/to/this/project in a memory-gate checkout (one "
    "command: it installs gate and runs gate install for this project)",
    "memory-gate is not set up on this machine, so its hooks do nothing; to set it up, run "
    "./install.sh /path/to/this/project in a memory-gate checkout",
)
# Portable commands an earlier gate committed to Claude Code's settings: one command for every event with the
# set-up message on stderr, then SessionStart's with it in a long `systemMessage`. Still portable, not "another
# machine's path"; `gate install` replaces them with the current ones, and `gate uninstall` removes them (every
# gate command carries the marker).
EARLIER_PORTABLE = frozenset({
    _earlier(_EARLIER_MESSAGES[0]),
    _earlier(_EARLIER_MESSAGES[1]),
    PORTABLE_COMMAND.replace("exit 0", f"""echo '{{"systemMessage":"{_EARLIER_MESSAGES[2]}"}}'; exit 0"""),
})
# ... and to Codex's and Gemini's project hooks files: one command for every event, the message on stderr.
EARLIER_AGENT_PORTABLE = frozenset(
    _earlier(message, ("--agent", agent)) for agent in PORTABLE_AGENTS for message in _EARLIER_MESSAGES[1:])


def commands_for(scope: str, python: str) -> dict[str, str]:
    """The command of each event. Project scope: the portable commands; local and user settings never leave this
    machine, so they name its interpreter directly (one process fewer per hook), the same for every event."""
    if scope == "project":
        return {name: PORTABLE_SESSION_START if name == "SessionStart" else PORTABLE_COMMAND for name in EVENT_NAMES}
    command = hook_command(python)
    return dict.fromkeys(EVENT_NAMES, command)


def is_portable(command: str) -> bool:
    """A committed command of this gate or an earlier one (any agent's): it runs this machine's launcher."""
    return command in _PORTABLE or command in EARLIER_PORTABLE or command in EARLIER_AGENT_PORTABLE


def is_gate_command(command: Any) -> bool:
    return isinstance(command, str) and bool(_MARKER_RE.search(command))


def interpreter_of(command: str) -> str | None:
    """The interpreter a gate command runs (the first shell word), or None when it cannot be read."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return None
    return words[0] if words else None


def desired_groups(commands: dict[str, str], events: tuple[EventSpec, ...] = EVENTS) -> dict[str, dict[str, Any]]:
    """Gate's matcher group for each event (running that event's command), in the order Claude Code's docs list
    the keys (`events`: another agent's, e.g. gate/hosts/codex/install.py)."""
    groups: dict[str, dict[str, Any]] = {}
    for spec in events:
        group: dict[str, Any] = {}
        if spec.matcher is not None:
            group["matcher"] = spec.matcher
        group["hooks"] = [{"type": "command", "command": commands[spec.event], "timeout": spec.timeout}]
        groups[spec.event] = group
    return groups


# --- reading a settings document -----------------------------------------------------------------------------


@dataclass(frozen=True)
class GateEntry:
    """One of gate's hook entries as found in a settings file."""

    event: str
    group_index: int
    hook_index: int
    command: str
    group: dict[str, Any]


def find_gate_entries(data: Any) -> list[GateEntry]:
    """Every hook entry carrying gate's marker, whatever group it sits in."""
    found: list[GateEntry] = []
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        for group_index, group in enumerate(groups):
            entries = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(entries, list):
                continue
            for hook_index, entry in enumerate(entries):
                if isinstance(entry, dict) and is_gate_command(entry.get("command")):
                    found.append(GateEntry(event, group_index, hook_index, entry["command"], group))
    return found


def is_installed_exactly(data: Any, commands: dict[str, str], events: tuple[EventSpec, ...] = EVENTS) -> bool:
    """True when the document holds gate's desired groups and no other gate entry."""
    desired = desired_groups(commands, events)
    entries = find_gate_entries(data)
    if len(entries) != len(desired):
        return False
    return all(entry.event in desired and entry.group == desired[entry.event] for entry in entries)


# --- editing ------------------------------------------------------------------------------------------------


class SettingsShapeError(ValueError):
    """The document is JSON but not shaped like a settings file where gate must write."""


@dataclass
class Document:
    """A settings file's text, edited in place (a UTF-8 byte order mark is kept aside and put back)."""

    text: str
    bom: str = ""

    @classmethod
    def from_text(cls, text: str) -> Document:
        if text.startswith("\ufeff"):
            return cls(text[1:], "\ufeff")
        return cls(text)

    def full_text(self) -> str:
        return self.bom + self.text

    def root(self) -> jsonedit.Node:
        return jsonedit.parse(self.text)

    def data(self) -> Any:
        return jsonedit.loads_strict(self.text)


def _remove_one_gate_entry(doc: Document) -> bool:
    """Remove the first gate entry and any container it alone filled; False when none is left."""
    data = doc.data()
    entries = find_gate_entries(data)
    if not entries:
        return False
    entry = entries[0]
    root = doc.root()
    hooks_node = root.member("hooks")
    assert hooks_node is not None
    event_index = hooks_node.member_index(entry.event)
    groups_node = hooks_node.children[event_index]
    group_node = groups_node.children[entry.group_index]
    entries_node = group_node.member("hooks")
    assert entries_node is not None
    if len(entries_node.children) > 1:
        doc.text = jsonedit.remove_child(doc.text, entries_node, entry.hook_index)
    elif len(groups_node.children) > 1:
        doc.text = jsonedit.remove_child(doc.text, groups_node, entry.group_index)
    elif len(hooks_node.children) > 1:
        doc.text = jsonedit.remove_child(doc.text, hooks_node, event_index)
    else:
        doc.text = jsonedit.remove_child(doc.text, root, root.member_index("hooks"))
    return True


def unmerge(text: str) -> str:
    """The text without any of gate's entries; every other byte is kept."""
    doc = Document.from_text(text)
    doc.data()  # raises JSONSyntaxError before anything else
    while _remove_one_gate_entry(doc):
        pass
    return doc.full_text()


def _check_shape(data: Any, events: tuple[EventSpec, ...] = EVENTS) -> None:
    if not isinstance(data, dict):
        raise SettingsShapeError("the top level is not a JSON object")
    hooks = data.get("hooks")
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        raise SettingsShapeError('"hooks" is not an object')
    for spec in events:
        groups = hooks.get(spec.event)
        if groups is not None and not isinstance(groups, list):
            raise SettingsShapeError(f'"hooks.{spec.event}" is not a list')


def merge(text: str | None, commands: dict[str, str], events: tuple[EventSpec, ...] = EVENTS) -> str:
    """The text with gate's groups wired in: unchanged when they already are, else old entries (whatever command
    an earlier gate wrote) replaced."""
    if text is None or not text.strip():
        fresh = {"hooks": {event: [group] for event, group in desired_groups(commands, events).items()}}
        return jsonedit.render(fresh, "", "  ", True) + "\n"
    doc = Document.from_text(text)
    data = doc.data()
    _check_shape(data, events)
    if is_installed_exactly(data, commands, events):
        return text
    while _remove_one_gate_entry(doc):
        pass
    root = doc.root()
    unit = jsonedit.detect_indent_unit(doc.text, root)
    for event, group in desired_groups(commands, events).items():
        root = doc.root()
        hooks_node = root.member("hooks")
        if hooks_node is None:
            doc.text = jsonedit.append_child(doc.text, root, {event: [group]}, unit, key="hooks")
            continue
        groups_node = hooks_node.member(event)
        if groups_node is None:
            doc.text = jsonedit.append_child(doc.text, hooks_node, [group], unit, key=event)
        else:
            doc.text = jsonedit.append_child(doc.text, groups_node, group, unit)
    return doc.full_text()
