"""Deterministic synthetic memory stores in gate's export format, plus the same memories for the peers.

A store of N memories is a list of dicts with the fields `gate export` writes and `gate import` reads (one
JSON object per line). Every size holds the same hand-written anchor memories (the benchmark prompts are about
them, so a shift prompt delivers hits at 1k as at 100k) among generated ones whose words are drawn with a Zipf
skew from domain clusters, English, tech names, identifiers, paths and error messages, so a search meets the
competition and the vocabulary growth of a real store.

    python -m bench.corpus --size 10000 --out memories.jsonl [--markdown DIR] [--fts5 DB]
"""

from __future__ import annotations

import argparse
import bisect
import json
import math
import random
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

from bench import vocab

KIND_WEIGHTS: dict[str, int] = {
    "directive": 6,
    "gotcha": 18,
    "finding": 18,
    "decision": 16,
    "fix": 18,
    "task": 8,
    "preference": 6,
    "reference": 10,
}
LINK_TYPES: dict[str, int] = {"relates": 50, "fixes": 20, "caused_by": 15, "contradicts": 5, "supersedes": 10}
TITLE_MAX = 160
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)

# Anchors: what the benchmark prompts ask about (see bench/prompts.py). Same in every store size.
ANCHORS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    (
        "decision",
        "Reserve account trigger fires only after the waterfall pays the senior tranche in full",
        "The payment waterfall in src/payments/waterfall.py runs tranches in order. ReserveAccount.trigger() "
        "checks senior_paid before moving cash; reruns of the waterfall must not fire the trigger twice, so "
        "the run id is recorded in the ledger.",
        ("billing",),
    ),
    (
        "gotcha",
        "Waterfall rerun double-fires the reserve account trigger unless last_run_id is checked",
        "Rerunning settle_waterfall() for the same period calls ReserveAccount.trigger() again. Guard with "
        "ledger.last_run_id == run_id; the test tests/payments/test_waterfall.py::test_rerun covers it.",
        ("billing", "flaky"),
    ),
    (
        "fix",
        "Fixed reserve account trigger rounding: amounts are integer cents, never floats",
        "Reserve account balances drifted by a cent after the waterfall split fees. Cause: float math in "
        "split_fee(). Fix: Decimal -> integer cents at the boundary (src/payments/money.py).",
        ("billing",),
    ),
    (
        "finding",
        "Postgres connection pool is exhausted by pytest-xdist workers in CI integration tests",
        "Each xdist worker opens its own SQLAlchemy engine with pool_size=10; with -n 8 the CI postgres "
        "(max_connections=50) refuses connections and the integration tests time out after 30 s.",
        ("ci", "db", "testing"),
    ),
    (
        "fix",
        "Integration tests timing out in CI: set PGPOOL_MAX=4 per xdist worker",
        "OperationalError: connection to postgres at 127.0.0.1:5432 refused, then TimeoutError in "
        "tests/integration/conftest.py. Capping the pool per worker (PGPOOL_MAX=4) fixed the flaky timeouts.",
        ("ci", "db", "flaky"),
    ),
    (
        "directive",
        "Run integration tests with -n 4 at most; the CI postgres allows 50 connections",
        "",
        ("ci", "testing"),
    ),
    (
        "preference",
        "Dark mode toggle follows the system theme by default; the user wants no flash on load",
        "ThemeProvider reads prefers-color-scheme before hydration (web/ui/theme.tsx).",
        ("frontend",),
    ),
    (
        "reference",
        "Settings page theme tokens live in web/ui/tokens.css as CSS variables",
        "Dark and light palettes are --color-* variables; the toggle only flips data-theme on <html>.",
        ("frontend",),
    ),
)


class _Zipf:
    """Draws from a sequence with probability ~ 1/rank**s: a few words dominate, most are rare."""

    def __init__(self, items: Sequence[str], s: float = 1.07) -> None:
        self.items = list(items)
        total = 0.0
        self.cum: list[float] = []
        for rank in range(1, len(self.items) + 1):
            total += 1.0 / rank**s
            self.cum.append(total)
        self.total = total

    def draw(self, rng: random.Random) -> str:
        return self.items[bisect.bisect(self.cum, rng.random() * self.total) % len(self.items)]


