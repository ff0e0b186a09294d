"""`gate stats` and `gate trace` (cold path): figures computed from the audit log, the store and, for delivery
→ use, the session transcripts. One module per concept; the commands only parse arguments and print."""
