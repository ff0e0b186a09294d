"""The tantivy index of one project's memories (private + team + user scope), derived from the TOML files: opening
it, looking whether it is level with the files, and reading it.

Freshness is cheap to check: the index keeps the mtime of each store directory (`dirs.json`), so the hot
path pays three stat calls. Only when a directory changed does it look at that directory's files, compare
stat signatures with `files.json`, and re-index what differs (gate/memory/index/write.py, imported only then). A
directory whose mtime is too young to vouch for its listing (gate/memory/store/scan.py: a second write in the same clock
tick would not move it) is checked again next time. In-place edits that leave the directory untouched are caught
when the file's memory is a search candidate (each document keeps its file's stat signature: a search compares its
candidates'), by the CLI's deep check (every file's signature) and by `gate reindex`.

Supersession is derived, never stored (gate/memory/index/write.py): the indexed record carries the derived
status. The schema and the manifests: gate/memory/index/schema.py; the background build of a large store:
gate/memory/index/build.py.
"""

from __future__ import annotations

import marshal
import os

from gate import fastjson as json  # json.loads and json.dumps without the json package (gate/fastjson.py)
from gate.memory.index.schema import (
    SCHEMA_VERSION,
    SCOPES_INDEXED,
    CatchUp,
    IndexBusy,
    corrupt_entries,
    dir_mtime,
    read_json,
    unreadable_differs,
    write_dirs,
)
from gate.memory.store.scan import SUFFIX, settled
from gate.paths import ProjectPaths, ensure_private_dir, replace_file

join = os.path.join

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from gate.memory.index.engine import tantivy

__all__ = ["CatchUp", "IndexBusy", "MemoryIndex"]


def _engine() -> tuple[Any, Any]:
    """tantivy and the schema, imported at the first read that needs them (gate/memory/index/schema.py schema)."""
    from gate.memory.index.engine import tantivy
    from gate.memory.index.schema import schema

    return tantivy, schema()

# A hook builds a missing index itself only for stores this small; a larger build (e.g. 100k memories after
# the cache was cleared) would outlast the hook's timeout on every prompt, so it goes to a detached process.
INLINE_BUILD_FILES = 2_000


