"""What both gates deliver through: anchors (cued memories: paths, commands, keywords, events)."""
