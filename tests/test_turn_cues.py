"""Cues without effort (issue 29): a memory the agent stores without --cues gets the words the user's prompt used
and the error lines the turn saw, from the session's transcript, kept apart from the writer's cues."""

from __future__ import annotations

import json
import shlex
import sys
import time
import tomllib
from pathlib import Path

import pytest

from gate.claude_code import project_sessions_dir
from gate.memory.store.secrets import find_secret
from gate.paths import ProjectPaths
from gate.rules import load_rules
from gate.session import turn_cues
from gate.session.prompt_terms import PromptTerms
from gate.session.transcript import read_turn
from gate.session.turn_cues import TurnCues, derive, find_transcript, for_session, prompt_words

sys.path.insert(0, str(Path(__file__).parent / "data"))
from cli_transcript import SESSION, Transcript

PROMPT = (
    "The nightly reconciliation job crashes when the ledger exporter runs; reconciliation must finish before "
    "the exporter starts. Please look at the reconciliation scheduler."
)
TRACEBACK = (
    "Exit code 1\nTraceback (most recent call last):\n"
    '  File "/workspace/project/jobs/reconcile.py", line 41, in run\n'
    "    totals = exporter.totals[batch]\n"
    "KeyError: 'ledger_exporter_batch'\n"
)
TITLE = "Reconciliation must run before the ledger exporter, or the exporter reads half-written totals"


