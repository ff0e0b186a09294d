"""Mutation check for the promises of issues #25, #30, #32 and #44: apply each small edit that breaks one
promise, run the tests that must catch it, and put the file back.

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

# the files of the write-back gate's promises (issue 32 item 8, issue 30), named once
_WB, _REM, _SIG = "gate/gates/writeback/gate.py", "gate/gates/writeback/reminder.py", "gate/gates/writeback/signals.py"
_FG, _FIRE = "gate/gates/writeback/fixguard.py", "gate/gates/recall/fire.py"
_PROMPT, _CARRY = "gate/gates/events/user_prompt_submit.py", "gate/session/carryover.py"
_SUB, _STANDING = "gate/gates/recall/subagent.py", "gate/gates/recall/standing.py"
_SEARCH_FIRST, _CUES = "gate/gates/recall/search_first.py", "gate/session/turn_cues.py"
_SEARCH = "gate/memory/search.py"
_SPAWN_MUTE = 'if ledger.muted or muted_by(ctx.paths, False) or not ctx.settings.get("recall", True):'

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
          """r.get("scope") != "private" or owns(r.get("project") or "")""", "True")],
        ["tests/test_promises.py::test_every_delivering_hook_keeps_to_the_project"],
    ),
    (
        "M3d", "the cue table (path anchors, keyword cues) keeps another project's private memories",
        [("gate/memory/cues/build.py", "if memory_id not in superseded and _belongs(record, paths)",
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
        [("gate/memory/store/duplicates.py",
          """        if record.get("scope") == "private" and not index.paths.owns(record.get("project") or ""):
            continue  # another project's private memory (shared user-scope ones do count)
