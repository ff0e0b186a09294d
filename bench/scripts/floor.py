"""The floor: the least a Python hook can do. Read the event from stdin, print one JSON object.

Standard library only, no work in between, run by the same interpreter as gate's hooks: every hook pays at
least this (interpreter start, site, json), so gate's hooks are measured as a multiple of it.
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    event = json.load(sys.stdin)
    answer = {
        "hookSpecificOutput": {
            "hookEventName": event.get("hook_event_name", "UserPromptSubmit"),
            "additionalContext": "",
        }
    }
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