def _running(t: Transcript, title: str, tool_id: str = "toolu_this_call") -> Transcript:
    """The Bash call that runs `gate remember TITLE`, as the transcript holds it while the command runs: asked for,
    no result yet."""
    command = f"gate remember {shlex.quote(title)} --kind gotcha"
    return t.assistant({"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}})


def _turn() -> Transcript:
    t = Transcript()
    t.prompt("rename the invoice printer module").say("Renamed.")
    t.prompt(PROMPT)
    t.noise("attachment").noise("api-request-blob")  # the gate's injected context: not the user's words
    t.tool("Bash", {"command": "pytest -q tests/test_reconcile.py"}, TRACEBACK, is_error=True)
    t.tool("Bash", {"command": 'gate remember "x y" --kind gotcha'}, "error: a near duplicate of m-1a2b3c",
           is_error=True)
    t.tool("Read", {"file_path": "/workspace/project/jobs/reconcile.py"}, "def run(): ...")
    t.say("The exporter must wait for the reconciliation.")
    return _running(t, TITLE)


@pytest.fixture
def agent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The environment of Claude Code's Bash tool: an agent's session, Claude Code's config elsewhere."""
    config = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.setenv("CLAUDECODE", "1")
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", SESSION)
    return config


def _write_transcript(project: Path, t: Transcript) -> Path:
    folder = project_sessions_dir(str(project))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SESSION}.jsonl"
    path.write_text(t.text(), encoding="utf-8")
    return path


def _stored(project: Path, memory_id: str) -> dict:
    (file,) = Path(ProjectPaths.for_cwd(project).private_store).glob(f"{memory_id}.toml")
    return tomllib.loads(file.read_text(encoding="utf-8"))


def test_remember_without_cues_adds_the_prompts_words_and_the_turns_errors(gate, project: Path, agent: Path) -> None:
    _write_transcript(project, _turn())
    code, out, err = gate("remember", TITLE, "--kind", "gotcha")
    assert code == 0, err
    memory_id = out.strip()
    data = _stored(project, memory_id)
    assert "cues" not in data, "the agent wrote none: its field stays empty"
    derived = data["derived_cues"]
    words, *errors = derived.split("; ")
    assert words.split()[0] == "reconciliation", derived  # the prompt's most used word first
    assert {"nightly", "exporter", "scheduler", "crashes"} <= set(words.split()), derived
    assert "invoice" not in derived and "printer" not in derived, "an earlier turn's prompt"
    assert "SEARCH" not in derived and "remember" not in derived.lower(), "the gate's context and its own errors"
    assert errors == ["KeyError: 'ledger_exporter_batch'"], derived  # the error line, not the frame or exit code
    assert f"cues added from the turn: {derived}" in err
    # searched as cues: a later prompt in the error's words finds it
    code, out, _ = gate("search", "ledger_exporter_batch KeyError", "--json")
    assert [hit["id"] for hit in json.loads(out)["hits"]][:1] == [memory_id]
    code, out, _ = gate("show", memory_id)
    assert f"cues from the turn (added by gate): {derived}" in out


def test_cues_the_agent_writes_are_kept_as_written_and_nothing_is_added(gate, project: Path, agent: Path) -> None:
    _write_transcript(project, _turn())
    code, out, err = gate("remember", TITLE, "--cues", "exporter  before reconciliation,  half-written totals")
    assert code == 0, err
    data = _stored(project, out.strip())
    assert data["cues"] == "exporter before reconciliation, half-written totals"
    assert "derived_cues" not in data
    assert "cues added" not in err


def test_without_a_transcript_or_outside_an_agent_it_stores_without_them_and_says_nothing(
    gate, project: Path, agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = gate("remember", TITLE)  # the session's transcript is nowhere
    assert code == 0 and err == "", err
    assert "derived_cues" not in _stored(project, out.strip())
    _write_transcript(project, _turn())
    monkeypatch.delenv("CLAUDECODE")
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID")
    code, out, err = gate("remember", "Exporter batches are keyed by ledger and day", "--human")
    assert code == 0 and err == "", err  # a person at a terminal: no session, no cues from one
    assert "derived_cues" not in _stored(project, out.strip())


def test_a_transcript_kept_under_another_folder_is_found_and_a_path_like_session_is_not(
    project: Path, agent: Path, tmp_path: Path
) -> None:
    elsewhere = agent / "projects" / "-workspace-started-in-a-subfolder"
    elsewhere.mkdir(parents=True)
    (elsewhere / f"{SESSION}.jsonl").write_text(_turn().text(), encoding="utf-8")
    assert find_transcript(SESSION, [str(project)]) == str(elsewhere / f"{SESSION}.jsonl")
    assert find_transcript("../../etc/passwd", [str(project)]) is None
    assert find_transcript("", [str(project)]) is None


def test_no_secret_is_ever_a_cue(gate, project: Path, agent: Path) -> None:
    key = "AKIA" + "Q3VZ7X2M4N6P8R1T"  # an AWS access key id's shape, written here for the test
    password = "Zq8vT3nW9xK2" + "pL5m"  # a DSN's password: one token that no pattern matches on its own
    t = Transcript()
    t.prompt(f"the deploy from postgres://billing_app:{password}@db.prod.example.com:5432/ledger fails with key "
             f"{key} when the artifact uploader retries; fix the uploader retries")
    t.tool("Bash", {"command": "make deploy"}, f"Exit code 2\nerror: access denied for {key}\n", is_error=True)
    title = "The artifact uploader retries with a fresh session token"
    _write_transcript(project, _running(t, title))
    code, out, err = gate("remember", title)
    assert code == 0, err  # stored: the secret was left out, not refused
    derived = _stored(project, out.strip())["derived_cues"]
    assert key not in derived and key.lower() not in derived, derived
    assert password.lower() not in derived.lower(), derived  # a piece of the DSN the prompt holds
    assert "uploader" in derived and "denied" not in derived, derived  # the line holding the key went whole


def _derived(tmp_path: Path, prompt: str, *results: tuple[str, bool]) -> TurnCues:
    """The cues of a one-turn transcript: the prompt, then Bash calls with these (output, failed) results."""
    t = Transcript()
    t.prompt(prompt)
    for output, failed in results:
        t.tool("Bash", {"command": "make deploy"}, output, is_error=failed)
    path = tmp_path / "turn.jsonl"
    path.write_text(t.text(), encoding="utf-8")
    return derive(read_turn(str(path)), load_rules("remember")["turn_cues"], lambda term: False, load_rules("text"))


@pytest.mark.parametrize("prompt", [
    "the nightly export to postgres://billing_app:{secret}@db.prod.example.com:5432/ledger times out; fix the export",
    "the staging password is {secret} and the nightly export times out; fix the export",
])
def test_no_piece_of_a_secret_in_the_prompt_is_a_cue(tmp_path: Path, prompt: str) -> None:
    """A secret of several tokens (a DSN, a sentence naming a password): its pieces, each harmless alone, are
    left out; the prompt's other words are kept."""
    secret = "Zq8vT3nW9xK2" + "pL5m"
    assert find_secret(secret) is None and find_secret(prompt.format(secret=secret)) is not None
    cues = _derived(tmp_path, prompt.format(secret=secret))
    assert secret.lower() not in cues.text.lower(), cues.text
    assert {"nightly", "export", "times"} <= set(cues.words), cues.words


def test_cue_words_that_together_make_a_secret_are_all_left_out(tmp_path: Path) -> None:
    """Each word and the error line pass the patterns alone; as stored, one after the other, they make an AWS
    secret access key's assignment: no cues at all."""
    value = "Zq8vT3nW9xK2pL5mR7sQ" + "1aB4cD6eF8gH0jK2lM4n"
    prompt = "the uploader retries forever; check aws private"
    error = f"Error: {value}"
    assert find_secret(prompt) is None and find_secret(error) is None
    cues = _derived(tmp_path, prompt, (f"{error}\n", True))
    assert not cues and cues.text == "", cues.text
    alone = _derived(tmp_path, "the uploader retries forever", (f"{error}\n", True))
    assert alone.errors == [error], "the same error line without those words is kept"


def test_a_traceback_in_a_successful_tool_result_is_no_error_line(tmp_path: Path) -> None:
    """`cat` of a log that holds a traceback succeeded: the turn saw no error; only a failed call's lines count."""
    cues = _derived(tmp_path, "why does the nightly report crash", (TRACEBACK, False))
    assert cues.errors == [] and cues.words == ["nightly", "report", "crash"], cues.text
    failed = _derived(tmp_path, "why does the nightly report crash", (TRACEBACK, True))
    assert failed.errors == ["KeyError: 'ledger_exporter_batch'"], failed.text


def test_words_most_of_the_projects_prompts_use_are_not_new(project: Path, agent: Path) -> None:
    paths = ProjectPaths.for_cwd(project)
    table = PromptTerms.load(paths)
    for n in range(40):
        table.add(["dashboard", "widget", f"other{n}"])
    t = Transcript()
    t.prompt("the dashboard widget shows stale revenue figures on the dashboard after midnight")
    _write_transcript(project, t)
    cues = for_session(SESSION, paths)
    assert cues.words == ["shows", "stale", "revenue", "figures", "midnight"], cues.words  # the project's own out
    assert cues.errors == []


def test_limits_come_from_the_rules(tmp_path: Path) -> None:
    rules = {**load_rules("remember")["turn_cues"], "max_words": 3, "max_error_lines": 1, "max_error_chars": 40}
    text_rules = load_rules("text")
    words = prompt_words("alpha beta beta gamma gamma gamma delta 20251103 a1b2c3d4 the of to", rules,
                         lambda term: False, text_rules)
    assert words == ["gamma", "beta", "alpha"]  # most used first, ties by order; numbers and hashes never
    t = Transcript()
    t.prompt("run the migration")
    long_error = "error: the migration runner could not lock the schema table because another runner holds it"
    t.tool("Bash", {"command": "make migrate"}, f"{long_error}\nfatal: second failure line", is_error=True)
    path = tmp_path / "s.jsonl"
    path.write_text(t.text(), encoding="utf-8")
    cues = derive(read_turn(str(path)), rules, lambda term: False, text_rules)
    assert cues.errors == ["error: the migration runner could not"], cues.errors  # cut at a word, <= 40
    capped = derive(read_turn(str(path)), {**rules, "max_chars": 13}, lambda term: False, text_rules)
    assert capped.text == "run migration", capped.text  # the error line goes first, then the last words
    assert derive(read_turn(str(path)), {**rules, "max_chars": 12}, lambda term: False, text_rules).text == "run"


def test_edit_replacing_the_cues_drops_gates_and_adding_keeps_them(gate, project: Path, agent: Path) -> None:
    _write_transcript(project, _turn())
    code, out, err = gate("remember", TITLE)
    memory_id = out.strip()
    derived = _stored(project, memory_id)["derived_cues"]
    code, out, err = gate("edit", memory_id, "--add-cues", "exporter ordering")
    assert code == 0, err
    data = _stored(project, memory_id)
    assert (data["cues"], data["derived_cues"]) == ("exporter ordering", derived)
    code, out, err = gate("edit", memory_id, "--cues", "exporter waits for reconciliation")
    assert code == 0, err
    data = _stored(project, memory_id)
    assert data["cues"] == "exporter waits for reconciliation" and "derived_cues" not in data


def test_rules_can_turn_it_off(gate, project: Path, agent: Path) -> None:
    rules = project / ".gate" / "rules"
    rules.mkdir(parents=True)
    (rules / "remember.toml").write_text("[turn_cues]\nenabled = false\n", encoding="utf-8")
    _write_transcript(project, _turn())
    code, out, err = gate("remember", TITLE)
    assert code == 0 and "cues added" not in err, err
    assert "derived_cues" not in _stored(project, out.strip())


@pytest.mark.parametrize(
    ("unspaced", "expected"),
    [
        ("none", ["vue3", "template", "ref"]),  # the default: the run's everyday words fired on other prompts
        ("pairs", ["模板", "vue3", "template", "ref", "語法", "法糖"]),
        ("run", ["模板", "vue3", "template", "ref", "的新語法糖"]),
    ],
)
def test_a_run_of_chinese_is_left_out_cut_into_pairs_or_kept_whole(unspaced: str, expected: list[str]) -> None:
    rules = {**load_rules("remember")["turn_cues"], "unspaced": unspaced}
    common = {"的新", "新語"}.__contains__  # pieces most of the project's prompts use
    words = prompt_words("模板 vue3 template ref 的新語法糖", rules, common, load_rules("text"))
    assert words == expected


def test_a_background_tasks_notification_is_not_the_users_words(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("<task-notification><task-id>b7</task-id><status>completed</status><summary>Background command "
             '"nightly export" completed (exit code 1)</summary></task-notification>')
    t.tool("Bash", {"command": "cat export.log"}, "error: exporter lost its database lease", is_error=True)
    path = tmp_path / "s.jsonl"
    path.write_text(t.text(), encoding="utf-8")
    cues = derive(read_turn(str(path)), load_rules("remember")["turn_cues"], lambda term: False, load_rules("text"))
    assert (cues.words, cues.errors) == ([], ["error: exporter lost its database lease"])


# --- a transcript still being written (issue 44's flaky e2e test) -------------------------------------------------
# Claude Code 2.1.332 appends its transcript from a queue it writes every 100 ms, and runs a tool without waiting
# for that write: `gate remember` may start when the file holds the prompt and the failed call, but not yet that
# call's result nor the call running gate. Measured in the e2e test with the CLI's writes of the transcript held
# back: the memory got the prompt's words and no error line.


def _in_pieces(t: Transcript) -> tuple[str, list[str]]:
    """The transcript as Claude Code may have written it when the running call starts (up to the failed call's
    result), and the rest as it arrives: the result with half of the last line (torn), then that line's end."""
    lines = t.text().splitlines(keepends=True)
    result = next(n for n, line in enumerate(lines) if '"tool_result"' in line)
    last = lines[-1]
    return "".join(lines[:result]), ["".join(lines[result:-1]) + last[: len(last) // 2], last[len(last) // 2 :]]


def test_a_transcript_still_being_written_is_read_once_the_call_storing_the_memory_is_in_it(
    gate, project: Path, agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = Transcript()
    t.prompt(PROMPT)
    t.tool("Bash", {"command": "pytest -q tests/test_reconcile.py"}, TRACEBACK, is_error=True)
    early, rest = _in_pieces(_running(t, TITLE))
    path = _write_transcript(project, Transcript())
    path.write_text(early, encoding="utf-8")
    waits: list[float] = []

    def the_cli_writes_on(seconds: float) -> None:  # each pause of gate's: Claude Code's timer writes a piece
        waits.append(seconds)
        if rest:
            with path.open("a", encoding="utf-8") as handle:
                handle.write(rest.pop(0))

    monkeypatch.setattr(turn_cues, "_sleep", the_cli_writes_on, raising=False)
    code, out, err = gate("remember", TITLE, "--kind", "gotcha")
    assert code == 0, err
    derived = _stored(project, out.strip())["derived_cues"]
    words, *errors = derived.split("; ")
    assert errors == ["KeyError: 'ledger_exporter_batch'"], derived  # the failed call's result, written late
    assert words.split()[0] == "reconciliation", derived
    assert len(waits) == 2 and not rest, waits  # read again until the torn last line (the running call) is whole


@pytest.mark.parametrize("wait", [0.1, 0])
def test_a_call_that_does_not_name_the_title_is_waited_for_at_most_wait_seconds(
    gate, project: Path, agent: Path, monkeypatch: pytest.MonkeyPatch, wait: float
) -> None:
    """A script the agent ran stores the memory: no call in the transcript names the title. After
    rules/remember.toml wait_seconds the turn is taken as it is; 0 reads it at once."""
    rules = project / ".gate" / "rules"
    rules.mkdir(parents=True)
    (rules / "remember.toml").write_text(f"[turn_cues]\nwait_seconds = {wait}\n", encoding="utf-8")
    waits: list[float] = []
    monkeypatch.setattr(turn_cues, "_sleep", lambda seconds: (waits.append(seconds), time.sleep(seconds)))
    t = Transcript()
    t.prompt(PROMPT)
    t.tool("Bash", {"command": "pytest -q tests/test_reconcile.py"}, TRACEBACK, is_error=True)
    t.assistant({"type": "tool_use", "id": "toolu_script", "name": "Bash", "input": {"command": "./store-notes.sh"}})
    _write_transcript(project, t)
    code, out, err = gate("remember", TITLE)
    assert code == 0, err
    assert "KeyError: 'ledger_exporter_batch'" in _stored(project, out.strip())["derived_cues"]
    assert bool(waits) == (wait > 0), waits


QUOTED = "The exporter's batch key is the ledger and the day"  # shell-quoted, its apostrophe is no longer one


@pytest.mark.parametrize(
    ("name", "tool_input", "result", "title", "runs"),
    [
        ("Bash", {"command": f"gate remember {shlex.quote(TITLE)} --kind gotcha"}, False, TITLE, True),
        ("Bash", {"command": f"cd /workspace/project && gate remember {shlex.quote(QUOTED)}"}, False, QUOTED, True),
        ("Bash", {"command": f"gate remember {shlex.quote(TITLE)}"}, True, TITLE, False),  # an earlier call, done
        ("Bash", {"command": "python3 -c 'raise KeyError(1)'"}, False, TITLE, False),  # its result not written yet
        ("Agent", {"prompt": "store what you find"}, False, TITLE, True),  # a subagent's calls: in its own transcript
    ],
)
def test_the_call_running_gate_remember_is_one_without_a_result_that_names_the_title(
    tmp_path: Path, name: str, tool_input: dict, result: bool, title: str, runs: bool
) -> None:
    t = Transcript()
    t.prompt(PROMPT)
    if result:
        t.tool(name, tool_input, "m-1a2b3c")
    else:
        t.assistant({"type": "tool_use", "id": "toolu_running", "name": name, "input": tool_input})
    path = tmp_path / "s.jsonl"
    path.write_text(t.text(), encoding="utf-8")
    assert turn_cues.runs_this_call(read_turn(str(path)), title) is runs


def test_a_command_the_user_ran_from_the_prompt_is_the_call_when_it_names_the_title(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    for prompt, runs in ((f"<bash-input>gate remember {shlex.quote(TITLE)}</bash-input>", True),
                         ("<bash-input>make deploy</bash-input>", False), (f"remember: {TITLE}", False)):
        t = Transcript()
        t.prompt(prompt)
        path.write_text(t.text(), encoding="utf-8")
        assert turn_cues.runs_this_call(read_turn(str(path)), TITLE) is runs, prompt
