"""One module per hook event, named after it, each with one entry: `handle(ctx, ledger) -> Outcome`."""
