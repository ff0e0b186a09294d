"""The per-session fire ledger (hot path): one small JSON file per session, shared by every gate.

It holds what was delivered in the current compaction window, the recent-topic record, the write-back
gate's blocks and pending outcome, and the compaction boundary. Every evaluation runs inside
`open_ledger()`, which holds an exclusive flock on the session's lock file for the load-modify-save, so two
hooks of one session racing (two Stop hooks, say) cannot lose an update or break the write-back cap.
"""

from __future__ import annotations

import fcntl
import os
import time

from gate import fastjson as json  # json.loads and json.dumps without the json package (gate/fastjson.py)
from gate.paths import ensure_private_dir, replace_file, sessions_dir, sha256_builtin

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

VERSION = 1
_SAFE_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"


def session_file_stem(session_id: str) -> str:
    """A file name for any session id: the id itself when harmless, else a hash of it."""
    # (str methods rather than a regex: compiling one costs the hook more than this check)
    if 0 < len(session_id) <= 100 and not session_id.strip(_SAFE_CHARS) and session_id not in {".", ".."}:
        return session_id
    return "h-" + sha256_builtin(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


# field -> default factory; the ledger file is exactly these keys
_FIELDS: dict[str, Any] = {
    "session": str,
    "project": str,  # the checkout the session runs in
    "project_id": str,  # its project (gate/project_id.py): what cross-session lookups (`gate mute --status`) match
    "version": lambda: VERSION,
    "created": time.time,
    "updated": time.time,
    "window": int,  # compaction windows seen; deliveries dedup within one window
    # Why the next real prompt counts as a shift whatever it says: "session" (new session) or "compaction".
    "force_shift": lambda: "session",
    "prompts": int,
    "delivered": list,  # ids delivered in this window, in order
    "delivered_total": int,
    "anchors_fired": dict,  # trigger key -> time, this window
    "cooldowns": dict,  # memory id -> last delivery time, all windows
    "topic": dict,
    "compaction_pending": bool,
    "writeback_blocks": int,
    "writeback_pending": lambda: None,  # the last block, until the next Stop tells its outcome
    "writeback_outcomes": list,
    "muted": bool,
    "injected_chars": int,
    # pairs of terms that name a memory delivered in this window: a prompt naming only those has nothing new
    "spent_pairs": list,
    # The write-back reminder (gate/gates/writeback/reminder.py): a turn the Stop did not block but deferred to the next
    # prompt. The turn ends the gate has judged (a reminder names its turn by this count), the reminder waiting
    # for the next prompt, the one delivered until the next Stop tells its outcome, and how many were delivered.
    "writeback_turns": int,
    "writeback_reminder": lambda: None,
    "writeback_reminded": lambda: None,
    "writeback_reminders": int,
    # The head of the last prompt: a Stop whose turn reads from a compaction boundary on has no prompt of its own
    # (who wrote it — a person, a program, a teammate agent — still matters to the write-back gate).
    "writeback_prompt_head": str,
    # Subagents (gate/gates/recall/subagent.py): each one's own delivery state, by agent id (a subagent's context is
    # not the parent's), and the deliveries made at spawns that no subagent has claimed yet.
    "agents": dict,
    "spawns": dict,
    # What the session's last blocked or stored fix was about (gate/gates/writeback/fixguard.py): a debugging loop
    # blocks once; later fixes about the same files, commands or names defer to a reminder until the topic changes.
    "writeback_fix_guard": lambda: None,
    # The search the recall gate asked the agent for in this turn (gate/gates/recall/search_first.py): the
    # prompt it was asked at, why, and whether the agent has searched, been refused or reminded since. None when
    # this turn asked for none; every prompt replaces it.
    "search_request": lambda: None,
    # The agent's own `gate search` / `gate show` runs in this session, newest last (at most MAX_AGENT_SEARCHES):
    # what it asked and what came back, which counts as delivered.
    "agent_searches": list,
    # What the session-start context of this window showed of each memory (in full or as an index line): id ->
    # a fingerprint of its text then. A resumed conversation still holds that context, so a resume shows only
    # what is new or changed since (gate/gates/recall/standing.py).
    "start_shown": dict,
}
MAX_AGENT_SEARCHES = 50
AGENT_QUERY_CHARS = 200


def _same_kind(value: Any, default: Any) -> bool:
    if default is None:
        return value is None or isinstance(value, dict)
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, type(default)) and not (isinstance(value, bool) and not isinstance(default, bool))


