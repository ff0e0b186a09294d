"""`gate remember TITLE …`: store one fact; prints the new id."""

from __future__ import annotations

import argparse
import re
import sys

from gate.commands._common import add_json_option, add_project_option, open_store, print_json
from gate.errors import DuplicateError, ValidationError
from gate.memory.cues.staleness import anchor_hashes
from gate.memory.cues.triggers import normalize as normalize_trigger
from gate.memory.model import KINDS, LINK_TYPES, SCOPES, Link, Memory
from gate.memory.store.anchor_paths import base_dir, to_project, triggers_to_project

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gate.hosts.shell import AgentShell
    from gate.paths import ProjectPaths

DEFAULT_KIND = "finding"
EVENT, GATE = "Remember", "remember"  # the audit record of an agent's write (gate/stats/agents.py counts them)
DEFAULT_SCOPE = "private"
# A fact names something and says something of it: one word (or one character) is a note to oneself, not a memory
# anyone can be reminded of. Each character of an unspaced script (Chinese, Japanese) counts as a word.
MIN_TITLE_WORDS = 2
_WORD = re.compile(r"[^\W_]+")
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "remember", help=f"store a memory (prints its id; a {DEFAULT_KIND}, {DEFAULT_SCOPE}, unless --kind/--scope)",
        description=f"Store one fact: a {DEFAULT_KIND} in the {DEFAULT_SCOPE} store unless --kind and --scope say "
        "otherwise. A fact that restates a live memory is refused with exit status 4, naming it: --supersedes ID "
        "replaces it, --link relates:ID keeps both linked, --new keeps both.",
    )
    parser.add_argument("title", help=f"one line that carries the fact itself (at least {MIN_TITLE_WORDS} words)")
    parser.add_argument("--body", help="details; '-' reads them from stdin")
    parser.add_argument(
        "--cues", default="", metavar="TEXT",
        help="how someone would ask about it: symptoms, error text, other names for the thing "
        "(e.g. --cues 'customer charged twice, duplicate payment intent'); searched with their own weight",
    )
    parser.add_argument("--kind", default=DEFAULT_KIND, choices=KINDS, help=f"default: {DEFAULT_KIND}")
    parser.add_argument("--tag", action="append", default=[], dest="tags",
                        help="a label to group and find it by (searched too); repeatable")
    parser.add_argument("--path", action="append", default=[], dest="paths", metavar="GLOB",
                        help="anchor to files: a path or glob relative to the cwd, or absolute, inside the project "
                        "(stored relative to its root); repeatable")
    parser.add_argument(
        "--on", action="append", default=[], dest="triggers", metavar="TRIGGER",
        help="deliver it by itself when the cue appears; repeatable, any one may fire. TRIGGER is clauses "
        "joined by commas, all of which must hold: path:GLOB (a tool touches a matching file; ** spans "
        "directories), command:REGEX (a Bash command about to run), keyword:WORDS (all in the prompt), "
        "event:session-start|post-compaction|prompt|pre-edit|pre-run, and the modifiers not-before:DATE, "
        "expires:DATE (YYYY-MM-DD, UTC, or +30d) and cooldown:DURATION (30m, 2h, 1d). "
        "E.g. --on 'path:src/db/**,expires:2027-01-01' --on 'command:alembic (upgrade|downgrade)'. "
        "Without --on: a memory of any kind with --path shows when a tool first touches its file; directives, "
        "preferences and tasks also at session start and after compaction; the rest come through the recall "
        "search (the defaults are rules/triggers.toml [defaults])",
    )
    parser.add_argument(
        "--scope", default=DEFAULT_SCOPE, choices=SCOPES,
        help=f"default: {DEFAULT_SCOPE} (yours, kept outside the repository); team: in the repository, seen by "
        "everyone who clones it; user: yours, in every project",
    )
    parser.add_argument("--supersedes", action="append", default=[], metavar="ID",
                        help="this memory replaces memory ID, which is no longer delivered (kept on disk); "
                        "repeatable")
    parser.add_argument("--link", action="append", default=[], metavar="TYPE:ID",
                        help=f"typed link, TYPE one of {', '.join(LINK_TYPES)}; repeatable")
    parser.add_argument("--id", dest="memory_id", help="choose the id (3-40 of a-z, 0-9, '-')")
    parser.add_argument(
        "--new", action="store_true", dest="allow_duplicate",
        help="keep it even if it looks like a live memory (without it, a restatement is refused, exit 4)",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--human", action="store_const", const="human", dest="source",
                        help="written by a person, not an agent (the default at a terminal, outside Claude Code)")
    source.add_argument("--agent", action="store_const", const="agent", dest="source",
                        help="written by an agent (the default inside Claude Code, or without a terminal)")
    source.add_argument("--user-stated", action="store_const", const="user", dest="source",
                        help="the user's own words")
    parser.add_argument("--session", default="", help=argparse.SUPPRESS)
    add_project_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run)


