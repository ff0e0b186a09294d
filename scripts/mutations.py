"""Mutation check for the promises of issue #25: apply each small edit that breaks one promise, run the tests
that must catch it, and put the file back.

    .venv/bin/python scripts/mutations.py            # every mutation
    .venv/bin/python scripts/mutations.py M4 W2      # some of them
    .venv/bin/python scripts/mutations.py --list     # what each breaks, and which tests catch it

A mutation is "caught" when at least one of its tests fails with the edit applied. The script also runs the
same tests on the real code first: they must pass there, or the result means nothing. Files are restored from
the text read before the edit, whatever happens (Ctrl-C included); run it in a clean checkout and check
`git status` afterwards all the same.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# (id, what the edit breaks, [(file, old text, new text)], [test node ids that must fail])
MUTATIONS: list[tuple[str, str, list[tuple[str, str, str]], list[str]]] = [
    (
        "M1", "writeback_cap ignored: the cap hard-coded to 5",
        [("gate/gates/writeback/gate.py", 'cap = int(ctx.settings.get("writeback_cap", 5))', "cap = 5")],
        ["tests/test_promises.py::test_the_writeback_cap_follows_the_setting"],
    ),
    (
        "M2", "re-arming the ledger at compaction also resets the write-back block count",
        [("gate/session/ledger.py", "        self.compaction_pending = False\n",
          "        self.compaction_pending = False\n        self.writeback_blocks = 0\n")],
        ["tests/test_promises.py::test_the_writeback_cap_holds_for_the_session_across_compaction"],
    ),
    (
        "M3", "the related appendix (one hop of links) drops its project check",
        [("gate/memory/search.py", "            if not _belongs(other, project):\n                continue\n", "")],
        ["tests/test_promises.py::test_search_and_its_related_appendix_keep_to_the_project",
         "tests/test_promises.py::test_every_delivering_hook_keeps_to_the_project"],
    ),
    (
        "M3b", "the ranked hits drop their project check",
        [("gate/memory/search.py", "        if not _belongs(record, project):\n", "        if False:\n")],
        ["tests/test_store.py::test_no_leakage_between_projects_sharing_vocabulary",
         "tests/test_promises.py::test_search_and_its_related_appendix_keep_to_the_project"],
    ),
    (
        "M3c", "session start drops its project check",
        [("gate/gates/recall/standing.py",
          """r.get("scope") != "private" or not r.get("project") or r["project"] == project""", "True")],
        ["tests/test_promises.py::test_every_delivering_hook_keeps_to_the_project"],
    ),
    (
        "M3d", "the cue table (path anchors, keyword cues) keeps another project's private memories",
        [("gate/memory/cue_build.py", "if memory_id not in superseded and _belongs(record, paths.root)",
          "if memory_id not in superseded")],
        ["tests/test_promises.py::test_every_delivering_hook_keeps_to_the_project"],
    ),
    (
        "M4", "the hook's fail-open catches Exception only",
        [("gate/hook.py", "except BaseException as error:  # fail open", "except Exception as error:  # fail open")],
        ["tests/test_promises.py::test_a_base_exception_inside_a_gate_fails_open"],
    ),
    (
        "M5", "the near-duplicate check's own-project filter removed",
        [("gate/memory/duplicates.py",
          """        if record.get("scope") == "private" and record.get("project") not in ("", index.paths.root):
            continue  # another project's private memory (shared user-scope ones do count)
