#!/usr/bin/env bash
# Install the pinned Google Gemini CLI for the end-to-end tests (tests/e2e/test_gemini.py) into a cache directory.
#
#   scripts/install-gemini-cli.sh            # installs (or reuses) the pinned version
#   GATE_CLI_CACHE=DIR scripts/install-gemini-cli.sh
#   GATE_GEMINI_VERSION=X.Y.Z scripts/install-gemini-cli.sh   # only when re-pinning
#
# The last line of stdout is the absolute path of a working `gemini` binary (scripts/install-npm-cli.sh).
# Notes (CLI 0.61.0): the package `@google/gemini-cli` is plain JavaScript (a bundle run by node); its bin link
# `gemini` needs node >= 20. `gemini --version` prints the version alone.
set -euo pipefail
exec "$(dirname "$0")/install-npm-cli.sh" gemini @google/gemini-cli "${GATE_GEMINI_VERSION:-0.61.0}" gemini
