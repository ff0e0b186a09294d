"""The gates, in layers (each imports only from the layers below it; tests/test_import_graph.py keeps it so):

    events/      one module per hook event, each with one entry, `handle(ctx, ledger)`: all gate/hook.py knows
    recall/      the recall gate: the prompt analysed once, the shift verdict, the query, firing, the session
                 start's standing memories and index tier, subagents' spawns
    writeback/   the write-back gate: evidence, signals, the verdict, the fix guard, the reminder
    delivery/    what both deliver through: anchors (path, command, keyword and event cues); with
                 gate/render.py (what the agent reads) and gate/session/ledger.py (what was delivered)
    base.py      HookContext, Outcome
"""
