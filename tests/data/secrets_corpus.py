"""A corpus of real-looking secrets, GENERATED (random, seeded): none of them is or was ever a live credential.

Each generator returns text in the shape the provider issues (prefix, length, alphabet), set in the kind of
sentence or config line an agent might try to store. `BENIGN` is ordinary project text that talks about
tokens, passwords, keys and secrets without containing one: it must be accepted.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable

UPPER_DIGITS = string.ascii_uppercase + "234567"
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _mixed(rng: random.Random, alphabet: str, n: int) -> str:
    """Random text that holds at least one letter and one digit (as real keys of that length always do)."""
    while True:
        value = _pick(rng, alphabet, n)
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt(rng: random.Random) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({"sub": str(rng.randrange(10**9)), "name": "svc-deploy",
                                  "iat": 1_700_000_000 + rng.randrange(10**6)}).encode())
    return f"{header}.{payload}.{_pick(rng, URLSAFE, 43)}"


def _pem(rng: random.Random, label: str) -> str:
    lines = [_pick(rng, B64, 64) for _ in range(6)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


GENERATORS: dict[str, Callable[[random.Random], str]] = {
    "aws_access_key_id": lambda r: f"the CI user key is AKIA{_pick(r, UPPER_DIGITS, 16)}",
    "aws_sts_key_id": lambda r: f"temporary creds ASIA{_pick(r, UPPER_DIGITS, 16)} expire hourly",
    "aws_secret_key_config": lambda r: f"aws_secret_access_key = {_mixed(r, B64, 40)}",
    "aws_secret_key_env": lambda r: f"export AWS_SECRET_ACCESS_KEY={_mixed(r, B64, 40)}",
    "github_pat_classic": lambda r: f"use token ghp_{_pick(r, ALNUM, 36)} for the release job",
    "github_oauth": lambda r: f"gho_{_pick(r, ALNUM, 36)}",
    "github_app_server": lambda r: f"installation token ghs_{_pick(r, ALNUM, 36)}",
    "github_fine_grained": lambda r: f"github_pat_{_pick(r, ALNUM, 22)}_{_pick(r, ALNUM, 59)}",
    "gitlab_pat": lambda r: f"GITLAB_TOKEN=glpat-{_pick(r, ALNUM, 20)}",
    "slack_bot": lambda r: f"xoxb-{_pick(r, string.digits, 12)}-{_pick(r, string.digits, 13)}-{_pick(r, ALNUM, 24)}",
    "slack_user": lambda r: f"slack user token xoxp-{_pick(r, string.digits, 12)}-{_pick(r, string.digits, 12)}-"
                            f"{_pick(r, string.digits, 13)}-{_pick(r, HEX, 32)}",
    "slack_webhook": lambda r: f"alerts go to https://hooks.slack.com/services/T{_pick(r, UPPER_DIGITS, 8)}/"
                               f"B{_pick(r, UPPER_DIGITS, 10)}/{_pick(r, ALNUM, 24)}",
    "stripe_live": lambda r: f"STRIPE_KEY=sk_live_{_pick(r, ALNUM, 24)}",
    "stripe_restricted": lambda r: f"rk_live_{_pick(r, ALNUM, 99)}",
    "google_api_key": lambda r: f"maps key AIza{_pick(r, URLSAFE, 35)}",
    "google_oauth_access": lambda r: f"Authorization: Bearer ya29.{_pick(r, URLSAFE, 120)}",
    "anthropic_key": lambda r: f"ANTHROPIC_API_KEY=sk-ant-api03-{_pick(r, URLSAFE, 93)}AA",
    "openai_project_key": lambda r: f"sk-proj-{_pick(r, URLSAFE, 48)}T3BlbkFJ{_pick(r, URLSAFE, 48)}",
    "openai_legacy_key": lambda r: f"OPENAI_API_KEY=sk-{_pick(r, ALNUM, 48)}",
    "npm_token": lambda r: f"//registry.npmjs.org/:_authToken=npm_{_pick(r, ALNUM, 36)}",
    "pypi_token": lambda r: f"password = pypi-AgEIcHlwaS5vcmc{_pick(r, URLSAFE, 70)}",
    "huggingface_token": lambda r: f"HF_TOKEN=hf_{_pick(r, string.ascii_letters, 34)}",
    "sendgrid_key": lambda r: f"SG.{_pick(r, URLSAFE, 22)}.{_pick(r, URLSAFE, 43)}",
    "digitalocean_pat": lambda r: f"dop_v1_{_pick(r, HEX, 64)}",
    "shopify_token": lambda r: f"shpat_{_pick(r, HEX, 32)}",
    "docker_hub_pat": lambda r: f"docker login -u ci -p dckr_pat_{_pick(r, URLSAFE, 27)}",
    "databricks_token": lambda r: f"dapi{_pick(r, HEX, 32)}",
    "azure_storage": lambda r: "DefaultEndpointsProtocol=https;AccountName=prodlogs;AccountKey="
                               f"{_mixed(r, B64, 86)}==;EndpointSuffix=core.windows.net",
    "jwt": lambda r: f"session cookie was {_jwt(r)}",
    "jwt_bearer": lambda r: f"curl -H 'Authorization: Bearer {_jwt(r)}' https://api.internal/v1/me",
    "rsa_private_key": lambda r: _pem(r, "RSA PRIVATE KEY"),
    "ec_private_key": lambda r: _pem(r, "EC PRIVATE KEY"),
    "openssh_private_key": lambda r: _pem(r, "OPENSSH PRIVATE KEY"),
    "pkcs8_private_key": lambda r: _pem(r, "PRIVATE KEY"),
    "encrypted_private_key": lambda r: _pem(r, "ENCRYPTED PRIVATE KEY"),
    "pgp_private_key": lambda r: _pem(r, "PGP PRIVATE KEY BLOCK"),
    "gcp_service_account": lambda r: json.dumps({"type": "service_account", "private_key_id": _pick(r, HEX, 40),
                                                 "private_key": _pem(r, "PRIVATE KEY")}),
    "postgres_url": lambda r: f"DATABASE_URL=postgres://app_user:{_mixed(r, ALNUM, 14)}@db.internal:5432/app",
    "mysql_url": lambda r: f"mysql://root:{_mixed(r, ALNUM, 10)}@127.0.0.1:3306/shop",
    "mongodb_srv_url": lambda r: f"mongodb+srv://admin:{_mixed(r, ALNUM, 16)}@cluster0.ab1cd.mongodb.net/prod",
    "redis_url_no_user": lambda r: f"REDIS_URL=redis://:{_mixed(r, ALNUM, 20)}@cache.internal:6379/0",
    "amqp_url": lambda r: f"amqp://worker:{_mixed(r, ALNUM, 12)}@rabbit.internal:5672/%2f",
    "https_basic_auth": lambda r: f"git clone https://deploy:{_mixed(r, ALNUM, 20)}@git.example.com/org/repo.git",
    "password_assignment": lambda r: f"password: {_mixed(r, ALNUM, 20)}",
    "password_json": lambda r: json.dumps({"username": "svc", "password": _mixed(r, ALNUM, 18)}),
    "db_password_env": lambda r: f"DB_PASSWORD={_mixed(r, ALNUM, 18)}",
    "secret_key_env": lambda r: f"SECRET_KEY={_mixed(r, URLSAFE, 50)}",
    "client_secret": lambda r: f"client_secret={_mixed(r, URLSAFE, 32)}",
    "api_key_header": lambda r: f"X-Api-Key: {_mixed(r, ALNUM, 32)}",
    "auth_token_env": lambda r: f"SENTRY_AUTH_TOKEN={_mixed(r, HEX, 64)}",
    # a password said in a sentence (docs/memories.md: "Credentials are refused at write time")
    "password_in_prose": lambda r: f"the admin password is {_pick(r, string.ascii_lowercase, 9)}{r.randint(2, 9)} "
    "for the staging box",
    "password_for_host_in_prose": lambda r: f"The root password for db-01 was {_mixed(r, ALNUM, 10)} until Monday",
}


def secrets(seed: int = 1234, per_kind: int = 2) -> list[tuple[str, str]]:
    """(kind, text) pairs: `per_kind` fresh samples of every kind."""
    rng = random.Random(seed)
    return [(kind, make(rng)) for kind, make in GENERATORS.items() for _ in range(per_kind)]


def needle(text: str) -> str:
    """The part of a sample that must never be echoed: its longest run of key-like characters."""
    runs = "".join(c if c.isalnum() or c in "+/_-" else " " for c in text).split()
    return max(runs, key=len)


BENIGN: list[str] = [
    "Rotate the deploy token every 90 days; the rotation job lives in ops/rotate.py",
    "The password reset flow sends a one-time link that expires after 30 minutes",
    "API keys are read from the AWS_SECRET_ACCESS_KEY environment variable, never from the repo",
    "The secret for the staging database is in the vault under secret/staging/db",
    "Use a token bucket rate limiter with a refill of 10 tokens per second",
    "max_tokens = 4096 for the summarizer; token_count is logged per request",
    "Passwords are hashed with argon2id (time cost 3, memory 64 MiB)",
    "The JWT middleware rejects tokens whose exp is in the past; tokens start with eyJ",
    "AWS access key ids start with AKIA; never paste one into a memory",
    "GitHub tokens start with ghp_ and are stored in the repository secrets",
    "Connect with postgres://localhost:5432/app for local development (no password locally)",
    "Clone with git@github.com:example/memory-gate.git over SSH",
    "password_min_length = 12 and password_max_length = 128",
    "secret_name: prod-db-credentials in AWS Secrets Manager",
    "The private key for the signing service lives in the HSM; only the public key is in certs/",
    "Bearer authentication: the Authorization header carries the access token from the OIDC flow",
    "client_secret is injected by the Helm chart from the sealed secret",
    "Commit 3f2a9b7c1d4e5f60718293a4b5c6d7e8f9012345 fixed the token refresh race",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 is the expected digest",
    "The request id looks like 550e8400-e29b-41d4-a716-446655440000",
    "Run npm_config_cache=/tmp/npm npm ci in the container to keep the cache out of the image",
    "ssh-keygen -t ed25519 creates the key pair; BEGIN OPENSSH PUBLIC KEY is not a secret",
    "The Slack webhook URL is configured in the alerting chart values, not in code",
    "sk-learn is not a package; the package is scikit-learn",
    "For the tokenizer, use tiktoken's cl100k_base encoding",
    "Reset a forgotten password via the admin CLI: manage.py changepassword USER",
    "The secret santa draw runs on the first of December",
    "http://user@example.com/path names a user without a password",
    "Set auth_token_ttl = 3600 seconds for service tokens",
    "The key rotation runbook is docs/runbooks/key-rotation.md",
    "The admin password for the staging box is in the team vault under staging/admin",
    "The password was rotated on 2024-03-01 after the audit",
    "The password hash is argon2id; the password policy: 12 characters or more",
    "the password is at least 12 characters long and is checked by zxcvbn3",
]
