"""Ranked search over one project's index (hot path): BM25, supersession, scoping, cliff, cap, related appendix.

Plain classes, not dataclasses: the hook pays for every import (see gate/gates/base.py).

Every candidate the index returned keeps a disposition code, so `gate trace` can say why a memory was or
was not delivered: ADMITTED, BELOW_FLOOR, BELOW_CLIFF, OVER_CAP, SUPERSEDED_SUCCESSOR_AVAILABLE,
SUPERSEDED_NO_SUCCESSOR, OTHER_PROJECT, ALREADY_DELIVERED, DUPLICATE, BELOW_Z (the recall gate's standardised floor),
FEW_TERMS (a plain search's hit holding fewer of the query's terms than [cut] min_matched_terms asks).
"""

from __future__ import annotations

from gate.memory.index.read import MemoryIndex
from gate.memory.vocab import LINK_TYPES, joined_cues
from gate.rules import load_rules
from gate.textproc import terms as text_terms

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from collections.abc import Collection
    from typing import Any

    from gate.paths import ProjectPaths

MAX_QUERY_TERMS = 32
MAX_CHAIN = 16


class Hit:
    def __init__(self, record: dict[str, Any], score: float, superseding: list[str] | None = None) -> None:
        self.record = record
        self.score = score
        self.superseding = superseding or []  # ids this hit stands in for
        self.matched: list[str] = []  # query terms the memory contains
        self.z = 0.0  # the score standardised over the store's scores for this query (see spread())

    @property
    def id(self) -> str:
        return str(self.record["id"])

    def to_json(self) -> dict[str, Any]:
        data = {k: self.record[k] for k in ("id", "kind", "title", "scope", "source", "status", "created")}
        data["score"] = round(self.score, 4)
        data["z"] = round(self.z, 3)
        data["tags"] = self.record.get("tags", [])
        data["paths"] = self.record.get("paths", [])
        data["matched"] = self.matched
        if self.superseding:
            data["superseding"] = self.superseding
        return data


class Related:
    def __init__(self, record: dict[str, Any], edge: str, from_id: str, direction: str) -> None:
        self.record = record
        self.edge = edge
        self.from_id = from_id
        self.direction = direction  # "out": the hit links to it; "in": it links to the hit

    @property
    def id(self) -> str:
        return str(self.record["id"])

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.record["kind"],
            "title": self.record["title"],
            "edge": self.edge,
            "from": self.from_id,
            "direction": self.direction,
        }


class Candidate:
    """One memory the index returned, and what became of it (for `gate trace`)."""

    def __init__(
        self, id: str, title: str, score: float, disposition: str, detail: str = "", z: float | None = None
    ) -> None:
        self.id = id
        self.title = title
        self.score = score
        self.disposition = disposition
        self.detail = detail
        self.z = z

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "score": round(self.score, 4), "disposition": self.disposition}
        if self.z is not None:
            data["z"] = round(self.z, 3)
        if self.detail:
            data["detail"] = self.detail
        return data


class SearchResult:
    def __init__(
        self,
        terms: list[str],
        hits: list[Hit],
        related: list[Related],
        candidates: list[Candidate],
        top_score: float = 0.0,
        cliff: float = 0.0,
        spread: tuple[float, float] | None = None,
    ) -> None:
        self.terms = terms
        self.hits = hits
        self.related = related
        self.candidates = candidates
        self.top_score = top_score
        self.cliff = cliff
        self.spread = spread  # (mean, standard deviation) of the store's scores, when standardised

    def to_json(self) -> dict[str, Any]:
        return {
            "terms": self.terms,
            "hits": [hit.to_json() for hit in self.hits],
            "related": [rel.to_json() for rel in self.related],
        }

    def trace_json(self) -> dict[str, Any]:
        data = {
            "terms": self.terms,
            "top_score": round(self.top_score, 4),
            "cliff": round(self.cliff, 4),
            "candidates": [c.to_json() for c in self.candidates],
        }
        if self.spread is not None:
            data["mean"], data["std"] = round(self.spread[0], 4), round(self.spread[1], 4)
        return data


def spread(top: list[float], matching: int, docs: int) -> tuple[float, float]:
    """Mean and standard deviation of one query's BM25 scores over a store of `docs` memories, those that match
    nothing counting 0, from the `top` scores the search returned and the number of `matching` memories.

    The matching memories beyond the top ones are not scored one by one (at 100,000 memories a common word
    matches tens of thousands): each is taken as uniform between 0 and the lowest top score, so they add
    half that score to the sum and a third of its square to the sum of squares. tests/test_recall_zscore.py
    measures that this fires on the same memories as the exact statistics."""
    docs = max(docs, matching, len(top), 1)
    total = sum(top)
    squares = sum(score * score for score in top)
    rest = max(0, matching - len(top))
    if rest and top:
        low = min(top)
        total += rest * low / 2
        squares += rest * low * low / 3
    mean = total / docs
    variance = max(0.0, squares / docs - mean * mean)
    return mean, variance ** 0.5


