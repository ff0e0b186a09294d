"""The tantivy index of a project's memories, derived from the TOML files: engine (tantivy as a hook can afford it),
analyzer, schema (what the index keeps: schema, manifests), read (MemoryIndex: open, freshness look, reads),
write (the writer and the re-indexing pass), build (the detached build of a large store).

No imports here: importing one of these modules must not load its siblings (the hooks pay for every import).
"""
