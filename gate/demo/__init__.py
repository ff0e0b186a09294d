"""`gate demo`: a sample session the project ships (sample/session.jsonl, a transcript in Claude Code's format
written for the purpose, and sample/memories.jsonl, the store it starts from), played through the real hook
process in a throwaway home. No model and no network: the agent's side is the recording; the hooks' side is
decided live, by the code and the rules installed now.
"""