def standardise(score: float, mean_std: tuple[float, float]) -> float:
    mean, std = mean_std
    return (score - mean) / std if std > 0 else 0.0


def query_terms(text: str) -> list[str]:
    """Distinct content terms of a text in order of first appearance (never a raw string to a parser)."""
    seen: dict[str, None] = {}
    for term in text_terms(text):
        seen.setdefault(term, None)
    return list(seen)[:MAX_QUERY_TERMS]


def live_head(index: MemoryIndex, record: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """Follow `supersedes` links backwards from a superseded memory to its live successor, if any."""
    chain: list[str] = []
    current = record
    for _ in range(MAX_CHAIN):
        if current["status"] == "active":
            return current, chain
        if current["status"] in ("forgotten", "done"):
            return None, chain
        chain.append(current["id"])
        successors = [
            r
            for r in index.linking_to(current["id"])
            if r["status"] != "forgotten"
            and any(link["type"] == "supersedes" and link["target"] == current["id"] for link in r["links"])
        ]
        if not successors:
            return None, chain
        successors.sort(key=lambda r: (r["status"] != "active", r["updated"]), reverse=False)
        current = successors[0]
    return None, chain


def _belongs(record: dict[str, Any], project: ProjectPaths) -> bool:
    return record.get("scope") != "private" or project.owns(record.get("project") or "")


def search(
    index: MemoryIndex,
    text: str,
    *,
    limit: int | None = None,
    exclude: Collection[str] = (),
    rules: dict[str, Any] | None = None,
    related: bool = True,
    terms: list[str] | None = None,
    weights: dict[str, float] | None = None,
    min_z: float | None = None,
    exact: bool = False,
    attainable: float = 0.8,
    small_store: int = 0,
    reference_store: int = 0,
    zero_scores: int = 0,
) -> SearchResult:
    """`terms`, when given, is the query (the recall gate's: the current activity); else the text's terms are.
    `weights`: term -> weight in the query. `min_z`, when given, replaces the relevance cliff: a hit is admitted
    when its score, standardised over the store's scores for this query (spread()), reaches it — a floor that
    means the same in a store of 20 memories and of 100,000. In a store of N memories no score stands higher than
    sqrt(N - 1) (one memory matching, all others 0): the floor is at most `attainable` times that, so a store of
    five memories can deliver at all; below `small_store` memories a z-score says too little (two memories
    matching alike stand at +1 and -1), and the relevance cliff decides instead. `exact`: standardise over every
    matching memory's score (slower; to measure the estimate against). `reference_store`: the floor holds as
    given in a store of that many memories and scales with sqrt(ln N / ln reference) — the highest of N unrelated
    scores stands that much higher, so the same floor would fire more often the bigger the store.
    `zero_scores`: at most this many of the memories that match nothing count (as 0) in the statistics (0: all
    of them). Counted all, they make the z-score grow with the store: a memory that alone matches one word of the
    query stands at sqrt(N - 1), so in a big store every coincidence passes the floor; capped, memories unrelated
    to the query change nothing.

    A plain search (no `min_z`: `gate search`, what the agent runs) admits only hits that hold at least [cut]
    min_matched_terms of the query's terms (all of them, when the query has fewer), and the cliff is measured
    from the best of those."""
    plain = min_z is None
    rules = rules or load_rules("search", index.paths.root)
    cut = rules.get("cut", {})
    max_hits = int(limit if limit is not None else cut.get("max_hits", 8))
    terms = terms[:MAX_QUERY_TERMS] if terms is not None else query_terms(text)
    boosts = field_boosts(rules)
    signatures: dict[str, str] = {}
    stats: dict[str, Any] | None = {} if min_z is not None else None
    pool = int(cut.get("candidates", 40))
    # With a z floor the pool's scores feed the statistics, but only the first few can be delivered: their
    # records are read (at most max_hits, after what this window delivered), the rest only scored.
    load = min(pool, 2 * max_hits + len(exclude) + 4) if min_z is not None else None
    raw = index.search(terms, boosts, pool, signatures, weights, stats, load)
    if index.refresh_changed(signatures):  # a candidate's file was edited in place since it was indexed
        raw = index.search(terms, boosts, pool, None, weights, stats, load)
    if stats is not None and exact and stats["matching"] > len(raw):
        raw = index.search(terms, boosts, stats["matching"], None, weights, stats, load)  # every match, scored
    unread = [score for score, record in raw if record is None]
    raw = [(score, record) for score, record in raw if record is not None]
    project = index.paths
    candidates: list[Candidate] = []
    ranked: dict[str, Hit] = {}
    for score, record in raw:
        if not _belongs(record, project):
            candidates.append(Candidate(record["id"], record["title"], score, "OTHER_PROJECT", record["project"]))
            continue
        head = record
        if record["status"] != "active":
            head, chain = live_head(index, record)
            if head is None:
                candidates.append(Candidate(record["id"], record["title"], score, "SUPERSEDED_NO_SUCCESSOR"))
                continue
            candidates.append(
                Candidate(record["id"], record["title"], score, "SUPERSEDED_SUCCESSOR_AVAILABLE", head["id"])
            )
            if not _belongs(head, project):
                continue
            hit = ranked.get(head["id"])
            if hit is None:
                ranked[head["id"]] = Hit(head, score, list(chain))
            else:
                hit.score = max(hit.score, score)
                hit.superseding.extend(c for c in chain if c not in hit.superseding)
            continue
        hit = ranked.get(record["id"])
        if hit is None:
            ranked[record["id"]] = Hit(record, score)
        else:
            hit.score = max(hit.score, score)
    ordered = sorted(ranked.values(), key=lambda h: (-h.score, h.id))
    few: list[Hit] = []
    need = min(int(cut.get("min_matched_terms", 1)), len(terms))
    if plain and need > 1:
        for hit in ordered:
            hit.matched = _matched(hit.record, terms)
        # A hit found through a memory it supersedes may not hold the words itself: it stays.
        few = [hit for hit in ordered if len(hit.matched) < need and not hit.superseding]
        ordered = [hit for hit in ordered if len(hit.matched) >= need or hit.superseding]
    top = ordered[0].score if ordered else 0.0
    cliff = max(float(cut.get("min_score", 0.0)), top * float(cut.get("cliff_ratio", 0.0)))
    mean_std: tuple[float, float] | None = None
    if stats is not None and min_z is not None:
        # Over this project's live store: a candidate of another project, or one superseded (its successor
        # stands for it), is not one of its memories; each counted once.
        gone = len(raw) - len(ranked)
        docs = max(1, stats["docs"] - gone)
        matching = max(0, stats["matching"] - gone)
        counted = min(docs, matching + zero_scores) if zero_scores > 0 else docs
        mean_std = spread([h.score for h in ordered] + unread, matching, counted)
        if reference_store > 1 and counted > 1:
            import math

            min_z *= (math.log(counted) / math.log(reference_store)) ** 0.5
        min_z = min(min_z, attainable * (counted - 1) ** 0.5)
        if docs < small_store:
            min_z = None  # the cliff decides
        else:
            cliff = float(cut.get("min_score", 0.0))
    if mean_std is not None:
        for hit in ordered:
            hit.z = standardise(hit.score, mean_std)
    eligible: list[Hit] = []
    below_cliff: list[Hit] = []
    passed: dict[str, str] = {}
    for hit in ordered:
        if hit.score < float(cut.get("min_score", 0.0)):
            passed[hit.id] = "BELOW_FLOOR"
        elif min_z is not None and hit.z < min_z:
            passed[hit.id] = "BELOW_Z"
        elif hit.id in exclude:
            passed[hit.id] = "ALREADY_DELIVERED"
        elif hit.score < cliff:
            passed[hit.id] = "BELOW_CLIFF"
            below_cliff.append(hit)
        else:
            eligible.append(hit)
    # The cap reads the eligible hits in an order where restatements of one fact do not come first; a hit
    # below the cliff that says something else may take a restatement's place.
    hits = diversify(eligible, rules.get("diversity", {}), below_cliff)[:max_hits]
    for hit in hits:
        passed[hit.id] = "ADMITTED"
    for hit in ordered:
        candidates.append(Candidate(hit.id, hit.record["title"], hit.score, passed.get(hit.id, "OVER_CAP"),
                                    z=hit.z if mean_std is not None else None))
    for hit in few:
        candidates.append(Candidate(hit.id, hit.record["title"], hit.score, "FEW_TERMS",
                                    f"{len(hit.matched)} of {len(terms)} terms"))
    if not (plain and need > 1):
        for hit in hits:  # the admitted few only: analysing every candidate's body cost a hook milliseconds
            hit.matched = _matched(hit.record, terms)
    appendix = related_appendix(index, hits, rules, exclude) if related and hits else []
    return SearchResult(terms, hits, appendix, candidates, top, cliff, mean_std)


def _matched(record: dict[str, Any], terms: list[str]) -> list[str]:
    """The query terms a memory holds, in its title, body, cue words or tags."""
    cues = joined_cues(record.get("cues"), record.get("derived_cues"))
    present = set(text_terms(f"{record['title']} {record['body']} {cues} {' '.join(record['tags'])}"))
    return [t for t in terms if t in present]


def _fact_terms(record: dict[str, Any]) -> set[str]:
    """The terms of what a memory says: its title and tags (the fact; the body is its why and where)."""
    return set(text_terms(f"{record['title']} {' '.join(record.get('tags', []))}"))


def _dice(a: set[str], b: set[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


def diversify(ordered: list[Hit], conf: dict[str, Any], reserve: list[Hit] | None = None) -> list[Hit]:
    """Ranked hits re-ordered so that restatements of one fact do not crowd the first places: a hit whose fact
    is at least `similarity` alike (Dice over title and tag terms) to `restatements` hits placed before it
    waits behind the hits that say something else, and behind as many of `reserve` (hits that ranked lower:
    below the relevance cliff) as there are restatements waiting — the reserve hits unlike what was placed
    (rules/search.toml [diversity]). Scores are untouched: only the order the cap reads changes."""
    most = int(conf.get("restatements", 0))
    if most <= 0 or len(ordered) <= most:
        return ordered
    threshold = float(conf.get("similarity", 0.6))
    window = int(conf.get("window", 12))  # only the first few can be read; the rest keep their order
    head, tail = ordered[:window], ordered[window:]
    placed: list[tuple[Hit, set[str]]] = []
    waiting: list[Hit] = []
    for hit in head:
        fact = _fact_terms(hit.record)
        if sum(1 for _, other in placed if _dice(fact, other) >= threshold) >= most:
            waiting.append(hit)
        else:
            placed.append((hit, fact))
    instead: list[Hit] = []
    for hit in (reserve or [])[:window]:
        if len(instead) >= len(waiting):
            break
        fact = _fact_terms(hit.record)
        if not any(_dice(fact, other) >= threshold for _, other in placed):
            instead.append(hit)
    return [hit for hit, _ in placed] + instead + waiting + tail


def field_boosts(rules: dict[str, Any]) -> dict[str, float]:
    return {str(k): float(v) for k, v in rules.get("boost", {"title": 2.0, "body": 1.0}).items()}


def explain(index: MemoryIndex, hit: Hit, terms: list[str], rules: dict[str, Any]) -> dict[str, Any]:
    """Which field and which query terms made a hit, with each clause's BM25 score (boost included)."""
    fields: dict[str, dict[str, float]] = {}
    for field_name, term, score in index.explain(terms, field_boosts(rules), f"{hit.record['scope']}/{hit.id}"):
        fields.setdefault(field_name, {})[term] = round(score, 4)
    return {"fields": fields, "via": hit.superseding}


def related_appendix(
    index: MemoryIndex, hits: list[Hit], rules: dict[str, Any], exclude: Collection[str] = ()
) -> list[Related]:
    """One hop along typed links from the hits, both directions, ordered by edge type, live memories only."""
    conf = rules.get("related", {})
    order = {edge: rank for rank, edge in enumerate(conf.get("edge_order", LINK_TYPES))}
    hit_ids = {hit.id for hit in hits}
    project = index.paths
    found: dict[str, tuple[tuple[int, int], Related]] = {}
    for position, hit in enumerate(hits):
        edges: list[tuple[str, dict[str, Any], str]] = []
        for link in hit.record.get("links", []):
            target = index.get(link["target"])
            if target is not None:
                edges.append((link["type"], target, "out"))
        for source in index.linking_to(hit.id):
            for link in source["links"]:
                if link["target"] == hit.id:
                    edges.append((link["type"], source, "in"))
        for edge, other, direction in edges:
            other_id = other["id"]
            if other_id in hit_ids or other_id in exclude or other["status"] != "active":
                continue
            if not _belongs(other, project):
                continue
            rank = (order.get(edge, len(order)), position)
            if other_id not in found or rank < found[other_id][0]:
                found[other_id] = (rank, Related(other, edge, hit.id, direction))
    ordered = sorted(found.values(), key=lambda item: (item[0], item[1].id))
    return [related for _, related in ordered[: int(conf.get("max", 5))]]
