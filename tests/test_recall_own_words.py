"""Issue 43 item 4: a prompt that carries its own subject is searched by its own words first; the reply it
follows only fills in for a prompt that has none. Tried as a new user would: after a fix turn, "Separately: the
mobile team says sessions expire too fast. Can we make session tokens last a day?" brought the previous turn's
fix and left the stored decision on session tokens under the floor (the query was mostly the reply's words), and
"Now add a migration …" brought nothing while two migration memories were stored. Through the real hook process,
with the fix turn in a transcript."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from gate.paths import audit_log_file
from gate.rules import load_rules

sys.path.insert(0, str(Path(__file__).parent / "data"))
from cli_transcript import Transcript

FIX_PROMPT = "Users get stuck in a login redirect loop after signing in, fix it"
FIX_REPLY = (
    "Fixed the login redirect loop. The auth middleware read the session cookie before the cookie parser had "
    "run, so every request after signing in looked logged out and the middleware redirected it back to the "
    "login page, which redirected to the dashboard again. I moved the cookie parser ahead of the auth middleware "
    "in app.py and added a test that signs in and follows the redirects; the login tests pass now and the "
    "redirect loop is gone. The session cookie itself was fine: only the order of the middleware was wrong."
)
FIX_MEMORY = ("Login redirect loop: the auth middleware read the session cookie before the cookie parser ran; "
              "the cookie parser must come first")
DECISION = "Session tokens expire after one hour; clients renew them with the refresh token"
MIGRATIONS = (
    ("Migrations are written with Alembic: alembic revision --autogenerate, then review the generated diff",
     "reference"),
    ("Every migration must be reversible: write the downgrade and run it once before merging", "gotcha"),
)
# An ordinary project's other memories: the store is past [fire] small_store, so the z-score decides.
OTHERS = (
    "Invoice PDFs are rendered by WeasyPrint in a background worker",
    "The CSV export streams rows in pages of 500 to keep memory flat",
    "Feature flags live in flags.yaml and are read once at boot",
    "Staging deploys run from the main branch every night at two",
    "Search uses Postgres full text with the simple dictionary for product codes",
    "Email templates are MJML compiled at build time into the templates folder",
    "Rate limits are 100 requests a minute per API key, enforced in nginx",
    "The admin dashboard charts use Chart.js with the date adapter for time axes",
    "Image uploads go to S3 with a presigned POST; thumbnails are made by a Lambda",
    "Timezones are stored as UTC and shown in the user's profile zone",
    "Celery beat schedules the nightly cleanup of orphaned uploads",
    "Product prices are integers in cents; never floats",
    "The mobile app pins the API version in the Accept header",
    "Logs are JSON lines shipped to Loki; request ids go in the X-Request-Id header",
    "Webhooks from the payment provider are verified by their HMAC signature header",
    "Translations are gettext catalogs compiled in CI",
)


def run_hook(event: dict[str, Any]) -> tuple[str, int]:
    """conftest's run_hook (the launcher's command in a fresh process); by path: in the full run the name
    `conftest` is tests/e2e's."""
    from tests.conftest import run_hook as run

    return run(event)


def remember(gate, title: str, kind: str) -> str:
    code, out, err = gate("remember", title, "--kind", kind, "--new")
    assert code == 0, err
    return out.strip()


def prompt(project: Path, text: str, transcript: Path, session: str) -> dict[str, Any]:
    event = {"session_id": session, "transcript_path": str(transcript), "cwd": str(project),
             "hook_event_name": "UserPromptSubmit", "prompt": text}
    _, code = run_hook(event)
    assert code == 0
    return json.loads(Path(audit_log_file()).read_text().splitlines()[-1])


@pytest.fixture
def store(gate) -> dict[str, Any]:
    ids: dict[str, Any] = {"decision": remember(gate, DECISION, "decision")}
    ids["migrations"] = [remember(gate, title, kind) for title, kind in MIGRATIONS]
    for title in OTHERS:
        remember(gate, title, "finding")
    return ids


def after_fix_turn(project: Path, tmp_path: Path, gate, store: dict[str, Any], session: str) -> Path:
    """The session so far: the fix prompt (searched as a prompt is), the fix turn — in which the agent stored
    what it fixed — in the transcript."""
    prompt(project, FIX_PROMPT, tmp_path / "none.jsonl", session)
    store["fix"] = remember(gate, FIX_MEMORY, "fix")
    t = Transcript(cwd=str(project)).prompt(FIX_PROMPT)
    t.tool("Read", {"file_path": "app.py"}, "app.use(auth); app.use(cookieParser())")
    t.tool("Edit", {"file_path": "app.py", "old_string": "app.use(auth);", "new_string": ""}, "ok")
    t.tool("Bash", {"command": "npm test -- login"}, "7 passing")
    t.say(FIX_REPLY)
    path = tmp_path / f"{session}.jsonl"
    path.write_text(t.text())
    return path


def test_a_prompt_with_its_own_subject_brings_its_memory_not_the_previous_fix(
    project: Path, gate, store: dict[str, Any], tmp_path: Path
) -> None:
    transcript = after_fix_turn(project, tmp_path, gate, store, "tokens")
    record = prompt(project, "Separately: the mobile team says sessions expire too fast. Can we make session "
                             "tokens last a day?", transcript, "tokens")
    assert record["delivered"][:1] == [store["decision"]], record  # delivered, and first
    query, rules = record["query"], load_rules("recall")["query"]  # the reply's terms together weigh a share
    share = rules["reply_share"] * len(query["prompt"]) / rules["reply_terms"]  # of the prompt's (a long reply)
    assert share < 1 and query["reply_weight"] == round(share, 3), query
    assert store["fix"] not in record["delivered"], record  # the previous turn's subject, not this prompt's


def test_a_short_request_is_searched_by_its_own_word_before_the_reply(
    project: Path, gate, store: dict[str, Any], tmp_path: Path
) -> None:
    transcript = after_fix_turn(project, tmp_path, gate, store, "migration")
    record = prompt(project, "Now add a migration for that", transcript, "migration")
    assert record["query"]["content_free"] is True  # one term of its own: the reply fills in ...
    assert sorted(record["delivered"][:2]) == sorted(store["migrations"]), record  # ... its own word leads
    assert store["fix"] not in record["delivered"], record
