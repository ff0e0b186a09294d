"""`gate search QUERY`: ranked hits with the related appendix; `--explain`: which field and terms made each hit."""

from __future__ import annotations

import argparse

from gate.commands._common import add_json_option, add_project_option, open_store, print_json
from gate.memory.search import explain, search
from gate.rules import load_rules


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "search",
        help="search memories",
        description="Ranked search of the memories' titles, bodies, cue words and tags (forgotten ones left out; as "
        "the recall gate searches them), best first, with each memory's id.",
    )
    parser.add_argument("query", nargs="+", help="words to look for (several words: any may match, more rank "
                        "higher); quoting is not needed")
    parser.add_argument("--limit", type=int, default=None, metavar="N",
                        help="at most N ranked hits (default: max_hits of rules/search.toml, 8 as shipped)")
    parser.add_argument("--all", action="store_true", dest="show_all",
                        help="also show the matches below the relevance cliff (ranked far below the best one), "
                        "which a plain search counts but leaves out; --limit still applies")
    parser.add_argument("--explain", action="store_true",
                        help="show which field (title, body, cues, tags) and which terms matched each hit")
    add_project_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    rules = load_rules("search", store.paths.root)
    cut = rules.get("cut", {})
    if args.show_all:  # the same ranking without the cliff; which hits it would have cut is worked out below
        rules = {**rules, "cut": {**cut, "cliff_ratio": 0.0}}
    result = search(store.index, " ".join(args.query), limit=args.limit, rules=rules)
    cliff = max(float(cut.get("min_score", 0.0)), result.top_score * float(cut.get("cliff_ratio", 0.0)))
    below = {hit.id for hit in result.hits if hit.score < cliff} if args.show_all else set()
    hidden = {
        disposition: sum(1 for c in result.candidates if c.disposition == disposition)
        for disposition in ("BELOW_CLIFF", "OVER_CAP")
    }
    explained = {hit.id: explain(store.index, hit, result.terms, rules) for hit in result.hits} if args.explain else {}
    if args.json:
        data = result.to_json()
        for hit in data["hits"]:
            if args.explain:
                hit["explain"] = explained[hit["id"]]
            if hit["id"] in below:
                hit["below_cliff"] = True
        data["hidden"] = {"below_cliff": hidden["BELOW_CLIFF"], "over_limit": hidden["OVER_CAP"]}
        print_json(data)
        return 0
    if not result.hits:
        print("no memories match")
        return 0
    if args.explain:
        print(f"terms: {' '.join(result.terms)}")
    for hit in result.hits:
        extra = f" (supersedes {', '.join(hit.superseding)})" if hit.superseding else ""
        extra += " [below the cliff]" if hit.id in below else ""
        print(f"{hit.id} · {hit.record['kind']} · {hit.record['created'][:10]} · {hit.record['title']}{extra}")
        if args.explain:
            print(f"  score {hit.score:.3f}: {_matched_line(explained[hit.id])}")
    if result.related:
        print("related:")
        for rel in result.related:
            print(f"  {rel.id} · {rel.record['kind']} · {rel.record['title']}  ({rel.edge} {rel.from_id})")
    ratio = float(cut.get("cliff_ratio", 0.0))
    for line in _hidden_lines(hidden["BELOW_CLIFF"], hidden["OVER_CAP"], len(result.hits), ratio):
        print(line)
    return 0


def _hidden_lines(below_cliff: int, over_limit: int, shown: int, ratio: float) -> list[str]:
    """Say what a search matched but left out, and how to see it (a silent cut reads as "nothing else")."""
    lines = []
    if below_cliff:
        them = "it" if below_cliff == 1 else "them"
        lines.append(f"{_matches(below_cliff)} below the relevance cliff (under {ratio:.0%} of the best score): "
                     f"`--all` shows {them}")
    if over_limit:
        lines.append(f"{_matches(over_limit)} past the first {shown} not shown: `--limit N` shows more")
    return lines


def _matches(count: int) -> str:
    return f"{count} more match" if count == 1 else f"{count} more matches"


def _matched_line(explained: dict) -> str:
    fields = explained["fields"]
    parts = [
        f"{name} [{', '.join(f'{term} {score:.2f}' for term, score in terms.items())}]"
        for name, terms in sorted(fields.items(), key=lambda item: -sum(item[1].values()))
    ]
    if explained["via"]:
        parts.append(f"found through {', '.join(explained['via'])}, which it supersedes")
    return "; ".join(parts) if parts else "no field of its own matched"
