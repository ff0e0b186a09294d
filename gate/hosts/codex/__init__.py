"""OpenAI's Codex CLI: its rollout transcripts (rollout.py), hook events and verdicts."""