class Ledger:
    """One session's state. A plain class, not a dataclass: the hook pays for every import (see bench/)."""

    __slots__ = tuple(_FIELDS)
    session: str
    project: str
    project_id: str
    version: int
    created: float
    updated: float
    window: int
    force_shift: str
    prompts: int
    delivered: list[str]
    delivered_total: int
    anchors_fired: dict[str, float]
    cooldowns: dict[str, float]
    topic: dict[str, Any]
    compaction_pending: bool
    writeback_blocks: int
    writeback_pending: dict[str, Any] | None
    writeback_outcomes: list[str]
    muted: bool
    injected_chars: int
    spent_pairs: list[str]
    writeback_turns: int
    writeback_reminder: dict[str, Any] | None
    writeback_reminded: dict[str, Any] | None
    writeback_reminders: int
    writeback_prompt_head: str
    agents: dict[str, dict[str, Any]]
    spawns: dict[str, dict[str, Any]]
    writeback_fix_guard: dict[str, Any] | None
    search_request: dict[str, Any] | None
    agent_searches: list[dict[str, Any]]
    start_shown: dict[str, str]

    def __init__(self, session: str, **values: Any) -> None:
        for name, factory in _FIELDS.items():
            default = factory()
            value = values.get(name, default)
            if not _same_kind(value, default):
                value = default  # a damaged field costs at most one repeated delivery, never the hook
            setattr(self, name, value)
        self.session = session

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _FIELDS}

    def mark_delivered(self, ids: list[str]) -> None:
        now = time.time()
        for memory_id in ids:
            if memory_id not in self.delivered:
                self.delivered.append(memory_id)
            self.cooldowns[memory_id] = now
        self.delivered_total += len(ids)

    def note_start_shown(self, fingerprints: dict[str, str], *, fresh: bool) -> None:
        """What a session start showed; `fresh`: a new context window (what an earlier start showed is gone)."""
        self.start_shown = {**({} if fresh else self.start_shown), **fingerprints}

    # --- the search the agent must run (issue 29) ------------------------------------------------------------
    def ask_search(self, prompt_id: str, reason: str) -> None:
        """This turn asks the agent for a search of its own before it changes anything."""
        self.search_request = {"prompt": prompt_id, "reason": reason, "at": round(time.time(), 3),
                               "searched": False, "refused": False, "reminded": False}

    def open_search_request(self, prompt_id: str) -> dict[str, Any] | None:
        """This turn's search request while the agent has not searched yet: asked at this prompt (when the event
        names one — a request left by a prompt whose own hook failed is not this prompt's), else None."""
        request = self.search_request
        if request is None or request.get("searched"):
            return None
        asked_at = request.get("prompt")
        return None if prompt_id and asked_at and asked_at != prompt_id else request

    def note_search_seen(self) -> None:
        """The agent ran `gate search` or `gate show` in this turn (its Bash call was seen)."""
        if self.search_request is not None:
            self.search_request["searched"] = True

    def record_agent_search(self, command: str, query: str, found: list[str]) -> None:
        """What the agent's own search or show returned: delivered, as if a gate had injected it. (Whether it meets
        the turn's request is PreToolUse's to say: it sees whether the call is the main agent's or a subagent's.)"""
        self.mark_delivered(found)
        entry = {"at": round(time.time(), 3), "command": command, "query": query[:AGENT_QUERY_CHARS],
                 "found": found}
        self.agent_searches = [*self.agent_searches, entry][-MAX_AGENT_SEARCHES:]

    def rearm(self) -> None:
        """A new compaction window: what was delivered before may be delivered again."""
        self.window += 1
        self.delivered = []
        self.start_shown = {}
        self.spent_pairs = []
        self.anchors_fired = {}
        self.force_shift = "compaction"
        self.compaction_pending = False


