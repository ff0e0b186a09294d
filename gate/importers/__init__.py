"""Importers from the memory people already keep (cold path): Claude Code's auto memory and CLAUDE.md files.

`gate import --from claude-memory|claude-md` (gate/importers/command.py) plans every memory first, checks
each one alone (a bad file is reported and skipped, the rest go in), then writes the new ones, each file whole.
"""
