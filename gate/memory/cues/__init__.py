"""When a memory comes back by itself: triggers (the spec syntax), globs (path globs), the cue table (shards reads
it, build writes it, load loads it fresh or has it rebuilt), staleness (an anchored file changed since).

No imports here: importing one of these modules must not load its siblings (the hooks pay for every import).
"""
