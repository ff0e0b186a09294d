#!/usr/bin/env bash
# Install the pinned OpenAI Codex CLI for the end-to-end tests (tests/e2e/test_codex.py) into a cache directory.
#
#   scripts/install-codex-cli.sh            # installs (or reuses) the pinned version
#   GATE_CLI_CACHE=DIR scripts/install-codex-cli.sh
#   GATE_CODEX_VERSION=X.Y.Z scripts/install-codex-cli.sh   # only when re-pinning
#
# The last line of stdout is the absolute path of a working `codex` binary (scripts/install-npm-cli.sh).
# Notes (CLI 0.171.0): the package `@openai/codex` is a node wrapper (bin/codex.js) whose platform binary
# comes as an optional dependency (`@openai/codex-linux-x64`, an alias of `@openai/codex@0.171.0-linux-x64`);
# the wrapper needs node >= 16. `codex --version` prints "codex-cli VERSION".
set -euo pipefail
exec "$(dirname "$0")/install-npm-cli.sh" codex @openai/codex "${GATE_CODEX_VERSION:-0.171.0}" codex "codex-cli "