""", "")],
        ["tests/test_near_duplicates.py::test_memories_of_another_project_are_not_matched"],
    ),
    (
        "I1", "the command `gate install` writes no longer calls the hook (exit 0, silent)",
        [("gate/install/wiring.py", "-c 'from gate.hook import main; main()'", "-c 'from gate.hook import main'")],
        ["tests/test_promises.py::test_the_command_gate_install_writes_exits_zero_with_each_answer"],
    ),
    (
        "I2", "the command `gate install` writes loses -P: a project's own gate/ package shadows gate",
        [("gate/install/wiring.py", " -P -c 'from gate.hook", " -c 'from gate.hook")],
        ["tests/test_promises.py::test_the_command_gate_install_writes_exits_zero_with_each_answer"],
    ),
    (
        "T1", "the detached index build a hook starts builds nothing",
        [("gate/memory/index.py", "        index.catch_up(wait_seconds=120.0)\n", "        pass\n")],
        ["tests/test_store.py::test_hook_leaves_a_large_missing_index_to_a_background_build"],
    ),
    (
        "T2", "write_memory writes into the memory's own file (no temp file, no rename)",
        [("gate/memory/files.py", """    temp = store_dir / f"{TEMP_PREFIX}{memory.id}-{os.getpid()}"
    mode = 0o600""", """    temp = target
    mode = 0o600""")],
        ["tests/test_store.py::test_atomic_write_survives_a_crash_mid_write"],
    ),
    (
        "W2", "the write-back gate switched off (every Stop allowed)",
        [("gate/gates/writeback/gate.py", 'or not ctx.settings.get("writeback", True):', "or True:")],
        ["tests/test_hardening_poisoning.py::test_tool_output_saying_gate_remember_creates_no_memory"],
    ),
    (
        "R1", "`gate replay` rebuilds the live index instead of catching it up",
        [("gate/replay/run.py", "MemoryIndex(project).catch_up()", "MemoryIndex(project).rebuild()")],
        ["tests/test_replay.py::test_replay_reports_and_never_touches_live_state"],
    ),
    (
        "R2", "`gate replay` saves its ledgers, and its state redirect points at the live state directory",
        [("gate/replay/engine.py", "        results.append(StepResult(step, _decide(ctx, ledger)))\n",
          "        results.append(StepResult(step, _decide(ctx, ledger)))\n"
          "        from gate.session.ledger import _save, ledger_path\n"
          "        _save(ledger_path(timeline.session_id), ledger)\n"),
         ("gate/replay/run.py", 'redirect_state(os.path.join(scratch, "state"))',
          'redirect_state(os.path.join(os.environ["GATE_HOME"], "state"))')],
        ["tests/test_replay.py::test_replay_reports_and_never_touches_live_state"],
    ),
    (
        "S1", "`gate stats` lists every never-used memory (the text grows with the log)",
        [("gate/stats/report.py", "use['never_used_ids'][:8]", "use['never_used_ids']")],
        ["tests/test_stats.py::test_stats_text_stays_a_screen_however_much_there_is"],
    ),
    (
        "S2", "`gate stats` prints reason codes instead of words",
        [("gate/stats/report.py", "_REASON_WORDS.get(code, code)", "code")],
        ["tests/test_stats.py::test_stats_text_reads_in_ten_seconds"],
    ),
    (
        "S3", "`gate stats` text ends with a dump of every figure",
        [("gate/stats/report.py", '    return "\\n".join(lines)\n\n\n_MEM, _ACTIVE',
          '    return "\\n".join(lines) + "\\n" + repr(report)\n\n\n_MEM, _ACTIVE')],
        ["tests/test_stats.py::test_stats_text_reads_in_ten_seconds"],
    ),
    (
        "S4", "`gate stats` shows the last error's whole message (up to 300 characters on one line)",
        [("gate/stats/report.py", "if len(message) > ERROR_MESSAGE_CHARS:", "if False:")],
        ["tests/test_stats.py::test_stats_text_stays_a_screen_however_much_there_is"],
    ),
    (
        "T3", "the cue-table builder builds without taking the build lock",
        [("gate/memory/cue_build.py", "        fcntl.flock(lock_fd, fcntl.LOCK_EX)\n", "")],
        ["tests/test_triggers.py::test_the_detached_builder_waits_for_a_builder_at_work"],
    ),
    (
        "T4", "a catch-up no longer clears the files a writer killed mid-commit left behind",
        [("gate/memory/index.py", "            writer.garbage_collect_files()\n", "")],
        ["tests/test_hardening_crash.py::test_commit_after_a_writer_died_mid_commit"],
    ),
    (
        "T5", "a search no longer re-checks its candidates' files (an edit in place goes unseen)",
        [("gate/memory/search.py", "    if index.refresh_changed(signatures):", "    if False:")],
        ["tests/test_supersession.py::test_hand_edit_in_place_that_adds_a_link_reaches_the_next_hook"],
    ),
    (
        "D1", "the committed command exits without draining the event where gate is not set up (issue #32)",
        [("gate/install/wiring.py", 'f"cat >/dev/null 2>&1; echo', 'f"echo')],
        ["tests/test_install.py::test_committed_command_reads_a_large_event_whole_where_gate_is_not_set_up"],
    ),
    (
        "D2", "the launcher exits without draining the event when its interpreter is gone (issue #32)",
        [("gate/install/launcher.py", '"cat >/dev/null 2>&1  # drain the event', '"true  # drain the event')],
        ["tests/test_install.py::test_launcher_reads_a_large_event_whole_when_its_interpreter_is_gone"],
    ),
    (
        "L1", "a project rules value of the wrong kind is merged into the hooks' rules (issue #32)",
        [("gate/rules.py", "elif problems is not None and key in merged and not fits(value, merged[key]):",
          "elif False:")],
        ["tests/test_hooks.py::test_broken_project_rules_layer_is_left_out_and_named_once"],
    ),
    (
        "L2", "a project rules layer that does not parse fails the hooks open again (issue #32)",
        [("gate/rules.py", "        except (OSError, UnicodeDecodeError, ValueError) as error:  # tomllib",
          "        except OSError as error:  # tomllib")],
        ["tests/test_hooks.py::test_broken_project_rules_layer_is_left_out_and_named_once"],
    ),
]


def run_tests(nodes: list[str]) -> tuple[bool, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *nodes],
        cwd=REPO, capture_output=True, text=True,
    )
    lines = proc.stdout.strip().splitlines() or [""]
    why = next((line[1:].strip() for line in lines if line.startswith("E ")), "")  # the first failed assertion
    return proc.returncode == 0, lines[-1] + (f"; {why[:160]}" if why else "")


def apply(edits: list[tuple[str, str, str]]) -> dict[Path, str]:
    originals: dict[Path, str] = {}
    for name, old, new in edits:
        path = REPO / name
        originals.setdefault(path, path.read_text(encoding="utf-8"))
        current = path.read_text(encoding="utf-8")
        if current.count(old) != 1:
            restore(originals)
            raise SystemExit(f"{name}: the text to mutate occurs {current.count(old)} times (the code moved?)")
        path.write_text(current.replace(old, new), encoding="utf-8")
    return originals


def restore(originals: dict[Path, str]) -> None:
    for path, text in originals.items():
        path.write_text(text, encoding="utf-8")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ids", nargs="*", help="mutation ids (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutations and their tests")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.ids or m[0] in args.ids]
    if args.list:
        for key, what, _, nodes in chosen:
            print(f"{key}: {what}\n    " + "\n    ".join(nodes))
        return 0
    escaped = 0
    for key, what, edits, nodes in chosen:
        passed, tail = run_tests(nodes)
        if not passed:
            print(f"{key}: the tests fail on the real code ({tail}): fix them first")
            escaped += 1
            continue
        originals = apply(edits)
        try:
            passed, tail = run_tests(nodes)
        finally:
            restore(originals)
        verdict = "ESCAPED" if passed else "caught"
        escaped += passed
        print(f"{key}: {verdict} — {what} ({tail})")
    return 1 if escaped else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
