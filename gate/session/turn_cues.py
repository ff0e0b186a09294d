"""Cue words from the turn a memory is written in (cold path: `gate remember`, and `gate replay` to measure them).

An agent that stores a memory without --cues leaves it findable by its title and body only: the words someone
asks with later are often the ones the user asked with when the fact was found, and the error the turn saw.
So `gate remember`, run by the agent of a Claude Code session, reads that session's current turn from its
transcript and keeps, apart from the writer's cues (Memory.derived_cues):

- the words the user's prompt used most that are not common in this project (the project's prompt-terms table,
  gate/session/prompt_terms.py; stopwords, short words, numbers and hashes out), at most `max_words`;
- the error lines of the turn's failed tool calls (rules/text.toml [pasted_log] error_lines, stack frames out;
  gate's own commands left out: their refusals are gate's, not the project's), at most `max_error_lines`.

Nothing that looks like a secret is kept (a word or line a secret pattern matches is dropped). No session, no
transcript, a turn without a prompt: no cues, and nothing said. Limits: rules/remember.toml [turn_cues].

The transcript may lag the command that reads it: Claude Code appends its lines from a queue it writes on a
100 ms timer, and runs a tool without waiting for that write (measured on 2.1.332). A `gate remember` that
starts early finds its turn's prompt but not yet the result of the command that failed just before it. So
the turn is read again until the call that runs this command is in the file (settled_turn): lines are written
in the order they were queued, and that call was queued after everything the model had seen.
"""

from __future__ import annotations

import os
import re
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

    from gate.paths import ProjectPaths
    from gate.session.prompt_terms import PromptTerms
    from gate.session.turn import Turn

_POLL_SECONDS = 0.02  # between two reads of a transcript that does not hold the running call yet
_SPAWN_TOOLS = ("Agent", "Task")  # a subagent's calls are written to its own transcript, not the session's

_TOKEN = re.compile(r"[^\W_]+")  # the analyzer's tokens (gate/textproc.py TOKEN), as the user wrote them


class TurnCues:
    """The words and the error lines a turn gives a memory, in the order they are kept."""

    __slots__ = ("errors", "words")

    def __init__(self, words: list[str] | None = None, errors: list[str] | None = None) -> None:
        self.words = list(words or [])
        self.errors = list(errors or [])

    @property
    def text(self) -> str:
        """As stored: the words, then each error line, `; ` between them."""
        return "; ".join(part for part in [" ".join(self.words), *self.errors] if part)

    def __bool__(self) -> bool:
        return bool(self.words or self.errors)


def _number(rules: Mapping[str, Any], key: str, default: int | float) -> Any:
    value = rules.get(key, default)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else default


def _is_unspaced(word: str) -> bool:
    from gate.textproc import UNSPACED

    return not word.isascii() and re.search(UNSPACED, word) is not None


def _pieces(tokens: list[str], unspaced: str) -> list[str]:
    """The tokens as words: a run of an unspaced script (Chinese, Japanese) kept whole ("run"), cut into the
    two-character pieces the index searches ("pairs"), or left out ("none"); other tokens as they are."""
    from gate.textproc import UNSPACED

    if unspaced == "run" or all(token.isascii() for token in tokens):
        return tokens
    pattern = re.compile(UNSPACED)
    out: list[str] = []
    for token in tokens:
        for part in re.split(f"({UNSPACED})", token) if not token.isascii() else [token]:
            if not part:
                continue
            if not pattern.fullmatch(part):
                out.append(part)
            elif unspaced == "pairs":
                out += [part[i : i + 2] for i in range(max(1, len(part) - 1))]
    return out


def _mostly_digits(word: str) -> bool:
    """A number, a version, a hash: no word anyone asks with."""
    digits = sum(char.isdigit() for char in word)
    return digits > 0 and 2 * digits >= len(word)


