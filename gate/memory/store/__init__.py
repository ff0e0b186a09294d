"""The TOML store, the source of truth: scan (listing a directory cheaply), files (reading and writing one file),
store (the Store: remember, edit, forget, link, restore, export), importing (gate import), history, duplicates
and secrets (checks at write), anchor_paths (--path as the store keeps it), killpoints (the interruption tests).

No imports here: importing one of these modules must not load its siblings (the hooks pay for every import).
"""