def written_by(shell: AgentShell | None = None) -> str:
    """Who is running `gate remember` when no option says: an agent inside Claude Code, Codex CLI or Gemini CLI
    (their shells set variables of their own, gate/hosts/shell.py, and may give the command a terminal), a
    person typing at a terminal, and an agent when in doubt (a script, another tool's shell)."""
    if shell is not None:
        return "agent"
    try:
        at_terminal = sys.stdin.isatty() or sys.stdout.isatty()  # `| jq` or `--body - < notes` is still a person
    except (AttributeError, ValueError):  # a closed or replaced stream
        at_terminal = False
    return "human" if at_terminal else "agent"


def check_is_a_fact(title: str, body: str) -> None:
    """A title of one word (or one character) with nothing else says no fact: `gate remember "x"` was kept."""
    words = len(_WORD.findall(title)) + sum(len(run) - 1 for run in _UNSPACED.findall(title))
    if words >= MIN_TITLE_WORDS:
        return
    details = "; the body only details the fact the title states" if body else ""
    # the title is not quoted back: a lone word pasted by mistake may be a credential
    raise ValidationError(
        f"not a fact: the title has {words} word{'' if words == 1 else 's'}, a fact needs at least "
        f"{MIN_TITLE_WORDS} (the thing and what holds of it){details}; nothing was written",
        hint='write the fact itself as one line, e.g. gate remember "Deploys need approval from the release '
        'manager" (details in --body)',
    )


# A whole `<…>` with words in it: what a template leaves for the writer to fill in.
_PLACEHOLDER = re.compile(r"<[^<>\n]+>")
# Ids the block message and its hints write as placeholders (rules/messages.toml: <ID>, OLD_ID, ID).
_ID_PLACEHOLDERS = re.compile(r"^(?:<[^<>]*>|(?:OLD_|NEW_)?ID)$")


def template_placeholders(root: str) -> list[str]:
    """The placeholders of the write-back block's store command (`<one-line fact>`, `<why, where, how to
    verify>` …), as the project's rules word it; the shipped ones if the rules cannot be read."""
    from gate.rules import load_rules

    try:
        command = str(load_rules("messages", root)["writeback"]["command"])
    except Exception:  # a broken override: the shipped wording is what an agent most likely copied
        command = '"<one-line fact>" --body "<why, where, how to verify>" --cues "<how it would be asked>"'
    return sorted(set(_PLACEHOLDER.findall(command)))


def check_not_a_placeholder(fields: dict[str, str], root: str) -> None:
    """A memory copied from the MEMORY CHECK template, placeholders and all, says no fact: refused. A field that
    is one `<…>` and nothing else, or holds one of the template's placeholders as written, is still a template."""
    placeholders = template_placeholders(root)
    for name, text in fields.items():
        stripped = text.strip()
        whole = bool(stripped) and _PLACEHOLDER.fullmatch(stripped) is not None
        copied = next((p for p in placeholders if p.lower() in stripped.lower()), None)
        if whole or copied:
            # a template's own placeholder is quoted; other text is not (a lone pasted value may be a credential)
            what = f"holds the template's placeholder {copied!r}" if copied else "is only a <…> placeholder"
            raise ValidationError(
                f"the {name} {what}: write the fact itself; nothing was written",
                hint="replace each <…> with what you found, e.g. gate remember \"Invoice dates are stored in "
                "UTC and shown in the customer's zone\" --body \"billing/invoice.py; tests/test_invoice.py "
                "checks it\"",
            )


