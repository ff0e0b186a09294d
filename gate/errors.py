"""Errors a user can act on: a plain message, an optional hint, an exit code."""

from __future__ import annotations


class GateError(Exception):
    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class ValidationError(GateError):
    """Input that gate refuses; nothing was written."""

    exit_code = 2


class NotFoundError(GateError):
    exit_code = 3


class SecretError(ValidationError):
    """Text that looks like a credential; nothing was written."""


class DuplicateError(ValidationError):
    """A new memory restates a live one; nothing was written. `matches` are the memories it looks like."""

    exit_code = 4

    def __init__(self, message: str, hint: str | None = None, matches: list | None = None) -> None:
        super().__init__(message, hint)
        self.matches = matches or []