def ledger_path(session_id: str) -> str:
    return os.path.join(sessions_dir(), f"{session_file_stem(session_id)}.json")


def _load(path: str, session_id: str) -> Ledger:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return Ledger(session=session_id)
    except (OSError, ValueError):
        return Ledger(session=session_id)  # a damaged ledger costs at most one repeated delivery
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return Ledger(session=session_id)
    session = data.pop("session", session_id)
    return Ledger(str(session), **{k: v for k, v in data.items() if k in _FIELDS})


def _save(path: str, ledger: Ledger) -> None:
    ledger.updated = time.time()
    replace_file(path, json.dumps(ledger.to_dict(), separators=(",", ":")))  # dumps: C encoder; dump(): Python


class open_ledger:
    """Load the session's ledger under an exclusive lock; save it on normal exit.

    A class rather than @contextlib.contextmanager: contextlib costs the hook ~2 ms to import."""

    def __init__(self, session_id: str, *, save: bool = True) -> None:
        self.session_id = session_id
        self.save = save
        self.lock_fd = -1

    def __enter__(self) -> Ledger:
        directory = ensure_private_dir(sessions_dir())
        stem = session_file_stem(self.session_id)
        self.path = os.path.join(directory, f"{stem}.json")
        self.lock_fd = os.open(os.path.join(directory, f"{stem}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX)
            self.ledger = _load(self.path, self.session_id)
        except BaseException:
            os.close(self.lock_fd)
            raise
        return self.ledger

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            if exc_type is None and self.save:
                _save(self.path, self.ledger)
        finally:
            os.close(self.lock_fd)  # closing releases the flock, also when the process is killed


def read_ledger(session_id: str) -> Ledger | None:
    path = ledger_path(session_id)
    return _load(path, session_id) if os.path.exists(path) else None


SWEEP_INTERVAL_S = 86400.0  # ledgers are swept for age at most once a day (and at least once per max age)
SWEEP_STAMP = ".swept"  # in the sessions directory; its mtime is when the last sweep began


def clean_old_ledgers(max_age_days: float) -> int:
    """Remove ledgers untouched for longer than max_age_days, with their lock files — at most once a day.

    The sweep stats every ledger (thousands, for a heavy or scripted user), so a session start between two
    sweeps pays one stat of the stamp file instead. A lock file's mtime never moves (it is only flock'd), so it
    goes with its ledger, never on its own age: deleting the lock of a live session would let two hooks lock
    two different files."""
    if os.environ.get("GATE_DOCTOR"):
        return 0  # `gate doctor`'s synthetic session start informs and changes nothing
    now = time.time()
    directory = sessions_dir()
    stamp = os.path.join(directory, SWEEP_STAMP)
    try:
        if now - os.stat(stamp).st_mtime < min(SWEEP_INTERVAL_S, max_age_days * 86400):
            return 0
    except OSError:
        pass  # never swept (or the stamp went): sweep now
    try:
        os.close(os.open(stamp, os.O_WRONLY | os.O_CREAT, 0o600))
        os.utime(stamp, (now, now))  # before the sweep: a start meanwhile does not sweep again
    except OSError:
        return 0  # no sessions directory yet: nothing to sweep
    cutoff = now - max_age_days * 86400
    removed = 0
    try:
        entries = {entry.name: entry for entry in os.scandir(directory)}
    except FileNotFoundError:
        return 0
    for name, entry in entries.items():
        try:
            if entry.stat().st_mtime >= cutoff:
                continue
            if name.endswith(".json"):
                os.unlink(entry.path)
                removed += 1
                lock = entries.get(name[: -len(".json")] + ".lock")
                if lock is not None:
                    os.unlink(lock.path)
            elif name.endswith(".tmp"):
                os.unlink(entry.path)  # left by a hook killed between write and rename
        except OSError:
            continue
    return removed
