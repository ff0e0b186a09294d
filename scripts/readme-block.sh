#!/usr/bin/env bash
# Print the commands of one named block of the README, exactly as written there.
#
#   scripts/readme-block.sh NAME [FILE]      # FILE defaults to the checkout's README.md
#
# A named block is the ```sh fence right after a line `<!-- ci: NAME -->` (more marks may follow NAME after a
# `;`). .ci/run runs the README's set-up and test commands this way, so CI and the README cannot drift apart;
# tests/test_docs_commands.py checks that each name CI uses is there exactly once. Exits 1 when it is not.
set -euo pipefail
name="${1:?usage: scripts/readme-block.sh NAME [FILE]}"
file="${2:-$(cd "$(dirname "$0")/.." && pwd)/README.md}"
awk -v name="$name" '
    BEGIN { want = 0; inside = 0; found = 0 }
    inside && /^```[[:space:]]*$/ { inside = 0; want = 0; next }
    inside { print; next }
    want && /^```sh[[:space:]]*$/ { inside = 1; found++; next }
    {
        want = 0
        line = $0
        if (match(line, /^<!--[[:space:]]*ci:[[:space:]]*[^;[:space:]]+/)) {
            got = substr(line, RSTART, RLENGTH)
            sub(/^<!--[[:space:]]*ci:[[:space:]]*/, "", got)
            if (got == name) want = 1
        }
    }
    END { if (found != 1) { printf "readme-block: %d blocks named %s\n", found, name > "/dev/stderr"; exit 1 } }
' "$file"