def prompt_words(
    prompt: str,
    rules: Mapping[str, Any],
    common: Callable[[str], bool],
    text_rules: Mapping[str, Any],
    keep: Callable[[str], bool] = lambda raw: True,
) -> list[str]:
    """The prompt's words that say something in this project, most used first (ties: first said first), each
    once (by its stems: `tests` and `test` are one word), as the user first wrote it, lowercased. `keep` sees
    each word as written (a secret's pattern may know its case)."""
    from gate.pasted import searchable
    from gate.textproc import stopwords, terms

    least, longest = int(_number(rules, "min_word_chars", 3)), int(_number(rules, "max_word_chars", 30))
    unspaced = str(rules.get("unspaced", "none"))
    counts: dict[tuple[str, ...], int] = {}
    first: dict[tuple[str, ...], str] = {}
    words = stopwords()
    for raw in _pieces(_TOKEN.findall(searchable(prompt, text_rules)), unspaced):  # a pasted log: its error lines
        word = raw.lower()
        if len(word) > longest or word in words or _mostly_digits(word):
            continue
        if (len(word) < least and not _is_unspaced(word)) or not keep(raw):
            continue
        stems = tuple(terms(raw))
        if not stems or all(common(stem) for stem in stems):
            continue
        counts[stems] = counts.get(stems, 0) + 1
        first.setdefault(stems, word)
    order = {key: index for index, key in enumerate(first)}
    ranked = sorted(counts, key=lambda key: (-counts[key], order[key]))
    return [first[key] for key in ranked[: int(_number(rules, "max_words", 10))]]


def _gates_own(turn: Turn, tool_use_id: str) -> bool:
    """A call that ran a gate subcommand (a refused `gate remember`, say): its errors are gate's own."""
    from gate.commandline import read_command

    for use in turn.tool_uses:
        if use.id == tool_use_id and use.name == "Bash":
            return bool(read_command(str(use.input.get("command", "")), {}).gate_subcommands)
    return False


