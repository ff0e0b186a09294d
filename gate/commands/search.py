"""`gate search QUERY`: ranked hits with the related appendix; `--explain`: which field and terms made each hit."""

from __future__ import annotations

import argparse
import json
from typing import Any

from gate.commands._common import add_json_option, add_project_option, open_store, print_json
from gate.memory.search import SearchResult, explain, search
from gate.paths import ProjectPaths
from gate.rules import load_rules


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "search",
        help="search memories",
        description="Ranked search of the memories' titles, bodies, cue words and tags (forgotten ones left out; as "
        "the recall gate searches them), best first, with each memory's id.",
    )
    parser.add_argument("query", nargs="+", help="words to look for (several words: a memory must hold two of "
                        "them, more rank higher; min_matched_terms of rules/search.toml); quoting is not needed")
    parser.add_argument("--limit", type=int, default=None, metavar="N",
                        help="at most N ranked hits (default: max_hits of rules/search.toml, 8 as shipped)")
    parser.add_argument("--all", action="store_true", dest="show_all",
                        help="also show the matches below the relevance cliff (ranked far below the best one) and "
                        "those holding fewer of the words than a plain search asks, which it counts but leaves out; "
                        "--limit still applies")
    parser.add_argument("--explain", action="store_true",
                        help="show which field (title, body, cues, tags) and which terms matched each hit")
    add_project_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    rules = load_rules("search", store.paths.root)
    cut = rules.get("cut", {})
    if args.show_all:  # the same ranking without the cuts; which hits they would have left out is worked out below
        rules = {**rules, "cut": {**cut, "cliff_ratio": 0.0, "min_matched_terms": 1}}
    result = search(store.index, " ".join(args.query), limit=args.limit, rules=rules)
    need = min(int(cut.get("min_matched_terms", 1)), len(result.terms))
    few = {hit.id for hit in result.hits if len(hit.matched) < need and not hit.superseding} if args.show_all else set()
    # The cliff is measured from the best hit that holds enough of the words (as a plain search measures it).
    top = max((hit.score for hit in result.hits if hit.id not in few), default=0.0)
    cliff = max(float(cut.get("min_score", 0.0)), top * float(cut.get("cliff_ratio", 0.0)))
    below = {hit.id for hit in result.hits if hit.score < cliff and hit.id not in few} if args.show_all else set()
    hidden = {
        disposition: sum(1 for c in result.candidates if c.disposition == disposition)
        for disposition in ("BELOW_CLIFF", "OVER_CAP", "FEW_TERMS")
    }
    explained = {hit.id: explain(store.index, hit, result.terms, rules) for hit in result.hits} if args.explain else {}
    found = list(dict.fromkeys([hit.id for hit in result.hits] + [rel.id for rel in result.related]))
    if args.json:
        data = result.to_json()
        for hit in data["hits"]:
            if args.explain:
                hit["explain"] = explained[hit["id"]]
            if hit["id"] in below:
                hit["below_cliff"] = True
            if hit["id"] in few:
                hit["few_terms"] = True
        data["hidden"] = {"below_cliff": hidden["BELOW_CLIFF"], "over_limit": hidden["OVER_CAP"],
                          "few_terms": hidden["FEW_TERMS"]}
        print_json(data)
        _record(args, store.paths, found, len(json.dumps(data)))
        return 0
    lines = _text_lines(result, args.explain, explained, below | few, hidden, float(cut.get("cliff_ratio", 0.0)),
                        need, few)
    print("\n".join(lines))
    _record(args, store.paths, found, sum(len(line) + 1 for line in lines))
    return 0


def _record(args: argparse.Namespace, paths: ProjectPaths, found: list[str], chars: int) -> None:
    """An agent's own search is delivery (gate/session/agent_search.py); a person's records nothing."""
    from gate.session import agent_search

    agent_search.record("search", " ".join(args.query), found, str(paths.root), chars=chars, project_id=paths.key)


def _text_lines(result: SearchResult, explaining: bool, explained: dict[str, Any], below: set[str],
                hidden: dict[str, int], ratio: float, need: int, few: set[str]) -> list[str]:
    if not result.hits:
        if hidden["FEW_TERMS"]:
            count = hidden["FEW_TERMS"]
            return [f"no memories hold {need} of the words; {count} {'holds' if count == 1 else 'hold'} fewer: "
                    f"`--all` shows {'it' if count == 1 else 'them'}"]
        return ["no memories match"]
    lines = [f"terms: {' '.join(result.terms)}"] if explaining else []
    for hit in result.hits:
        extra = f" (supersedes {', '.join(hit.superseding)})" if hit.superseding else ""
        if hit.id in few:
            extra += f" [holds {len(hit.matched)} of the words]"
        elif hit.id in below:
            extra += " [below the cliff]"
        lines.append(f"{hit.id} · {hit.record['kind']} · {hit.record['created'][:10]} · {hit.record['title']}{extra}")
        if explaining:
            lines.append(f"  score {hit.score:.3f}: {_matched_line(explained[hit.id])}")
    if result.related:
        lines.append("related:")
        for rel in result.related:
            lines.append(f"  {rel.id} · {rel.record['kind']} · {rel.record['title']}  ({rel.edge} {rel.from_id})")
    lines += _hidden_lines(hidden["BELOW_CLIFF"], hidden["OVER_CAP"], len(result.hits), ratio,
                           hidden["FEW_TERMS"], need)
    return lines


def _hidden_lines(below_cliff: int, over_limit: int, shown: int, ratio: float, few_terms: int,
                  need: int) -> list[str]:
    """Say what a search matched but left out, and how to see it (a silent cut reads as "nothing else")."""
    lines = []
    if few_terms:
        them = "it" if few_terms == 1 else "them"
        lines.append(f"{_matches(few_terms)} holding fewer than {need} of the words: `--all` shows {them}")
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
