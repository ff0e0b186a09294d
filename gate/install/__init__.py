"""Wiring gate into Claude Code settings files: hook specs, a format-preserving JSON editor, merge and unmerge.

Cold path only (used by `gate install`, `gate uninstall`, `gate doctor`); the hook never imports this package.
"""
