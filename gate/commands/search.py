"""`gate search QUERY`: ranked hits with the related appendix; `--explain`: which field and terms made each hit."""

from __future__ import annotations

import argparse

from gate.commands._common import add_json_option, add_project_option, open_store, print_json
from gate.memory.search import explain, search
from gate.rules import load_rules


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("search", help="search memories")
    parser.add_argument("query", nargs="+")
    parser.add_argument("--limit", type=int, default=None, help="at most N ranked hits")
    parser.add_argument("--explain", action="store_true",
                        help="show which field (title, body, cues, tags) and which terms matched each hit")
    add_project_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    rules = load_rules("search", store.paths.root)
    result = search(store.index, " ".join(args.query), limit=args.limit, rules=rules)
    explained = {hit.id: explain(store.index, hit, result.terms, rules) for hit in result.hits} if args.explain else {}
    if args.json:
        data = result.to_json()
        if args.explain:
            for hit in data["hits"]:
                hit["explain"] = explained[hit["id"]]
        print_json(data)
        return 0
    if not result.hits:
        print("no memories match")
        return 0
    if args.explain:
        print(f"terms: {' '.join(result.terms)}")
    for hit in result.hits:
        extra = f" (supersedes {', '.join(hit.superseding)})" if hit.superseding else ""
        print(f"{hit.id} · {hit.record['kind']} · {hit.record['created'][:10]} · {hit.record['title']}{extra}")
        if args.explain:
            print(f"  score {hit.score:.3f}: {_matched_line(explained[hit.id])}")
    if result.related:
        print("related:")
        for rel in result.related:
            print(f"  {rel.id} · {rel.record['kind']} · {rel.record['title']}  ({rel.edge} {rel.from_id})")
    return 0


def _matched_line(explained: dict) -> str:
    fields = explained["fields"]
    parts = [
        f"{name} [{', '.join(f'{term} {score:.2f}' for term, score in terms.items())}]"
        for name, terms in sorted(fields.items(), key=lambda item: -sum(item[1].values()))
    ]
    if explained["via"]:
        parts.append(f"found through {', '.join(explained['via'])}, which it supersedes")
    return "; ".join(parts) if parts else "no field of its own matched"