def check_target(target: str, option: str) -> None:
    """A link target still written as the hint's placeholder (`fixes:<ID>`, `--supersedes OLD_ID`)."""
    if _ID_PLACEHOLDERS.match(target.strip()):
        raise ValidationError(
            f"{option} {target.strip()!r} is a placeholder, not a memory id; nothing was written",
            hint="replace it with a memory id, e.g. from `gate search WORDS` or `gate list` (ids look like m-7f3a9c)",
        )


def parse_link(text: str) -> Link:
    link_type, sep, target = text.partition(":")
    if not sep or not target:
        raise ValidationError(f"bad --link {text!r}", hint=f"write TYPE:ID, TYPE one of {', '.join(LINK_TYPES)}")
    check_target(target, f"--link {link_type.strip()}:")
    return Link(link_type.strip(), target.strip())


def in_git(root: str) -> bool:
    """Whether the project directory is a git checkout (`.git` a directory, or a worktree's file)."""
    import os

    return os.path.exists(os.path.join(root, ".git"))


def note_outside_git(root: str) -> None:
    """A project outside git is allowed (the directory is the project), but said: a memory stored from a
    directory that is not the one sessions start in would otherwise be missed without a word."""
    if not in_git(root):
        print(f"gate: stored in the project {root}, which is not a git repository: sessions started in that "
              "directory find it, sessions started anywhere else (a directory below it included) do not; "
              "--project DIR names another project", file=sys.stderr)


def check_in_a_project(project: str | None) -> None:
    """Without --project, a cwd of the home directory or / (no git checkout above it) is no project: a memory
    written there would go to a store nobody's session reads."""
    import os

    from gate.paths import project_root

    if project is not None:
        return
    root = project_root()
    if in_git(root):
        return
    if root in (os.path.realpath(os.path.expanduser("~")), os.path.realpath(os.sep)):
        raise ValidationError(
            f"{root} is not a project (no git checkout here or above); nothing was written",
            hint="run it in your project's directory, or name it: gate remember … --project DIR",
        )


def run(args: argparse.Namespace) -> int:
    import os

    from gate.hosts.shell import agent_shell

    shell = agent_shell()  # which agent's shell runs this, if any: recorded with the memory and in the audit
    check_in_a_project(args.project)
    store = open_store(args)
    body = args.body or ""
    if body == "-":
        body = sys.stdin.read()
    if args.triggers or args.paths:  # before the specs are parsed: a refusal must not quote what it refuses
        from gate.memory.store.secrets import refuse_secrets

        refuse_secrets({"trigger": "\n".join(args.triggers), "paths": " ".join(args.paths)}, store.paths.root)
    # Stored relative to the project root, as the anchors gate sees a tool's path: an agent's absolute path
    # and a person's path relative to a subdirectory both fire; one outside the project is refused.
    root = store.paths.root
    try:
        base = base_dir(root, os.getcwd())
    except OSError:  # the cwd was deleted
        base = root
    # the template copied whole is named as such before its `--link fixes:<ID>` is
    check_not_a_placeholder({"title": args.title, "body": body, "cues": args.cues}, root)
    for target in args.supersedes:
        check_target(target, "--supersedes")
    paths = [to_project(path, root, base) for path in args.paths]
    specs = triggers_to_project(args.triggers, root, base)
    memory = Memory(
        id=args.memory_id or store.fresh_id(),
        kind=args.kind,
        title=args.title.strip(),
        body=body.strip(),
        cues=" ".join(args.cues.split()),
        derived_cues=_turn_cues(args, store.paths),
        tags=args.tags,
        scope=args.scope,
        paths=paths,
        triggers=[normalize_trigger(spec) for spec in specs],  # +30d -> a date
        links=[parse_link(text) for text in args.link],
        source=args.source or written_by(shell),
        session=args.session or (shell.session if shell else ""),
        agent=shell.agent if shell else "",
    )
    memory.validate()  # an empty or overlong title is named as such before the shape of a fact is judged
    check_is_a_fact(memory.title, memory.body)
    if memory.paths:  # hashed with the glob meaning of path triggers (`src/db/**`: every file beneath)
        store.anchor(memory)
    try:
        store.remember(memory, supersedes=args.supersedes, refuse_duplicates=not args.allow_duplicate)
    except DuplicateError as error:
        if not args.json:
            raise
        print_json({"refused": "near_duplicate", "error": str(error), "matches": error.matches})
        return error.exit_code
    if shell is not None:
        _audit_write(memory, store.paths, shell)
    if args.json:
        print_json({"id": memory.id, **({"derived_cues": memory.derived_cues} if memory.derived_cues else {})})
    else:
        print(memory.id)
        if memory.derived_cues:  # on stderr, as the notes below: a script reads the id alone from stdout
            print(f"cues added from the turn: {memory.derived_cues}", file=sys.stderr)
    if memory.scope != "user":  # a user memory belongs to no project
        note_outside_git(store.paths.root)
    _note_unmatched_paths(memory, store.paths.root)
    _note_no_path_cue(memory, store.paths.root)
    return 0