def _camel(words: Sequence[str]) -> str:
    return words[0] + "".join(w.capitalize() for w in words[1:])


class Generator:
    """Builds memories for one (size, seed). Pools of identifiers and names grow with the store."""

    def __init__(self, size: int, seed: int = 7) -> None:
        self.size = size
        self.rng = random.Random(seed)
        rng = self.rng
        english = list(vocab.ENGLISH)
        rng.shuffle(english)
        # Exponents below 1: these lists are content words already (no "the"), whose real skew is mild.
        self.english = _Zipf(english, s=0.75)
        self.tech = _Zipf(rng.sample(vocab.TECH, len(vocab.TECH)), s=0.9)
        domains = list(vocab.DOMAINS)
        rng.shuffle(domains)
        self.domain_names = _Zipf(domains, s=0.8)
        self.domain_words = {name: _Zipf(rng.sample(words, len(words)), s=0.9) for name, words in vocab.DOMAINS.items()}
        # The long tail: project codenames, identifiers and paths, more of them in a larger store.
        self.codenames = _Zipf(self._codenames(300 + size // 25), s=0.9)
        # Identifiers and paths repeat less than English words do: a flatter skew.
        self.identifiers = _Zipf(self._identifiers(1500 + size // 4), s=0.85)
        self.paths = _Zipf(self._paths(800 + size // 10), s=0.85)
        self.kinds = list(KIND_WEIGHTS)
        self.kind_cum = list(_accumulate(KIND_WEIGHTS.values()))
        self.link_types = list(LINK_TYPES)
        self.link_cum = list(_accumulate(LINK_TYPES.values()))
        self.anchor_ids: set[str] = set()
        self._slots: dict[str, Callable[[str], str]] = {
            "w": self.word,
            "W": lambda domain: self.phrase(domain, 2, 4),
            "i": lambda _: f"`{self.identifiers.draw(self.rng)}`",
            "p": lambda _: self.paths.draw(self.rng),
            "e": lambda _: self.error(),
            "t": lambda _: self.tech.draw(self.rng),
            "c": lambda _: self.codenames.draw(self.rng),
            "n": lambda _: str(self.rng.choice((2, 3, 5, 10, 30, 50, 120, 250, 800, 1500))),
        }

    # --- pools ---------------------------------------------------------------------------------------------
    def _shuffled(self, items: set[str]) -> list[str]:
        """Sorted first so the order (hence the Zipf ranks) depends on the seed only, not on set hashing."""
        out = sorted(items)
        self.rng.shuffle(out)
        return out

    def _codenames(self, count: int) -> list[str]:
        names: set[str] = set()
        while len(names) < count:
            names.add("".join(self.rng.choice(vocab.SYLLABLES) for _ in range(self.rng.randint(2, 3))))
        return self._shuffled(names)

    def _identifiers(self, count: int) -> list[str]:
        idents: set[str] = set()
        all_domain = [w for words in vocab.DOMAINS.values() for w in words]
        while len(idents) < count:
            words = [self.rng.choice(all_domain if self.rng.random() < 0.6 else vocab.ENGLISH)]
            words += [self.rng.choice(vocab.ENGLISH) for _ in range(self.rng.randint(1, 2))]
            style = self.rng.random()
            if style < 0.45:
                idents.add("_".join(words))  # snake_case function
            elif style < 0.75:
                idents.add(_camel(words))  # camelCase method
            elif style < 0.95:
                idents.add("".join(w.capitalize() for w in words))  # PascalCase class
            else:
                idents.add("_".join(words).upper())  # CONSTANT
        return self._shuffled(idents)

    def _paths(self, count: int) -> list[str]:
        paths: set[str] = set()
        names = list(vocab.ENGLISH) + [w for words in vocab.DOMAINS.values() for w in words]
        while len(paths) < count:
            parts = [self.rng.choice(vocab.FILE_DIRS)]
            parts += [self.rng.choice(names) for _ in range(self.rng.randint(0, 2))]
            stem = "_".join(self.rng.choice(names) for _ in range(self.rng.randint(1, 2)))
            paths.add("/".join(parts) + "/" + stem + self.rng.choice(vocab.FILE_EXTS))
        return self._shuffled(paths)

    # --- words ---------------------------------------------------------------------------------------------
    def word(self, domain: str) -> str:
        """A content word: mostly the memory's domain, else English, a tech name or a codename."""
        roll = self.rng.random()
        if roll < 0.38:
            return self.domain_words[domain].draw(self.rng)
        if roll < 0.85:
            return self.english.draw(self.rng)
        if roll < 0.95:
            return self.tech.draw(self.rng)
        return self.codenames.draw(self.rng)

    def error(self) -> str:
        template = self.rng.choice(vocab.ERROR_TEMPLATES)
        return template.format(
            e=self.rng.choice(vocab.EXCEPTIONS),
            i=self.identifiers.draw(self.rng),
            j=self.identifiers.draw(self.rng),
            m=self.paths.draw(self.rng).rsplit(".", 1)[0].replace("/", "."),
            p=self.paths.draw(self.rng),
            n=self.rng.choice((0, 1, 3, 8, 30, 404, 500, 5432, 6379, 8080, 30000)),
            t=self.tech.draw(self.rng),
        )

    def phrase(self, domain: str, low: int, high: int) -> str:
        return " ".join(self.word(domain) for _ in range(self.rng.randint(low, high)))

    def fill(self, template: str, domain: str) -> str:
        """Fill |w| words, |W| phrases, |i| idents, |p| paths, |e| errors, |t| tech, |c| codenames, |n|."""
        parts = _split_template(template)
        out: list[str] = []
        for index, part in enumerate(parts):
            out.append(part if index % 2 == 0 else self._slots[part](domain))
        return "".join(out)

    # --- memories ------------------------------------------------------------------------------------------
    def title(self, kind: str, domain: str) -> str:
        text = self.fill(self.rng.choice(TITLE_TEMPLATES[kind]), domain)
        text = text[0].upper() + text[1:]
        if len(text) > TITLE_MAX:
            text = text[: TITLE_MAX - 1].rsplit(" ", 1)[0]
        return text

    def body(self, domain: str) -> str:
        """Body length is log-normal (median ~300 chars, a long tail to ~4 KB); some memories have none."""
        if self.rng.random() < 0.08:
            return ""
        sentences = max(1, min(30, round(math.exp(self.rng.gauss(1.2, 0.75)))))
        parts = [self.fill(self.rng.choice(BODY_SENTENCES), domain) for _ in range(sentences)]
        text = " ".join(p[0].upper() + p[1:] for p in parts)
        roll = self.rng.random()
        if roll < 0.12:
            lines = [f"    {self.identifiers.draw(self.rng)}({self.identifiers.draw(self.rng)})"]
            lines += [f"    {self.fill(self.rng.choice(CODE_LINES), domain)}" for _ in range(self.rng.randint(2, 8))]
            text += "\n\n" + "\n".join(lines)
        elif roll < 0.2:
            frames = [
                f'  File "{self.paths.draw(self.rng)}", line {self.rng.randint(10, 900)}, in '
                f"{self.identifiers.draw(self.rng)}"
                for _ in range(self.rng.randint(2, 5))
            ]
            text += "\n\nTraceback (most recent call last):\n" + "\n".join(frames) + "\n" + self.error()
        return text

    def tags(self, domain: str) -> list[str]:
        count = self.rng.choice((0, 1, 1, 2, 2, 3, 4))
        tags = {self.rng.choice(vocab.TAGS) for _ in range(count)}
        if count and self.rng.random() < 0.5:
            tags.add(domain)
        return sorted(tags)

    def memories(self) -> list[dict[str, Any]]:
        ids = self._ids()
        anchor_at = {round((k + 0.5) * self.size / len(ANCHORS)): k for k in range(len(ANCHORS))}
        span = timedelta(days=720).total_seconds()
        out: list[dict[str, Any]] = []
        for index, mem_id in enumerate(ids):
            created = EPOCH + timedelta(seconds=span * index / max(1, self.size) + self.rng.randint(0, 3600))
            updated = created + timedelta(hours=self.rng.choice((0, 0, 0, 1, 30, 400)))
            if index in anchor_at:
                kind, title, body, tags = ANCHORS[anchor_at[index]]
                tag_list = list(tags)
                self.anchor_ids.add(mem_id)
            else:
                kind = self.kinds[bisect.bisect(self.kind_cum, self.rng.random() * self.kind_cum[-1])]
                domain = self.domain_names.draw(self.rng)
                title, body, tag_list = self.title(kind, domain), self.body(domain), self.tags(domain)
            out.append(
                {
                    "id": mem_id,
                    "kind": kind,
                    "title": title,
                    "body": body,
                    "tags": tag_list,
                    "scope": "private",
                    "links": self._links(index, out),
                    "source": "agent",
                    "status": "active",
                    "created": created.isoformat(timespec="seconds"),
                    "updated": updated.isoformat(timespec="seconds"),
                }
            )
        return out

    def _ids(self) -> list[str]:
        """Short ids like the ones gate mints (`m-7f3a9c`); unique, widened when the store is large."""
        width = 6 if self.size < 200_000 else 8
        seen: set[str] = set()
        ids: list[str] = []
        while len(ids) < self.size:
            mem_id = f"m-{self.rng.getrandbits(4 * width):0{width}x}"
            if mem_id not in seen:
                seen.add(mem_id)
                ids.append(mem_id)
        return ids

    def _links(self, index: int, earlier: list[dict[str, Any]]) -> list[dict[str, str]]:
        """About one memory in eight links to recent earlier ones (never forward, so an import validates)."""
        if index < 10 or self.rng.random() >= 0.12:
            return []
        links: list[dict[str, str]] = []
        for _ in range(self.rng.choice((1, 1, 1, 2))):
            target = earlier[index - 1 - min(index - 1, int(self.rng.expovariate(1 / 60)))]
            kind = self.link_types[bisect.bisect(self.link_cum, self.rng.random() * self.link_cum[-1])]
            if any(link["target"] == target["id"] for link in links):
                continue
            if kind == "supersedes":
                if target["status"] != "active" or target["id"] in self.anchor_ids:
                    continue
                target["status"] = "superseded"  # what `gate remember --supersedes` leaves behind
            links.append({"type": kind, "target": target["id"]})
        return links


@cache
def _split_template(template: str) -> list[str]:
    return template.split("|")


def _accumulate(weights: Iterable[int]) -> Iterable[int]:
    total = 0
    for weight in weights:
        total += weight
        yield total


# Templates: |x| marks a slot (see Generator.fill). Titles carry the fact itself, as gate asks of them.
TITLE_TEMPLATES: dict[str, tuple[str, ...]] = {
    "directive": (
        "always run |i| before changing |p|",
        "never call |i| directly from |p|; go through |i|",
        "use |t| for |W|, not |t|",
        "keep |w| |w| out of |p|: it must stay |w|",
        "run `make |w|` after touching |p|",
    ),
    "gotcha": (
        "|i| returns None when the |W| is empty; check before |i|",
        "|t| |W| breaks when |i| runs before |i|",
        "|e| when |p| is imported twice",
        "|i| in |p| is not thread-safe: |W|",
        "|t| caches |W| for |n| s, so |i| sees stale values",
        "changing |p| requires restarting the |c| |w| worker",
    ),
    "finding": (
        "|W| latency is dominated by |i| (|n| ms of |n| ms)",
        "|c| |W| spends most time in |p|",
        "|t| |w| limit is |n| per |w|; |W| hits it under load",
        "|i| is called |n| times per request from |p|",
        "the |W| in |p| is dead code since |c| moved to |t|",
    ),
    "decision": (
        "use |t| for |W| instead of |t|: |W|",
        "keep |i| synchronous; |W| moves to |p| instead",
        "store |W| as |w| in |p|, not in |t|",
        "drop |c| |w| support: |W| costs too much",
        "split |p| into |w| and |w| modules for |W|",
    ),
    "fix": (
        "fixed |e| in |p| by |w| |i|",
        "|e|: caused by |W|; fixed in |p|",
        "fix for |W|: pin |t| and reset |i|",
        "|i| |w| loop fixed by |W| in |p|",
        "|c| |w| crash fixed: |i| now handles |W|",
    ),
    "task": (
        "TODO: migrate |c| |W| to |t| (|p|)",
        "TODO: remove |i| once |W| ships",
        "follow up: |W| in |p| still |w|",
    ),
    "preference": (
        "user prefers |W| over |W|",
        "user wants |w| |w| commits and |t| formatting",
        "prefer |i| over |i| in |p|",
    ),
    "reference": (
        "|c| |W| spec lives in |p|",
        "|t| |w| docs: see |p| and |i|",
        "runbook for |W|: |p|",
    ),
}

BODY_SENTENCES: tuple[str, ...] = (
    "the |W| in |p| calls |i| on every |w|.",
    "|i| |w| the |W| before |t| sees it.",
    "we saw |e| after the |W| change.",
    "the |t| |w| |W| only when |i| is |w|.",
    "|c| |W| depends on |i| and |i|.",
    "see |p| for the |W|.",
    "this broke |n| times in |t| |w| runs last week.",
    "the root cause was |W| in |i|.",
    "we decided to |w| the |W| because |W|.",
    "|i| takes |n| ms on a |w| |w|.",
    "when |W|, |i| raises |e|.",
    "the |W| is |w|; do not |w| it from |p|.",
    "|t| and |t| disagree on |W|.",
    "ask before changing |W|: |c| depends on it.",
)

CODE_LINES: tuple[str, ...] = (
    "if not |i|: return |i|",
    "for |w| in |i|(|w|): |i|(|w|)",
    "|i| = |i|(|w|=|n|, |w|=True)",
    "assert |i|(|w|) == |n|",
    "raise |i|(f'|W|')",
    "await |i|.|w|(|w|)",
)


def write_jsonl(memories: Iterable[dict[str, Any]], path: Path) -> int:
    """The `gate import` input: one JSON object per line. Returns bytes written."""
    with path.open("w", encoding="utf-8") as handle:
        for memory in memories:
            handle.write(json.dumps(memory, ensure_ascii=False) + "\n")
    return path.stat().st_size


def write_markdown_dir(memories: Iterable[dict[str, Any]], directory: Path) -> None:
    """One markdown file per memory with YAML front matter, as file-based memory tools keep them."""
    directory.mkdir(parents=True, exist_ok=True)
    for memory in memories:
        front = [
            "---",
            f"id: {memory['id']}",
            f"kind: {memory['kind']}",
            f"tags: [{', '.join(memory['tags'])}]",
            f"created: {memory['created']}",
            "---",
            "",
            f"# {memory['title']}",
            "",
            memory["body"],
            "",
        ]
        (directory / f"{memory['id']}.md").write_text("\n".join(front), encoding="utf-8")


def build_fts5(memories: Iterable[dict[str, Any]], db_path: Path) -> None:
    """The FTS5 twin: the same memories in an sqlite full-text table (porter stemming, like en_stem)."""
    db_path.unlink(missing_ok=True)
    conn = sqlite3.connect(db_path)
    try:
        conn.execute(
            "CREATE VIRTUAL TABLE mem USING fts5(id UNINDEXED, kind UNINDEXED, title, body, tags, "
            "tokenize='porter unicode61')"
        )
        conn.executemany(
            "INSERT INTO mem (id, kind, title, body, tags) VALUES (?, ?, ?, ?, ?)",
            (
                (m["id"], m["kind"], m["title"], m["body"], " ".join(m["tags"]))
                for m in memories
                if m["status"] == "active"
            ),
        )
        conn.execute("INSERT INTO mem (mem) VALUES ('optimize')")  # one segment, as a built index would be
        conn.commit()
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.corpus", description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, required=True, help="JSON lines for `gate import`")
    parser.add_argument("--markdown", type=Path, help="also write a directory of markdown memory files")
    parser.add_argument("--fts5", type=Path, help="also build an sqlite FTS5 database")
    args = parser.parse_args(argv)
    memories = Generator(args.size, args.seed).memories()
    size = write_jsonl(memories, args.out)
    print(f"{len(memories)} memories, {size / 1e6:.1f} MB -> {args.out}")
    if args.markdown:
        write_markdown_dir(memories, args.markdown)
    if args.fts5:
        build_fts5(memories, args.fts5)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
