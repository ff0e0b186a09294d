"""Secrets without false alarms: local development credentials and placeholders are accepted at write time,
real-looking credentials still refused (the whole generated corpus, at a larger sample than the hardening suite)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "data"))
from secrets_corpus import GENERATORS, secrets

from gate.memory.store.secrets import find_secret
from gate.memory.store.store import Store

ACCEPTED = [
    "postgresql://payments:payments@localhost:5433/payments",  # the docker-compose database of the issue
    "postgresql://user:<password>@host/db",
    "DATABASE_URL=postgres://app:${DB_PASSWORD}@db.internal:5432/app",
    "redis://:***@cache.internal:6379/0",
    "mysql://root:xxx@db.prod.example.com/shop",
    "postgres://payments:payments@db:5432/payments",  # compose service host, same user and password
    "amqp://guest:guest@rabbitmq:5672/",
    "postgres://postgres:postgres@127.0.0.1/app",
    "postgres://dev:password1@localhost/app",  # a plain word on a local host
    "mongodb://admin:admin@[::1]:27017/test",
    "OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "use ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX as the shape of the token",
    "AKIAXXXXXXXXXXXXXXXX is what an access key id looks like",
    "export STRIPE_KEY=sk_live_<your key here>",
    "DB_PASSWORD=changeme",
]

REFUSED = [
    "postgres://admin:Xk93jfkdP2qq@localhost:5432/db",  # random-looking, even on localhost (an SSH tunnel)
    "mysql://root:Ab3kD9xQ2z@127.0.0.1:3306/shop",
    "postgres://payments:payments@db.internal/payments",  # a dotted host is not a compose service
    "postgres://admin:S3cretPw@db:5432/orders",  # a compose host, but not the same user and password
    "redis://:payments@cache:6379",  # no user to be the same as
    "ghp_XXX3abcdefGHIJKLmnopqrstuvwxyz0123456789",  # a key with x's inside is still a key
    "sk-xxxxA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "The db password=Xk8pQ2vLm9zR7tW for staging",  # 15 characters: shorter than a token, still a password
    "Staging db password: Xk8pQ2vLm9zR7tW",
    "set pwd = MyS3cretPass! before the run",
    # a password in a sentence (docs/memories.md promises credentials are refused): these two were listed as
    # accepted, but a tutorial's hunter2 cannot be told from a real one, and Password1 is a real (bad) password
    "the admin password is hunter2 for the staging box",
    "the password is hunter2 in the tutorial",
    "password: Password1",
    "The root password for db-01 was Summer2024 until Monday",
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_local_credentials_and_placeholders_are_accepted(text: str, gate) -> None:
    code, out, err = gate("remember", "Local development connection details", "--body", text, "--new")
    assert code == 0, err
    assert find_secret(text) is None


@pytest.mark.parametrize("text", REFUSED)
def test_real_looking_credentials_are_still_refused(text: str, gate, project: Path) -> None:
    code, out, err = gate("remember", "Connection details", "--body", text)
    assert code == 2 and "secret" in err, (code, err)
    assert Store.for_cwd(str(project)).memories() == []


def test_the_whole_corpus_is_still_refused_at_a_larger_sample() -> None:
    """50 samples of each kind (the hardening suite writes 2 through every door): the allowances accept none."""
    corpus = secrets(seed=2027, per_kind=50)
    accepted = [kind for kind, text in corpus if find_secret(text) is None]
    assert accepted == []
    assert len(corpus) == 50 * len(GENERATORS)


def test_a_project_cannot_widen_the_allowances(gate, project: Path) -> None:
    """A repository's checked-in rules may add secret patterns, never accept more: [allow] is read from the
    shipped and user rules only."""
    rules = project / ".gate" / "rules"
    rules.mkdir(parents=True)
    (rules / "secrets.toml").write_text('[allow]\nlocal_hosts = ["db.internal"]\nlocal_password = ".*"\n')
    code, _, err = gate("remember", "Connection details", "--body", "postgres://app:Xk93jfkdP2qq@db.internal/app")
    assert code == 2 and "secret" in err


# A key word, then is / was / : / = and a random-looking value: refused (both were stored before). The near-misses
# say the same words about a key with a plain word, an identifier or a version after them: accepted.
SENTENCE_SECRETS = [
    "The staging api key is Zq8vT3nW9xK2pL5m for the maps service",
    "JWT signing secret is s3cr3tK3yF0rJwt2026 in staging",
    "the access key for the billing bucket: 9f86d081884c7d659a2feaa0c55ad015",
    "the api key for the maps service is ZqvTnWxKpLmQrStBaYcE",
]
SENTENCE_NEAR_MISSES = [
    "secret is rotated monthly",
    "the token is stored in Vault",
    "the api key is base64url-encoded before it is sent",
    "the secret is loadSecretFromVault in config.py",
    "The session token is OAuth2-issued by Keycloak",
    "the signing key is ed25519-sha256 since the 2026 migration",
    "the access token is valid for 3600 seconds",
    "the deploy key is read from DEPLOY_KEY_PATH",
    "The secret is stored at secret/data/staging/maps",
    "the credentials are in 1Password under Staging",
]


@pytest.mark.parametrize("text", SENTENCE_SECRETS)
def test_a_key_said_in_a_sentence_is_refused_with_a_hint(text: str, gate, project: Path) -> None:
    code, out, err = gate("remember", text)
    assert code == 2, (code, out, err)
    assert "secret (credential in a sentence)" in err and "nothing was written" in err
    assert "hint:" in err and "vault" in err  # says what to store instead
    for word in text.split():
        if any(c.isdigit() for c in word) and len(word) >= 12:
            assert word not in err and word not in out  # the message names the pattern, never the value
    assert Store.for_cwd(str(project)).memories() == []


@pytest.mark.parametrize("text", SENTENCE_NEAR_MISSES)
def test_a_sentence_about_a_key_without_one_is_accepted(text: str, gate, project: Path) -> None:
    code, out, err = gate("remember", text, "--new")
    assert code == 0, err
    assert [m.title for m in Store.for_cwd(str(project)).memories()] == [text]


def test_a_random_value_is_measured_not_matched() -> None:
    """Entropy and the changes of character class tell a generated key from a word of the same shape."""
    from gate.memory.store.secrets import entropy, switch_ratio

    assert entropy("Zq8vT3nW9xK2pL5m") == 4.0  # 16 different characters
    assert entropy("aaaaaaaaaaaa") == 0.0
    assert switch_ratio("Zq8vT3nW9xK2pL5m") == 1.0
    assert switch_ratio("loadSecretFromVault") == 3 / 18  # camelCase: only d→S, t→F, m→V (a capital starts a word)
    assert switch_ratio("base64url") == 0.25  # e→6 and 4→u of 8 pairs


def test_a_project_value_table_without_a_value_group_adds_nothing(gate, project: Path) -> None:
    rules = project / ".gate" / "rules"
    rules.mkdir(parents=True)
    (rules / "secrets.toml").write_text(
        "[[pattern]]\nname = \"broken\"\nregex = 'widget'\nvalue = { min_length = 3 }\n"
    )
    code, _, err = gate("remember", "The widget cache is rebuilt nightly", "--new")
    assert code == 0, err
    code, _, err = gate("remember", "The staging api key is Zq8vT3nW9xK2pL5m for the maps service")
    assert code == 2 and "secret" in err
