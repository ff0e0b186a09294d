"""`gate reindex [--check]`: rebuild the derived index from the files, or report how they differ."""

from __future__ import annotations

import argparse
import sys

from gate.commands._common import add_json_option, add_project_option, print_json
from gate.memory.model import Memory
from gate.memory.store.store import Store


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("reindex", help="rebuild the search index from the memory files")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if the index differs from the files")
    add_project_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run)


def index_difference(store: Store) -> dict[str, list[str]]:
    """Ids in the files but not the index (or with other content), and ids only in the index."""
    from gate.memory.index.write import record_of
    from gate.memory.store.store import effective_statuses

    files = {m.id: m for m in store.all() if isinstance(m, Memory)}
    statuses = effective_statuses(files.values())  # the index records carry the status derived from links
    indexed: dict[str, bytes] = {}
    if store.index.exists():
        searcher = store.index.searcher()
        import tantivy

        result = searcher.search(tantivy.Query.all_query(), limit=max(1, searcher.num_docs), count=False)
        for _, address in result.hits:
            raw = bytes(searcher.doc(address).get_first("record"))
            import json

            indexed[json.loads(raw)["id"]] = raw
    missing = sorted(i for i in files if i not in indexed)
    extra = sorted(i for i in indexed if i not in files)
    differing = sorted(i for i, m in files.items() if i in indexed and indexed[i] != record_of(m, statuses[i]))
    return {"missing": missing, "extra": extra, "differing": differing}


def run(args: argparse.Namespace) -> int:
    store = Store.for_cwd(args.project)
    if args.check:
        diff = index_difference(store)
        clean = not any(diff.values())
        if args.json:
            print_json({"consistent": clean, **diff})
        else:
            print("index matches the files" if clean else f"index differs: {diff}")
        return 0 if clean else 1
    report = store.reindex()
    for corrupt in report.corrupt:
        print(f"gate: warning: skipped {corrupt.path}: {corrupt.reason}", file=sys.stderr)
    if args.json:
        print_json({"indexed": report.added, "corrupt": [str(c.path) for c in report.corrupt]})
    else:
        skipped = f", skipped {len(report.corrupt)} corrupt" if report.corrupt else ""
        print(f"indexed {report.added} memories{skipped}")
    return 0