class MemoryIndex:
    """One project's index directory: tantivy files plus the two freshness manifests."""

    def __init__(self, paths: ProjectPaths) -> None:
        self.paths = paths
        self.dir = paths.index_dir
        self.store_dirs = {scope: paths.store_for_scope(scope) for scope in SCOPES_INDEXED}
        self._index: tantivy.Index | None = None
        self._searcher: tantivy.Searcher | None = None
        self._searcher_generation: tuple[int, int, int] | None = None
        self.analyzer_registered = False  # the writer's (gate/memory/index/write.py)
        self._kept: dict[str, tuple[bytes, dict[Any, Any]]] = {}  # bucket -> (its commit, the reads kept for it)
        self._unsaved: set[str] = set()

    # --- manifests --------------------------------------------------------------------------------------------
    @property
    def dirs_file(self) -> str:
        return join(self.dir, "dirs.json")

    @property
    def files_file(self) -> str:
        return join(self.dir, "files.json")

    def stale_scopes(self, manifest: dict[str, Any] | None = None) -> list[str]:
        """Scopes whose directory changed since the index last saw it (three stats and one small read)."""
        manifest = read_json(self.dirs_file) if manifest is None else manifest
        if manifest.get("version") != SCHEMA_VERSION:
            return list(SCOPES_INDEXED)
        recorded = manifest.get("dirs", {})
        stale = []
        for scope, directory in self.store_dirs.items():
            entry = recorded.get(scope) or {}
            if entry.get("path") != directory or entry.get("mtime_ns") != dir_mtime(directory):
                stale.append(scope)
        return stale

    # --- tantivy ------------------------------------------------------------------------------------------------
    def open(self) -> tantivy.Index:
        tantivy, SCHEMA = _engine()
        if self._index is None:
            # 0700: the index stores every memory's full record, private ones included (tantivy's files are 0644)
            ensure_private_dir(self.dir)
            try:
                index = tantivy.Index(SCHEMA, path=self.dir, reuse=True)
            except ValueError:
                # A schema from another version or a damaged directory: it is derived, so start over.
                self._wipe()
                index = tantivy.Index(SCHEMA, path=self.dir, reuse=True)
            self._index = index
            self.analyzer_registered = False
        return self._index

    def _wipe(self) -> None:
        import shutil

        shutil.rmtree(self.dir, ignore_errors=True)
        ensure_private_dir(self.dir)
        self._index = None

    def exists(self) -> bool:
        if not os.path.exists(join(self.dir, "meta.json")):
            return False
        return read_json(self.dirs_file).get("version") == SCHEMA_VERSION

    def searcher(self) -> tantivy.Searcher:
        """A searcher on the last commit. Kept while meta.json (rewritten by every commit, whoever makes it)
        is unchanged: a search makes several reads, and reloading for each cost a hook ~0.1 ms apiece."""
        try:  # tantivy replaces meta.json whole: a new inode even where mtimes are whole seconds
            meta = os.stat(join(self.dir, "meta.json"))
            generation: tuple[int, int, int] | None = (meta.st_ino, meta.st_mtime_ns, meta.st_size)
        except OSError:
            generation = None
        if self._searcher is None or generation is None or generation != self._searcher_generation:
            index = self.open()
            index.reload()
            self._searcher = index.searcher()
            self._searcher_generation = generation
        return self._searcher

    def _writer(self, wait_seconds: float) -> tantivy.IndexWriter:
        from gate.memory.index.write import open_writer  # only when something is to be written

        return open_writer(self, wait_seconds)

    # --- catching up --------------------------------------------------------------------------------------------
    def catch_up(
        self, *, wait_seconds: float = 0.0, deep: bool = False, written: tuple[str, ...] = ()
    ) -> CatchUp:
        """Bring the index level with the files. `deep` compares every file, not just changed directories.

        Looking is lock-free; only when a file really differs does it take the writer (and look again under
        it, since another process may have caught up in between). `written` names scopes the caller has
        just written to: they certainly differ, so the lock-free look is skipped for them."""
        report = CatchUp()
        repaired: dict[str, list[str]] = {}
        if self.exists():
            manifest = read_json(self.dirs_file)
            stale = list(SCOPES_INDEXED) if deep else self.stale_scopes(manifest)
            stale += [scope for scope in written if scope not in stale]
            # Files last seen unreadable are looked at every time (they are few): a fix written over one in
            # place moves neither its directory's mtime nor, always, its own stat signature.
            repaired = self._unreadable_changed(manifest.get("corrupt"))
            if not stale and not repaired:
                return report
            if not written and not repaired:
                files_state = read_json(self.files_file).get("scopes", {})
                dirs_state = manifest.get("dirs", {})
                settled_dirs = dict(dirs_state)
                if not any(self._scope_differs(scope, files_state, settled_dirs) for scope in stale):
                    if settled_dirs != dirs_state:
                        self._write_dirs(settled_dirs, files_state)
                    return report
        else:
            stale = list(SCOPES_INDEXED)
        try:
            writer = self._writer(wait_seconds)
        except IndexBusy:
            report.skipped_busy = True
            return report
        fresh = not self.exists()
        files_state = {} if fresh else read_json(self.files_file).get("scopes", {})
        dirs_state = {} if fresh else read_json(self.dirs_file).get("dirs", {})
        only = {scope: names for scope, names in repaired.items() if scope not in stale}
        from gate.memory.index.write import apply  # (loaded with the writer)

        apply(self, writer, stale, files_state, dirs_state, report, start_over=fresh, only=only)
        return report

    def _unreadable_changed(self, corrupt: Any) -> dict[str, list[str]]:
        """The files dirs.json lists as unreadable that changed since: gone, another signature, or other bytes."""
        changed: dict[str, list[str]] = {}
        for entry in corrupt if isinstance(corrupt, list) else []:
            scope, name = entry[0], entry[1]
            directory = self.store_dirs.get(scope)
            if directory is None:
                continue
            recorded = entry[3:5] if len(entry) >= 5 else None  # [signature, digest]; earlier manifests had none
            if recorded is None or unreadable_differs(join(directory, name), recorded[0], recorded[1]):
                changed.setdefault(scope, []).append(name)
        return changed

    def _scope_differs(self, scope: str, files_state: dict[str, Any], dirs_state: dict[str, Any]) -> bool:
        """Whether any file of the scope differs from the manifest; records the directory's settled mtime."""
        from gate.memory.store.scan import scan_dir

        directory = self.store_dirs[scope]
        mtime = dir_mtime(directory)
        if dirs_state.get(scope, {}).get("path") not in (None, directory):
            return True
        known = files_state.get(scope, {})
        current = {entry.name: entry for entry in scan_dir(directory)}
        if current.keys() != known.keys() or any(
            known[name][:3] != entry.signature() for name, entry in current.items()
        ):
            return True
        dirs_state[scope] = {"path": directory, "mtime_ns": mtime if settled(mtime) else -1}
        return False

    def refresh_changed(self, signatures: dict[str, str]) -> bool:
        """Re-index the candidates whose file differs from what was indexed (an edit in place leaves the
        directory's mtime alone, so no catch-up noticed it). `signatures`: key -> indexed signature, as
        search() collects them. A few stat calls; True when something was re-indexed (search again)."""
        changed: dict[str, list[str]] = {}
        for key, signature in signatures.items():
            scope, _, memory_id = key.partition("/")
            directory = self.store_dirs.get(scope)
            if directory is None:
                continue
            name = memory_id + SUFFIX
            try:
                info = os.lstat(join(directory, name))
                current = f"{info.st_mtime_ns} {info.st_size} {info.st_ino}"
            except OSError:
                current = ""
            if current != signature:
                changed.setdefault(scope, []).append(name)
        if not changed:
            return False
        try:
            writer = self._writer(0.0)
        except IndexBusy:
            return False  # someone is writing; their catch-up or the next search will see it
        report = CatchUp()
        files_state = read_json(self.files_file).get("scopes", {})
        dirs_state = read_json(self.dirs_file).get("dirs", {})
        from gate.memory.index.write import apply  # (loaded with the writer)

        apply(self, writer, [], files_state, dirs_state, report, start_over=False, only=changed)
        return report.touched

    def catch_up_for_hook(self) -> CatchUp:
        """catch_up, bounded for a hook: a missing index over a large store is built in the background."""
        if not self.exists():
            from gate.memory.index import build as index_build

            if index_build.store_files(self, limit=INLINE_BUILD_FILES) > INLINE_BUILD_FILES:
                index_build.spawn(self)
                report = CatchUp()
                report.skipped_busy = True
                return report
        return self.catch_up(wait_seconds=0.0)

    def rebuild(self) -> CatchUp:
        """Build the index again from every file (`gate reindex`), in place: all documents replaced in one
        commit under the writer lock, so hooks and writers running meanwhile read the old index until then.
        (Wiping the directory first pulled it from under them: they failed on a missing meta.json, or found
        no index and skipped recall.) A damaged or outdated directory is still started over, by open()."""
        from gate.memory.index.write import apply

        report = CatchUp()
        apply(self, self._writer(30.0), list(SCOPES_INDEXED), {}, {}, report, start_over=True)
        return report

    def _write_dirs(self, dirs_state: dict[str, Any], files_state: dict[str, Any]) -> None:
        write_dirs(self.dirs_file, dirs_state, files_state)

    def corrupt_files(self) -> list[tuple[str, str]]:
        """Files the index could not read, with why (kept in the manifests so they are not re-read each call)."""
        corrupt = read_json(self.dirs_file).get("corrupt")
        if not isinstance(corrupt, list):  # written by an earlier version: the full manifest has them
            corrupt = corrupt_entries(read_json(self.files_file).get("scopes", {}))
        return [
            (join(self.store_dirs[entry[0]], entry[1]), entry[2])
            for entry in corrupt
            if entry[0] in self.store_dirs
        ]

    # --- reading ------------------------------------------------------------------------------------------------
    def query_terms(
        self, terms: Iterable[str], boosts: dict[str, float], weights: dict[str, float] | None = None
    ) -> tantivy.Query:
        """Any of the terms in any field, each clause boosted by its field's boost times the term's weight."""
        tantivy, SCHEMA = _engine()
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
        for term in terms:
            weight = weights.get(term, 1.0) if weights else 1.0
            for field_name, boost in boosts.items():
                query = tantivy.Query.term_query(SCHEMA, field_name, term, index_option="freq")
                if boost * weight != 1.0:
                    query = tantivy.Query.boost_query(query, boost * weight)
                clauses.append((tantivy.Occur.Should, query))
        clauses.append(
            (tantivy.Occur.MustNot, tantivy.Query.term_query(SCHEMA, "status", "forgotten", index_option="basic"))
        )
        return tantivy.Query.boolean_query(clauses)

    def search(
        self,
        terms: list[str],
        boosts: dict[str, float],
        limit: int,
        signatures: dict[str, str] | None = None,
        weights: dict[str, float] | None = None,
        stats: dict[str, Any] | None = None,
        load: int | None = None,
    ) -> list[tuple[float, dict[str, Any] | None]]:
        """Ranked records; `signatures`, when given, receives each hit's key -> indexed file signature.
        `weights`: term -> weight. `stats`, when given, receives what standardising the scores needs: the
        number of documents that match ("matching") and the index's documents ("docs"). `load`: read the records
        of only the first `load` hits (the rest come back as (score, None): their scores are all a caller
        standardising the scores needs, and reading a record costs more than scoring it)."""
        if not terms:
            return []
        searcher = self.searcher()
        query = self.query_terms(terms, boosts, weights)
        result = searcher.search(query, limit=limit, count=stats is not None)
        if stats is not None:
            stats["matching"] = int(result.count or 0)
            stats["docs"] = int(searcher.num_docs)
        found: list[tuple[float, dict[str, Any] | None]] = []
        for rank, (score, address) in enumerate(result.hits):
            if load is not None and rank >= load:
                found.append((score, None))
                continue
            doc = searcher.doc(address)
            record = json.loads(bytes(doc.get_first("record")))
            if signatures is not None:
                signatures[f"{record['scope']}/{record['id']}"] = str(doc.get_first("sig") or "")
            found.append((score, record))
        return found

    def explain(self, terms: list[str], boosts: dict[str, float], key: str) -> list[tuple[str, str, float]]:
        """(field, term, score) of every query clause that matches the document `key`, as BM25 scored it
        (boost included): which field and which terms made a hit."""
        tantivy, SCHEMA = _engine()
        searcher = self.searcher()
        found = searcher.search(tantivy.Query.term_query(SCHEMA, "key", key, index_option="basic"), limit=1)
        if not found.hits:
            return []
        address = found.hits[0][1]
        matched = []
        for term in terms:
            for field_name, boost in boosts.items():
                query = tantivy.Query.term_query(SCHEMA, field_name, term, index_option="freq")
                if boost != 1.0:
                    query = tantivy.Query.boost_query(query, boost)
                try:
                    score = float(json.loads(query.explain(searcher, address).to_json())["value"])
                except ValueError:
                    continue  # this clause does not match the document
                matched.append((field_name, term, score))
        return matched

    @staticmethod
    def _record(searcher: tantivy.Searcher, address: tantivy.DocAddress) -> dict[str, Any]:
        doc = searcher.doc(address)
        return json.loads(bytes(doc.get_first("record")))

    def by_field(self, field_name: str, value: str, limit: int = 50) -> list[dict[str, Any]]:
        tantivy, SCHEMA = _engine()
        searcher = self.searcher()
        query = tantivy.Query.term_query(SCHEMA, field_name, value, index_option="basic")
        result = searcher.search(query, limit=limit, count=False)
        return [self._record(searcher, address) for _, address in result.hits]

    # --- reads kept for the last commit ----------------------------------------------------------------------------
    # A session start reads the same few hundred records at every start (the memories of each standing and index
    # kind: at 100,000 memories 8 searches and 400 records decoded, ~6 ms of its CPU) while the index has not
    # changed. They are kept in the index directory, a file per kind (a spawn reads two of them), beside the commit
    # they were read from (meta.json, which every commit rewrites: its segments and opstamp), and read back while
    # meta.json is that commit's.
    def _commit_mark(self) -> bytes | None:
        try:
            with open(join(self.dir, "meta.json"), "rb") as handle:
                return handle.read() or None
        except OSError:
            return None

    def _kept_reads(self, bucket: str) -> dict[Any, Any] | None:
        """The reads of a bucket kept for the index's current commit (empty when kept for another, or none were);
        None when the index has no commit to keep them for."""
        mark = self._commit_mark()  # (each time: a process that reads again after a commit reads the new one)
        if mark is None:
            return None
        held = self._kept.get(bucket)
        if held is None or held[0] != mark:
            reads: dict[Any, Any] = {}
            try:
                with open(join(self.dir, f"kept-{bucket}.marshal"), "rb") as handle:
                    data = marshal.loads(handle.read())  # (marshal.load reads a file piece by piece: ~5x slower)
                if data.get("commit") == mark and isinstance(data.get("reads"), dict):
                    reads = data["reads"]
            except (OSError, ValueError, EOFError, TypeError, AttributeError):
                pass
            self._kept[bucket] = held = (mark, reads)
            self._unsaved.discard(bucket)
        return held[1]

    def save_kept_reads(self) -> None:
        """Write the buckets this process read anew (once, after the reads of a hook: HookContext.finish)."""
        for bucket in sorted(self._unsaved):
            # kept under the commit whose meta.json was read before the reads: one made since (its records may be
            # newer) has a meta.json of its own, under which nothing is kept yet
            mark, reads = self._kept[bucket]
            try:
                data = marshal.dumps({"commit": mark, "reads": reads})
                replace_file(join(self.dir, f"kept-{bucket}.marshal"), data)
            except (OSError, ValueError):
                pass  # nothing kept, nothing lost: the next start reads the index
        self._unsaved.clear()

    def of_kind(self, kind: str, limit: int = 50) -> list[dict[str, Any]]:
        """by_field("kind", kind, limit), kept for the commit it was read from (the session start's reads)."""
        plain = kind.isascii() and kind.islower() and kind.replace("_", "").replace("-", "").isalnum()
        bucket = f"kind-{kind}"
        kept = self._kept_reads(bucket) if plain else None  # (a kind no file name carries as it is: not kept)
        if kept is None:
            return self.by_field("kind", kind, limit)
        if limit not in kept:
            kept[limit] = self.by_field("kind", kind, limit)
            self._unsaved.add(bucket)
        return list(kept[limit])

    def naming_any_kept(self, ids: Iterable[str], field_names: tuple[str, ...], terms: Iterable[str]) -> set[str]:
        """naming_any, kept for the commit it was read from (the session start's environment facts)."""
        wanted = tuple(sorted(set(ids)))  # (sorted: the answer is a set, and the terms come from one)
        named = tuple(sorted(set(terms)))
        kept = self._kept_reads("naming")
        if kept is None:
            return self.naming_any(wanted, field_names, named)
        key = (wanted, tuple(field_names), named)
        if key not in kept:
            if len(kept) >= 8:  # other candidates at each start (a resumed session's): the last few are kept
                kept.clear()
            kept[key] = sorted(self.naming_any(wanted, field_names, named))
            self._unsaved.add("naming")
        return set(kept[key])

    def naming_any(self, ids: Iterable[str], field_names: tuple[str, ...], terms: Iterable[str]) -> set[str]:
        """Of the memories `ids`, those whose `field_names` hold any of `terms` as the analyzer indexed them (the
        terms of gate.textproc.terms, which analyses alike): one search, where tokenizing each memory's text in
        Python cost a session start ~4 ms at 250 memories."""
        tantivy, SCHEMA = _engine()
        wanted = list(dict.fromkeys(ids))
        named = list(dict.fromkeys(terms))
        if not wanted or not named:
            return set()
        should = tantivy.Occur.Should
        which = tantivy.Query.boolean_query(
            [(should, tantivy.Query.term_query(SCHEMA, "id", i, index_option="basic")) for i in wanted]
        )
        holds = tantivy.Query.boolean_query(
            [(should, tantivy.Query.term_query(SCHEMA, f, t, index_option="freq")) for t in named for f in field_names]
        )
        query = tantivy.Query.boolean_query([(tantivy.Occur.Must, which), (tantivy.Occur.Must, holds)])
        searcher = self.searcher()
        result = searcher.search(query, limit=len(wanted), count=False)
        return {str(searcher.doc(address).get_first("id")) for _, address in result.hits}

    def get(self, memory_id: str) -> dict[str, Any] | None:
        records = self.by_field("id", memory_id, limit=3)
        return records[0] if records else None

    def linking_to(self, memory_id: str) -> list[dict[str, Any]]:
        return self.by_field("link_target", memory_id)

    def num_docs(self) -> int:
        return self.searcher().num_docs


def main(argv: list[str]) -> int:
    """The background build a hook starts for a large store (gate/memory/index/build.py)."""
    from gate.memory.index.build import build

    return build(MemoryIndex(ProjectPaths.for_cwd(argv[0])))


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
