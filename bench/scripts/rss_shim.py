"""Report a command's own peak RSS: fork it from this small process, reap it with wait4, write ru_maxrss.

Why a shim: Linux folds the RSS of the address space a process leaves at exec() into its ru_maxrss, and
subprocess spawns with vfork, whose pre-exec address space is the parent's. Measured directly from the
benchmark runner, every child would report at least the runner's own (large) RSS. Forked from this shim, a
child starts from a copy of a few MB of interpreter instead, below any Python hook's own peak.

    python -S rss_shim.py OUT_FILE COMMAND [ARG...]
"""

import os
import sys


def main() -> int:
    out, argv = sys.argv[1], sys.argv[2:]
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    with open(out, "w") as handle:
        handle.write(str(usage.ru_maxrss))
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 1


if __name__ == "__main__":
    sys.exit(main())