""", "")],
        ["tests/test_near_duplicates.py::test_memories_of_another_project_are_not_matched"],
    ),
    (
        "I1", "the command `gate install` writes no longer calls the hook (exit 0, silent)",
        [("gate/install/launcher.py", 'ENTRY = "from gate.hook import entry; entry()"',
          'ENTRY = "from gate.hook import entry"')],
        ["tests/test_promises.py::test_the_command_gate_install_writes_exits_zero_with_each_answer"],
    ),
    (
        "I2", "the command `gate install` writes loses -I: a project's own gate/ package shadows gate",
        [("gate/install/launcher.py", 'return [python, "-I", "-S", "-c", entry_code(path)]',
          'return [python, "-S", "-c", entry_code(path)]')],
        ["tests/test_promises.py::test_the_command_gate_install_writes_exits_zero_with_each_answer"],
    ),
    (
        "T1", "the detached index build a hook starts builds nothing",
        [("gate/memory/index/build.py", "        index.catch_up(wait_seconds=120.0)\n", "        pass\n")],
        ["tests/test_store.py::test_hook_leaves_a_large_missing_index_to_a_background_build"],
    ),
    (
        "T2", "write_memory writes into the memory's own file (no temp file, no rename)",
        [("gate/memory/store/files.py", """    temp = store_dir / f"{TEMP_PREFIX}{memory.id}-{os.getpid()}"
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
        [("gate/replay/engine.py", "        result = StepResult(step, _decide(ctx, ledger))\n",
          "        result = StepResult(step, _decide(ctx, ledger))\n"
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
        [("gate/memory/cues/build.py", "        fcntl.flock(lock_fd, fcntl.LOCK_EX)\n", "")],
        ["tests/test_triggers.py::test_the_detached_builder_waits_for_a_builder_at_work"],
    ),
    (
        "T4", "a catch-up no longer clears the files a writer killed mid-commit left behind",
        [("gate/memory/index/write.py", "        writer.garbage_collect_files()\n", "")],
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
    # --- issue 32 item 8 and issue 30: promises of the write-back gate and its reminder, each held by a test
    (
        "W3", "the answer to a block is read without the message's own words (\"Not worth keeping.\" ignored)",
        [(_WB, 'find_store_decision(turn, ctx.rules("writeback"), answering=True) if turn is not None else None',
          'find_store_decision(turn, ctx.rules("writeback")) if turn is not None else None')],
        ["tests/test_writeback_promises.py::test_the_block_s_own_words_answer_it"],
    ),
    (
        "W4", "the answer to a reminder is read without the message's own words",
        [(_WB, 'settle(ledger, find_store_decision(turn, ctx.rules("writeback"), answering=True), extra)',
          'settle(ledger, find_store_decision(turn, ctx.rules("writeback")), extra)')],
        ["tests/test_writeback_promises.py::test_a_reminder_declined_in_the_block_s_words_is_acknowledged"],
    ),
    (
        "W5", "a project mute does not silence a pending reminder (the session mute alone checked)",
        [(_REM, "if not isinstance(pending, dict) or muted_by(ctx.paths, ledger.muted):",
          "if not isinstance(pending, dict) or ledger.muted:")],
        ["tests/test_writeback_promises.py::test_a_project_mute_silences_a_pending_reminder"],
    ),
    (
        "W6", "a session mute after a deferral does not silence its reminder",
        [(_REM, "if not isinstance(pending, dict) or muted_by(ctx.paths, ledger.muted):",
          "if not isinstance(pending, dict) or muted_by(ctx.paths, False):")],
        ["tests/test_writeback_promises.py::test_a_session_mute_after_a_deferral_silences_its_reminder"],
    ),
    (
        "W7", "a teammate agent's message confirms or refutes a reminder as if the user said it",
        [(_REM, 'for key in ("machine_prompt", "agent_prompt"):', 'for key in ("machine_prompt",):')],
        ["tests/test_writeback_promises.py::test_a_teammate_agent_s_message_neither_confirms_nor_refutes"],
    ),
    (
        "W8", "\"still broken\" withdraws everything deferred with the fix, the decision too",
        [(_REM, 'kinds = [k for k in pending.get("kinds", []) if k != "fix"]', "kinds = []")],
        ["tests/test_writeback_promises.py::test_still_broken_withdraws_the_fix_and_keeps_the_decision"],
    ),
    (
        "W9", "a prompt with nothing pending loads the reminder",
        [(_PROMPT, "    if not pending:\n        return outcome\n", "")],
        ["tests/test_writeback_promises.py::test_a_prompt_with_nothing_pending_never_loads_the_reminder"],
    ),
    (
        "W10", "a reminder blocks the prompt (its output a decision, its audit record unchanged)",
        [(_REM, 'output = additional_context(ctx.event_name, f"{existing}\\n\\n{text}" if existing else text)\n'
          '    if outcome.decision == "fired":  # the recall gate spoke too',
          'output = {"decision": "block", "reason": text}\n'
          '    if outcome.decision == "fired":  # the recall gate spoke too')],
        ["tests/test_writeback_promises.py::test_a_reminder_never_blocks_the_prompt",
         "tests/test_reminder_hooks.py::test_reminders_are_capped_per_session_and_never_block"],
    ),
    (
        "F1", "the fix guard's `last` is not kept: a loop longer than idle_turns blocks again",
        [(_FG, '    guard["last"] = ledger.writeback_turns\n', "")],
        ["tests/test_writeback_promises.py::test_the_guard_holds_over_a_loop_longer_than_its_idle_turns"],
    ),
    (
        "F2", "the recall gate's shift verdict no longer reaches the fix guard (a new topic does not end it)",
        [(_FIRE, '"terms": verdict.terms, "shift": verdict.shift}', '"terms": verdict.terms, "shift": False}')],
        ["tests/test_writeback_promises.py::test_a_real_prompt_on_another_topic_ends_the_guard"],
    ),
    (
        "W11", "a Stop right after a compaction boundary weighs no prompt (whose request it answers is lost)",
        [(_WB, "        turn.prompt = ledger.writeback_prompt_head  # read from a compaction boundary on",
          "        pass  # read from a compaction boundary on")],
        ["tests/test_writeback_promises.py::test_a_stop_after_a_compaction_boundary_weighs_the_prompt_before_it"],
    ),
    (
        "W12", "the reply's tail, cut inside a code block, pairs its closing fence with the next opening one",
        [(_SIG, 'if text.count("```", 0, start) % 2:', "if False:")],
        ["tests/test_writeback_promises.py::test_a_closing_question_after_a_long_code_block_still_asks_the_user"],
    ),
    (
        "W13", "a bare pick after five edits blocks (bare_choice weighs 0.5)",
        [("rules/writeback.toml", "bare_choice = 0.4\n", "bare_choice = 0.5\n")],
        ["tests/test_writeback_promises.py::test_a_bare_pick_after_five_edits_defers_instead_of_blocking"],
    ),
    (
        "C1", "a turn deferred as its session ends is lost (not kept for the next session)",
        [(_REM, "    _carry(ctx, ledger.writeback_reminder)\n", "")],
        ["tests/test_writeback_promises.py::test_a_turn_deferred_at_a_session_s_end_reaches_the_next_session_once"],
    ),
    (
        "C2", "a carried turn is handed to every session that starts, not once",
        [(_CARRY, "            del carry.deferred[other]\n            carry.changed = True\n", "")],
        ["tests/test_writeback_promises.py::test_a_turn_deferred_at_a_session_s_end_reaches_the_next_session_once"],
    ),
    (
        "C3", "a carried turn never expires",
        [(_CARRY, "if isinstance(when, int | float) and now - when <= max_days * DAY:",
          "if True:")],
        ["tests/test_writeback_promises.py::test_a_deferred_turn_older_than_a_week_is_dropped"],
    ),
    (
        "C4", "a session's own prompt reminds of a turn another session was already shown",
        [(_REM, "    if not ours:  # another session", "    if False:  # another session")],
        ["tests/test_writeback_promises.py::test_a_reminder_taken_by_another_session_is_not_shown_twice"],
    ),
    (
        "A1", "with two pending spawns of one type, the type fallback claims the first",
        [(_SUB, "key = of_type[0] if len(of_type) == 1 else None", "key = of_type[0] if of_type else None")],
        ["tests/test_subagent_gate.py::test_two_pending_spawns_of_one_type_are_not_guessed_between"],
    ),
    (
        "A2", "GATE_RECALL=off does not hold for a spawn's search",
        [(_SUB, _SPAWN_MUTE, "if ledger.muted or muted_by(ctx.paths, False):")],
        ["tests/test_subagent_gate.py::test_recall_off_holds_for_a_spawns_search"],
    ),
    (
        "A3", "a session mute does not hold for a spawn",
        [(_SUB, _SPAWN_MUTE, 'if muted_by(ctx.paths, False) or not ctx.settings.get("recall", True):')],
        ["tests/test_subagent_gate.py::test_a_session_mute_holds_for_a_spawn_and_inside_the_subagent"],
    ),
    (
        "A4", "a session mute does not hold inside a subagent",
        [(_SUB, "    sub.muted = ledger.muted\n", "")],
        ["tests/test_subagent_gate.py::test_a_session_mute_holds_for_a_spawn_and_inside_the_subagent"],
    ),
    (
        "X1", "a memory shown in full at session start is listed as an index line too",
        [(_STANDING, 'for r in _of_kind(ctx, str(kind)) if r["id"] not in shown]',
          "for r in _of_kind(ctx, str(kind))]")],
        ["tests/test_hooks.py::test_a_memory_shown_in_full_at_session_start_is_not_also_an_index_line"],
    ),
    (
        "X2", "the index's line cap (rules/recall.toml [index] max_lines) ignored",
        [(_STANDING, "return candidates[:most], max(0, len(candidates) - most)", "return candidates, 0")],
        ["tests/test_hooks.py::test_the_index_holds_at_most_its_max_lines"],
    ),
    (
        "P1", "a task notification is searched as an answer (by the reply before it)",
        [("gate/gates/recall/prompt.py", 'return "command"  # written by a program',
          'return "answer"  # written by a program')],
        ["tests/test_recall_promises.py::test_a_task_notification_is_not_searched_as_an_answer"],
    ),
    (
        "P2", "the cap of max_per_prompt memories a prompt ignored (recall_max_hits alone)",
        [(_FIRE, 'most = min(int(ctx.settings.get("recall_max_hits", 5)), int(_num(fire, "max_per_prompt", 3)))',
          'most = int(ctx.settings.get("recall_max_hits", 5))')],
        ["tests/test_recall_promises.py::test_at_most_max_per_prompt_memories_a_prompt"],
    ),
    (
        "P3", "a memory only the reply names is delivered to a prompt with content of its own",
        [(_FIRE, "    own = set() if query.content_free else set(query.prompt_terms)\n    return deliver",
          "    own = set()\n    return deliver")],
        ["tests/test_recall_promises.py::test_a_memory_only_the_reply_names_is_not_delivered"],
    ),
    (
        "Z1", "the z floor's statistics count another project's and superseded memories as this store's",
        [("gate/memory/search.py", "        gone = len(raw) - len(ranked)\n", "        gone = 0\n")],
        ["tests/test_recall_zscore.py::test_the_floor_counts_only_this_projects_live_memories"],
    ),
    (
        "Z2", "the spread's estimate of the unseen matches drifts from the exact statistics",
        [("gate/memory/search.py", "        total += rest * low / 2\n", "        total += rest * low / 1.5\n")],
        ["tests/test_recall_zscore.py::test_the_estimate_fires_on_the_same_memories_as_the_exact_statistics"],
    ),
    # --- issue 44 item 7: promises of the last round a mutation audit found no test holding
    (
        "Q1", "a new prompt without a prompt_id still owes the search the last turn was asked for",
        [(_PROMPT, "    ledger.search_request = None  # a new turn", "    pass  # a new turn")],
        ["tests/test_search_first.py::test_a_new_prompt_without_a_prompt_id_clears_the_last_turns_request",
         "tests/test_search_first.py::test_a_new_prompt_that_asks_nothing_owes_nothing"],
    ),
    (
        "Q2", "[search_first] ask_when_delivered = false not honoured (a follow-up always asks)",
        [(_SEARCH_FIRST, 'and bool(rules.get("ask_when_delivered", False)))', "and True)")],
        ["tests/test_search_first.py::test_ask_when_delivered_false_leaves_such_a_follow_up_unasked"],
    ),
    (
        "Q3", "`&>`, `>|` and `&>>` not read as output into a file",
        [("gate/commandline.py", 'if ">" in word and not (word == ">&"',
          'if word in (">", ">>") and not (word == ">&"')],
        ["tests/test_commandline.py::test_every_redirection_into_a_file_is_a_change"],
    ),
    (
        "Q4", "a read-only command line over MAX_CHARS read like a short one (not counted as a change)",
        [("gate/commandline.py", 'if len(command) > MAX_CHARS or "`" in command', 'if "`" in command')],
        ["tests/test_commandline.py::test_a_read_only_line_past_max_chars_is_a_change"],
    ),
    (
        "Q5", "only Edit counts as an edit: Write, MultiEdit and NotebookEdit pass before the search",
        [("rules/triggers.toml", 'edit = ["Edit", "Write", "MultiEdit", "NotebookEdit"]', 'edit = ["Edit"]')],
        ["tests/test_search_first.py::test_every_tool_that_edits_a_file_is_refused_like_an_edit"],
    ),
    (
        "I3", "is_gate_rule takes any word ending in gate for gate (`mygate`, `tollgate`, `./bin/notgate`)",
        [("gate/install/permissions.py", """(?P<prefix>gate|/[^\\s'\\"()]*/gate|'/[^']*/gate')""",
          """(?P<prefix>[^\\s'\\"()]*gate|'/[^']*/gate')""")],
        ["tests/test_install.py::test_a_rule_for_another_program_whose_name_ends_in_gate_is_not_gates"],
    ),
    (
        "I4", "is_gate_rule takes a path ending in `…gate` for `…/gate` (`/opt/tools/notgate`)",
        [("gate/install/permissions.py", """|/[^\\s'\\"()]*/gate|""", """|/[^\\s'\\"()]*gate|""")],
        ["tests/test_install.py::test_a_rule_for_another_program_whose_name_ends_in_gate_is_not_gates"],
    ),
    (
        "C5", "a compaction's start carries another session's deferred turn",
        [("gate/gates/events/session_start.py", '    if source == "compact" or outcome.reason == "SKIP_MUTED":',
          '    if outcome.reason == "SKIP_MUTED":')],
        ["tests/test_writeback_promises.py::test_a_compaction_start_carries_no_other_session_s_turn"],
    ),
    (
        "C6", "a resumed session is carried its own turn under the other sessions' header",
        [(_CARRY, "            if other == session or (isinstance(when, int | float) and when > now):",
          "            if isinstance(when, int | float) and when > now:")],
        ["tests/test_writeback_promises.py::"
         "test_a_resumed_session_is_shown_the_other_sessions_turns_and_its_own_at_its_prompt"],
    ),
    (
        "U1", "pieces of a secret the prompt holds (a DSN's password) become cue words",
        [(_CUES, "        return not find_secret(raw, project_root) and not any(raw in piece for piece in pieces)",
          "        return not find_secret(raw, project_root)")],
        ["tests/test_turn_cues.py::test_no_piece_of_a_secret_in_the_prompt_is_a_cue",
         "tests/test_turn_cues.py::test_no_secret_is_ever_a_cue"],
    ),
    (
        "U2", "cue words that together match a secret pattern are kept",
        [(_CUES, "    if cues and find_secret(cues.text, project_root):", "    if False:")],
        ["tests/test_turn_cues.py::test_cue_words_that_together_make_a_secret_are_all_left_out"],
    ),
    (
        "U3", "a successful tool result's traceback is taken as an error line",
        [(_CUES, "        if not result.is_error or _gates_own(turn, result.tool_use_id):",
          "        if _gates_own(turn, result.tool_use_id):")],
        ["tests/test_turn_cues.py::test_a_traceback_in_a_successful_tool_result_is_no_error_line"],
    ),
    (
        "K1", "reads kept in a process are not read again after a write (a new commit) in that process",
        [("gate/memory/index/read.py", "        if held is None or held[0] != mark:\n", "        if held is None:\n")],
        ["tests/test_session_index.py::test_reads_kept_in_a_process_are_read_again_after_a_write_in_that_process"],
    ),
    (
        "K2", "the environment answer is kept without the terms asked",
        [("gate/memory/index/read.py", "        key = (wanted, tuple(field_names), named)\n",
          "        key = (wanted, tuple(field_names))\n")],
        ["tests/test_session_index.py::test_the_environment_answer_is_kept_by_the_terms_asked"],
    ),
    (
        "Y1", "a one-word query needs min_matched_terms words all the same (so nothing passes)",
        [(_SEARCH, '    need = min(int(cut.get("min_matched_terms", 1)), len(terms))\n',
          '    need = int(cut.get("min_matched_terms", 1))\n')],
        ["tests/test_search_matched_terms.py::test_a_one_word_query_needs_that_word_only"],
    ),
    (
        "Y2", "the cliff is measured from the best hit, one the term rule hid included",
        [(_SEARCH, "    few: list[Hit] = []\n",
          "    top = ordered[0].score if ordered else 0.0\n    few: list[Hit] = []\n"),
         (_SEARCH, "    top = ordered[0].score if ordered else 0.0\n    cliff = max(",
          "    cliff = max(")],
        ["tests/test_search_matched_terms.py::test_the_cliff_is_measured_from_the_best_hit_the_term_rule_keeps"],
    ),
    (
        "Y3", "`gate search --all` marks the cliff measured from a hit the term rule hid",
        [("gate/commands/search.py",
          "    top = max((hit.score for hit in result.hits if hit.id not in few), default=0.0)",
          "    top = max((hit.score for hit in result.hits), default=0.0)")],
        ["tests/test_search_matched_terms.py::test_the_cliff_is_measured_from_the_best_hit_the_term_rule_keeps"],
    ),
    # a project is its repository (issue 44, item 1)
    (
        "PR1", "a worktree's git dir is taken for the repository's (its `commondir` not followed): each worktree "
        "a project of its own",
        [("gate/project_id.py", "        git_dir = os.path.normpath(join(git_dir, common.strip()))\n",
                                   "        git_dir = git_dir\n")],
        ["tests/test_project_identity.py::test_every_worktree_is_one_project_and_its_id_lives_in_the_repository",
         "tests/test_project_identity.py::test_a_memory_stored_in_the_main_checkout_is_delivered_in_a_worktree"],
    ),
    (
        "PR2", "an import keeps the project its lines name (another checkout's: never delivered here)",
        [("gate/memory/store/importing.py", "    if not keep_project or not data.get(\"project\"):",
          "    if not data.get(\"project\"):")],
        ["tests/test_project_identity.py::test_an_import_is_the_importing_projects_unless_told_to_keep_the_source"],
    ),
    (
        "PR3", "stores named by a checkout's path never join the repository's project",
        [("gate/paths.py", "        if identity.how == \"repository\" and (identity.created or any(",
          "        if False and (identity.created or any(")],
        ["tests/test_project_identity.py::test_an_old_store_joins_the_repository_on_first_use_and_loses_nothing"],
    ),
    (
        "PR4", "a memory naming an earlier path of the project (an alias) is another project's",
        [("gate/paths.py", "project == self.key or project in self.aliases", "project == self.key")],
        ["tests/test_project_identity.py::test_an_old_store_joins_the_repository_on_first_use_and_loses_nothing"],
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