def _audit_write(memory: Memory, paths: ProjectPaths, shell: AgentShell) -> None:
    """One audit record (event Remember, gate remember) for a memory an agent's shell stored: `gate stats` counts
    per agent what each wrote. A person's write records nothing, as a person's search does not. Never raises: the
    memory is stored already."""
    try:
        from gate.session.audit import write_audit
        from gate.settings import load_settings

        settings = load_settings(paths.root, problems=[])
        if not settings.get("audit", True):
            return
        write_audit({"session": memory.session, "project": paths.root, "project_id": paths.key, "event": EVENT,
                     "gate": GATE, "decision": "stored",
                     "reason": "AGENT_REMEMBER", "id": memory.id, "kind": memory.kind, "scope": memory.scope,
                     "agent": shell.agent}, int(settings.get("audit_max_bytes", 20_000_000)))
    except Exception:  # bookkeeping: the memory is stored, the agent must see its id
        pass


def _turn_cues(args: argparse.Namespace, paths: ProjectPaths) -> str:
    """Cue words from the turn the agent writes this memory in, when it wrote none (gate/session/turn_cues.py);
    "" outside an agent's session, without a transcript, or when reading it fails: the memory is stored anyway."""
    import os

    from gate.session.agent_search import agent_session

    session = agent_session()
    if args.cues.strip() or session is None or (args.session and args.session != session):
        return ""
    try:
        from gate.session.turn_cues import for_session

        try:
            cwd: str | None = os.getcwd()
        except OSError:  # the cwd was deleted
            cwd = None
        return for_session(session, paths, cwd, args.title).text
    except Exception:  # cues are a help: no reading of a transcript may cost the agent its memory
        return ""


def _note_unmatched_paths(memory: Memory, root: str) -> None:
    """A --path that names no file yet is kept (the file may be about to be written), with a note on stderr:
    there is no hash to check until the file exists."""
    for glob in memory.paths:
        if not anchor_hashes(root, [glob]):
            print(f"note: --path {glob} matches no file yet; the memory shows when a tool touches one, and "
                  f"`gate verify {memory.id} --refresh` records its hash once it exists", file=sys.stderr)


def _note_no_path_cue(memory: Memory, root: str) -> None:
    """A --path that will not show the memory at its file — the rules give its kind no path cue and it declares
    none of its own — is said at write time, not found out later."""
    if not memory.paths:
        return
    from gate.memory.cues.shards import defaults_from
    from gate.memory.cues.triggers import effective_triggers
    from gate.rules import load_rules

    try:
        defaults = defaults_from(load_rules("triggers", root))
    except Exception:  # the rules cannot be read: the hooks say so; the memory is stored
        return
    if any(trigger.get("paths") for trigger in effective_triggers(memory.to_dict(), defaults)):
        return
    print(f"note: this {memory.kind} will not show when the agent touches {', '.join(memory.paths)}: the rules "
          f"give the kind {memory.kind} no path cue (rules/triggers.toml [defaults]) and it has no --on path:…; "
          f"it comes through the recall search. To show it at the file, add --on 'path:{memory.paths[0]}'",
          file=sys.stderr)
