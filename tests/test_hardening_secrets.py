"""Secrets: a corpus of real-looking (generated) credentials is refused at every write door — `gate remember`
(title, body, body on stdin, tag, path, trigger) and `gate import` (every text field) — and nothing of a refused
memory is written. Ordinary text that talks about tokens and passwords is accepted. Neither the audit log, the
error log, nor a refusal message ever holds the secret, also when secrets pass through the hooks (a pasted key
in a prompt, a key in the turn a Stop hook reads).

GATE_SECRETS_PER_KIND (default 2) sets how many samples of each kind are generated.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import support

sys.path.insert(0, str(Path(__file__).parent / "data"))
from cli_transcript import Transcript
from secrets_corpus import BENIGN, GENERATORS, needle, secrets

from gate.memory.store.store import Store
from gate.paths import ProjectPaths, audit_log_file, error_log_file, user_dirs

PER_KIND = int(os.environ.get("GATE_SECRETS_PER_KIND", "2"))
CORPUS = secrets(per_kind=PER_KIND)

Gate = Callable[..., tuple[int, str, str]]


def report(figures: dict[str, Any]) -> None:
    support.report("secrets", figures)


TRIED: dict[str, int] = {"remember_attempts_refused": 0}


@pytest.fixture(scope="module", autouse=True)
def _report_attempts() -> Any:
    yield
    report(dict(TRIED))


def one_line(text: str) -> str:
    return " ".join(text.split())


def store_files(project: Path) -> list[Path]:
    paths = ProjectPaths.for_cwd(project)
    found: list[Path] = []
    for scope in ("private", "team", "user"):
        directory = Path(paths.store_for_scope(scope))
        if directory.is_dir():
            found += sorted(directory.iterdir())
    return found


def everything_written() -> str:
    """Every byte gate keeps for this user (store, index, ledgers, audit, logs, caches), as text."""
    chunks = []
    for root, _, files in os.walk(Path(user_dirs().data).parent):
        for name in files:
            try:
                chunks.append(Path(root, name).read_bytes().decode("utf-8", "replace"))
            except OSError:
                continue
    return "\n".join(chunks)


def random_parts(secret: str) -> list[str]:
    """The random-looking alphanumeric runs of a secret: what a tokenizer would cut it into (search terms)."""
    return [run for run in re.findall(r"[A-Za-z0-9]{10,}", secret)
            if sum(c.isdigit() for c in run) >= 2 and sum(c.isalpha() for c in run) >= 2]


def assert_not_leaked(secret: str, *texts: str) -> None:
    key = needle(secret)
    for text in texts:
        assert key not in text, f"{key[:12]}… leaked"
        lowered = text.lower()
        assert key.lower() not in lowered, f"{key[:12]}… leaked (case-folded)"
        for part in random_parts(secret):
            assert part.lower() not in lowered, f"{part[:12]}… (a piece of it) leaked"


# --- refused at write ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(GENERATORS))
def test_corpus_refused_by_remember_everywhere(kind: str, project: Path, gate: Gate) -> None:
    samples = [text for k, text in CORPUS if k == kind]
    tried = 0
    for secret in samples:
        attempts: list[tuple[list[str], str | None]] = [
            (["remember", f"Deploy note: {one_line(secret)}"[:160]], None),
            (["remember", "Deploy credentials for the release job", "--body", f"Use this:\n{secret}\nthanks"], None),
            (["remember", "Deploy credentials for the release job", "--body", "-"], f"creds\n{secret}\n"),
            (["remember", "Deploy credentials for the release job", "--tag", one_line(secret)], None),
            (["remember", "Deploy credentials for the release job", "--path", one_line(secret)], None),
            (["remember", "Deploy credentials for the release job", "--on", f"keyword:{one_line(secret)}"], None),
        ]
        if len(one_line(secret)) > 160:
            attempts = attempts[1:]  # a title longer than gate allows is refused for its length first
        for args, stdin in attempts:
            code, out, err = gate(*args, stdin=stdin)
            tried += 1
            TRIED["remember_attempts_refused"] += 1
            assert code != 0, f"{kind} stored via {args[2:4]}"
            assert "secret" in err or "longer than" in err, err  # a PEM block is also too long for a trigger
            assert out == ""
            assert_not_leaked(secret, out, err)
    assert store_files(project) == []
    assert_not_leaked(samples[0], everything_written())


def test_corpus_refused_by_import_in_every_field(project: Path, gate: Gate) -> None:
    tried = 0
    for kind, secret in CORPUS:
        base = {"id": "imp-1", "kind": "finding", "title": "Deploy credentials for the release job"}
        variants = [
            {**base, "title": one_line(secret)},
            {**base, "body": secret},
            {**base, "tags": ["ops", one_line(secret)]},
            {**base, "paths": [one_line(secret)]},
            {**base, "triggers": [f"keyword:{one_line(secret)}"]},
        ]
        if len(one_line(secret)) > 160:
            variants = variants[1:]  # refused for its length anyway: a title is at most 160 characters
        for variant in variants:
            good = {"id": "imp-0", "kind": "finding", "title": "A harmless memory in the same file"}
            lines = json.dumps(good) + "\n" + json.dumps(variant) + "\n"
            code, out, err = gate("import", "-", stdin=lines)
            tried += 1
            assert code != 0, f"{kind} imported via {sorted(set(variant) - {'id', 'kind'})}"
            assert_not_leaked(secret, out, err)
    assert store_files(project) == []  # all or nothing: the harmless line of each file was not written either
    report({"kinds": len(GENERATORS), "samples": len(CORPUS), "import_attempts_refused": tried})


def test_benign_text_is_accepted(project: Path, gate: Gate) -> None:
    for text in BENIGN:
        code, out, err = gate("remember", text[:160], "--kind", "finding", "--json")
        assert code == 0, f"{text!r} refused: {err}"
        code, out, err = gate("remember", "Notes about credentials handling", "--body", text, "--tag", "ops",
                              "--new")  # the same title each time: --new keeps the near-duplicates
        assert code == 0, f"{text!r} refused as a body: {err}"
    lines = "\n".join(json.dumps({"kind": "finding", "title": text[:160], "body": text}) for text in BENIGN)
    code, out, err = gate("import", "-", "--json", stdin=lines)
    assert code == 0, err
    assert json.loads(out)["imported"] == len(BENIGN)
    report({"benign_accepted": len(BENIGN) * 3})


# --- secrets passing through the hooks ----------------------------------------------------------------------------
def run_hook(event: dict[str, Any]) -> str:
    return support.hook_in_process(event)


def test_audit_and_error_log_never_hold_a_secret(project: Path, gate: Gate, tmp_path: Path) -> None:
    code, _, err = gate("remember", "Deploy credentials live in the vault under ci/deploy", "--kind", "decision")
    assert code == 0, err
    for n, (_kind, secret) in enumerate(CORPUS):
        # refused writes first
        gate("remember", "Deploy credentials for the release job", "--body", secret)
        # a pasted key in a prompt that shifts topic (its words reach the recall trace)
        run_hook({"session_id": f"s-{n}", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                  "prompt": f"Why does the deploy fail with credentials {secret} in the vault?",
                  "transcript_path": str(tmp_path / "none.jsonl")})
        # a turn that fixed something and showed a key, in its prose and in a tool's output
        t = Transcript(cwd=str(project))
        t.prompt(f"The deploy fails, fix it; the key is {secret}")
        t.tool("Bash", {"command": f"deploy --key '{one_line(secret)}'"}, f"error: bad key {secret}", is_error=True)
        t.tool("Bash", {"command": "deploy"}, "ok")
        t.say(f"The cause was the stale key; I fixed it by rotating to {one_line(secret)} and the deploy passes.")
        path = tmp_path / f"t{n}.jsonl"
        path.write_text(t.text())
        run_hook({"session_id": f"s-{n}", "cwd": str(project), "hook_event_name": "Stop", "stop_hook_active": False,
                  "transcript_path": str(path), "last_assistant_message": f"rotated to {secret}"})
    audit = Path(audit_log_file()).read_text(encoding="utf-8")
    errors = Path(error_log_file()).read_text(encoding="utf-8") if Path(error_log_file()).exists() else ""
    records = [json.loads(line) for line in audit.splitlines()]
    assert any(r["reason"] == "BLOCKED_WRITEBACK" for r in records)  # the hooks did look at these turns
    assert not [r for r in records if r["reason"] == "FAILED_OPEN"], errors[-1000:]
    leaked = []
    for kind, secret in CORPUS:
        try:
            assert_not_leaked(secret, audit, errors)
        except AssertionError:
            leaked.append(kind)
    assert not leaked, f"in the audit or error log: {sorted(set(leaked))}"
    report({"hook_runs_with_secrets": 2 * len(CORPUS)})


def test_refused_memory_leaves_no_trace_in_store_or_index(project: Path, gate: Gate) -> None:
    code, _, err = gate("remember", "A first harmless memory about deploys", "--kind", "finding")
    assert code == 0, err
    store = Store(ProjectPaths.for_cwd(project))
    before = {m.id for m in store.memories()}
    for _, secret in CORPUS[:: max(1, len(CORPUS) // 12)]:
        code, _, _ = gate("remember", "Deploy credentials", "--body", secret)
        assert code != 0
        assert_not_leaked(secret, everything_written())
    assert {m.id for m in store.memories()} == before
    code, out, _ = gate("reindex", "--check", "--json")
    assert json.loads(out)["consistent"] is True
