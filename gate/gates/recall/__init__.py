"""The recall gate: what memory a prompt, a new context window or a subagent's task gets."""