def _cut(line: str, most: int) -> str:
    if len(line) <= most:
        return line
    head = line[:most]
    return (head.rsplit(" ", 1)[0] if " " in head[most // 2 :] else head).rstrip()


def turn_errors(turn: Turn, rules: Mapping[str, Any], text_rules: Mapping[str, Any]) -> list[str]:
    """The error lines of the turn's failed tool calls, first seen first."""
    from gate.pasted import error_lines

    most = int(_number(rules, "max_error_lines", 3))
    longest = int(_number(rules, "max_error_chars", 160))
    found: list[str] = []
    for result in turn.tool_results:
        if len(found) >= most:
            break
        if not result.is_error or _gates_own(turn, result.tool_use_id):
            continue
        for line in error_lines(result.text, text_rules, most):
            line = _cut(line, longest)
            if line not in found and len(found) < most:
                found.append(line)
    return found


def derive(
    turn: Turn,
    rules: Mapping[str, Any],
    common: Callable[[str], bool],
    text_rules: Mapping[str, Any],
    project_root: str | None = None,
) -> TurnCues:
    """The cues one turn gives a memory written in it (rules: rules/remember.toml [turn_cues])."""
    from gate.memory.store.secrets import find_secret, find_secrets

    # A background task's notification (a subagent's report, a command's end) is not the user's words; a
    # compaction summary left no prompt at all.
    prompt = "" if turn.report or turn.prompt.lstrip().startswith("<task-notification>") else turn.prompt
    # A word is checked as written, and so is the prompt: no piece of a secret the prompt holds is kept.
    pieces = find_secrets(prompt, project_root) if prompt else []

    def keep(raw: str) -> bool:
        return not find_secret(raw, project_root) and not any(raw in piece for piece in pieces)

    clean = prompt_words(prompt, rules, common, text_rules, keep)
    errors = [e for e in turn_errors(turn, rules, text_rules) if not find_secret(e, project_root)]
    cues = TurnCues(clean, errors)
    most = int(_number(rules, "max_chars", 500))
    while cues and len(cues.text) > most:  # the error lines go first, the last word after them
        if cues.errors:
            cues.errors.pop()
        else:
            cues.words.pop()
    if cues and find_secret(cues.text, project_root):  # a secret only the words together make
        return TurnCues()
    return cues


def find_transcript(session: str, roots: Iterable[str]) -> str | None:
    """The transcript of a Claude Code session: `<config>/projects/<key>/<session>.jsonl`, the key the project's
    (or the cwd's) path as Claude Code makes it; else any project folder that holds the session."""
    from gate.claude_code import project_sessions_dir
    from gate.install.files import claude_config_dir
    from gate.session.ledger import session_file_stem

    if not session or session_file_stem(session) != session:  # not a plain file name: no path is built from it
        return None
    name = f"{session}.jsonl"
    for root in roots:
        candidate = project_sessions_dir(root) / name
        if candidate.is_file():
            return str(candidate)
    try:
        folders = sorted((claude_config_dir() / "projects").iterdir())
    except OSError:
        return None
    return next((str(folder / name) for folder in folders if (folder / name).is_file()), None)


def common_in_project(table: PromptTerms, rules: Mapping[str, Any]) -> Callable[[str], bool]:
    """Whether a term is one most of the project's prompts use (once the table has counted enough of them)."""
    if table.prompts < int(_number(rules, "min_prompts", 30)):
        return lambda term: False
    share = float(_number(rules, "common_share", 0.2))
    return lambda term: table.share(term) >= share


def _names_title(command: str, title: str) -> bool:
    from gate.shellwords import split_words

    return title in command or title in (split_words(command) or [])


def runs_this_call(turn: Turn, title: str) -> bool:
    """Whether the turn holds the call that runs this `gate remember`: a Bash call still without a result whose
    command names the memory's title, a subagent still at work (its calls go to a transcript of its own), or
    the user's own `!` command that names it (a prompt of its own, `<bash-input>…`)."""
    done = {result.tool_use_id for result in turn.tool_results}
    for use in turn.tool_uses:
        if use.id in done:
            continue
        if use.name in _SPAWN_TOOLS:
            return True
        command = use.input.get("command")
        if use.name == "Bash" and isinstance(command, str) and _names_title(command, title):
            return True
    return turn.prompt.lstrip().startswith("<bash-input>") and title in turn.prompt


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def settled_turn(transcript: str, title: str, wait: float) -> Turn:
    """The current turn, once the call running this command is written (at most `wait` seconds later).

    Claude Code writes the lines it queued in order, and queues the message that asks for a call before it runs
    that call: when the call is in the file, so is every result the model had seen (the failed command's).
    Without it (a script the agent ran, whose command does not name the title), after `wait` seconds the turn
    is taken as it is. A torn last line is not parsed, so it counts as not written yet."""
    from gate.session.transcript import read_turn

    deadline = time.monotonic() + max(0.0, wait)
    while True:
        turn = read_turn(transcript)
        if turn.from_fallback or not title.strip() or runs_this_call(turn, title.strip()):
            return turn
        if time.monotonic() >= deadline:
            return turn
        _sleep(_POLL_SECONDS)


def for_session(session: str, paths: ProjectPaths, cwd: str | None = None, title: str = "") -> TurnCues:
    """The cues of the session's current turn, for a memory of the project `paths`. With the memory's `title`,
    the turn is read once the call that stores it is in the transcript (settled_turn; rules: wait_seconds)."""
    from gate.rules import load_rules
    from gate.session.prompt_terms import PromptTerms

    rules = load_rules("remember", paths.root).get("turn_cues", {})
    if not rules.get("enabled", True):
        return TurnCues()
    roots = [paths.root] + ([cwd] if cwd and os.path.realpath(cwd) != os.path.realpath(paths.root) else [])
    transcript = find_transcript(session, roots)
    if transcript is None:
        return TurnCues()
    turn = settled_turn(transcript, title, float(_number(rules, "wait_seconds", 5.0)))
    if turn.from_fallback:
        return TurnCues()
    common = common_in_project(PromptTerms.load(paths), rules)
    return derive(turn, rules, common, load_rules("text", paths.root), paths.root)
