"""`gate forget --purge`: a memory's text gone from its file, from its history and from the index (its bytes, not
only its search), for a secret stored by mistake. Without --purge, forget keeps everything, as it always did."""

from __future__ import annotations

import json
import os
from pathlib import Path

from gate.memory.store.history import history_root
from gate.memory.store.store import Store
from gate.paths import ProjectPaths

# Words no other memory and no file of gate holds: where their bytes are found, the text is still kept.
WORDS = ("quuxplorer", "wombatload", "zorblaxian")
TITLE = "The quuxplorer widget leaks memory under wombatload"


def remember(gate, *args: str) -> str:
    code, out, err = gate("remember", *args, "--new")
    assert code == 0, err
    return out.strip()


def files_holding(root: str | Path, word: str) -> list[str]:
    """Every file under root whose bytes hold the word (as stored: tantivy keeps a record's text as is)."""
    found = []
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            with open(path, "rb") as handle:
                if word.encode() in handle.read():
                    found.append(path)
    return found


def a_store_with_history(gate) -> tuple[str, str]:
    """A memory with the words in its title, body and cues, edited and forgotten (three saved versions), beside
    another memory that must survive the purge."""
    other = remember(gate, "Filler memory about the zebrafish pipeline", "--kind", "finding")
    memory_id = remember(gate, TITLE, "--kind", "finding", "--body", "Seen with zorblaxian traffic only")
    assert gate("edit", memory_id, "--cues", "zorblaxian leak")[0] == 0
    assert gate("edit", memory_id, "--add-cues", "wombatload spike")[0] == 0
    assert gate("forget", memory_id)[0] == 0
    # one segment for both: tantivy drops a segment whose documents are all deleted, but a deleted document
    # beside a live one stays in the segment's bytes until a merge
    assert gate("reindex")[0] == 0
    return memory_id, other


def test_forget_without_purge_keeps_the_text_everywhere(gate, project: Path) -> None:
    """Today's forget, unchanged: the text stays in the file, the history and the index (the purge test's
    control: the same look finds the words before a purge)."""
    memory_id, _ = a_store_with_history(gate)
    paths = ProjectPaths.for_cwd(project)
    store = Store(paths)
    assert store.get(memory_id).title == TITLE and store.get(memory_id).status == "forgotten"
    assert len(store.versions(memory_id)[1]) == 3
    for word in WORDS:
        assert files_holding(history_root(paths, "private"), word)
    assert files_holding(paths.index_dir, "quuxplorer")
    code, out, _ = gate("list", "--status", "forgotten")
    assert TITLE in out


def test_purge_takes_the_text_out_of_the_file_the_history_and_the_index(gate, project: Path) -> None:
    memory_id, other = a_store_with_history(gate)
    paths = ProjectPaths.for_cwd(project)
    assert files_holding(paths.index_dir, "quuxplorer")  # the look below can see the text when it is there

    code, out, err = gate("forget", "--purge", memory_id)
    assert code == 0, err
    assert f"purged {memory_id}" in out

    store = Store(paths)
    path = store.locate(memory_id)
    assert path is not None  # a tombstone: the id stays, so links to it still point somewhere
    text = path.read_text(encoding="utf-8")
    memory = store.get(memory_id)
    assert memory.status == "forgotten" and memory.title == "(purged)"
    assert memory.body == memory.cues == memory.derived_cues == "" and memory.tags == []
    assert store.versions(memory_id)[1] == []
    assert not os.path.exists(os.path.join(history_root(paths, "private"), memory_id))
    for word in WORDS:
        assert word not in text
        assert files_holding(history_root(paths, "private"), word) == []
        assert files_holding(paths.index_dir, word) == []
        assert files_holding(os.environ["GATE_HOME"], word) == []  # nothing gate keeps holds it
        code, out, _ = gate("search", word, "--all", "--json")
        assert code == 0 and json.loads(out)["hits"] == []
    # the rest of the store is still indexed and found
    code, out, _ = gate("search", "zebrafish", "pipeline", "--json")
    assert [hit["id"] for hit in json.loads(out)["hits"]] == [other]
    code, out, _ = gate("show", "--history", memory_id)
    assert code == 0 and "quuxplorer" not in out


def test_purge_of_an_active_memory_and_run_again(gate, project: Path) -> None:
    """An active memory is purged straight away (no forget first), out of the cue table the hooks read too (a
    gotcha tied to a file is in it, title and body); a second purge finds nothing to take."""
    (project / "README.md").write_text("readme\n")
    remember(gate, "Filler memory about the zebrafish pipeline", "--kind", "finding")
    memory_id = remember(gate, TITLE, "--kind", "gotcha", "--path", "README.md")
    assert gate("reindex")[0] == 0  # one segment for both (see a_store_with_history)
    paths = ProjectPaths.for_cwd(project)
    Store(paths).build_cues()
    index_dir = os.path.realpath(paths.index_dir)
    kept = [p for p in files_holding(os.environ["GATE_HOME"], "quuxplorer") if not p.startswith(index_dir)]
    assert any(os.sep + "cues" + os.sep in p for p in kept), kept  # the cue table holds it, beside its file
    assert gate("forget", "--purge", memory_id)[0] == 0
    assert files_holding(os.environ["GATE_HOME"], "quuxplorer") == []
    code, out, err = gate("forget", "--purge", memory_id)
    assert code == 0, err
    assert files_holding(os.environ["GATE_HOME"], "quuxplorer") == []
    code, out, _ = gate("list", "--json")
    assert memory_id not in out


def test_purge_of_a_team_memory_says_git_still_has_it(gate, project: Path) -> None:
    memory_id = remember(gate, TITLE, "--kind", "finding", "--scope", "team")
    code, out, err = gate("forget", "--purge", memory_id)
    assert code == 0, err
    assert "git's history" in out
    assert "quuxplorer" not in (project / ".gate" / "memories" / f"{memory_id}.toml").read_text()


def test_purge_of_an_unknown_id_is_a_clear_error(gate) -> None:
    code, out, err = gate("forget", "--purge", "m-000000")
    assert code == 3 and "no memory 'm-000000'" in err and "gate list" in err


def test_a_secret_stored_before_it_was_refused_can_be_forgotten_and_purged(gate, project: Path) -> None:
    """A memory whose text a newer pattern calls a secret (written by an earlier version, or by hand): forget
    retires it and points at --purge, instead of refusing the text it already holds; a write that adds a secret
    is still refused."""
    memory_id = remember(gate, "Maps service key lives in staging config", "--kind", "reference")
    store = Store(ProjectPaths.for_cwd(project))
    path = store.locate(memory_id)
    secret = "The staging api key is Zq8vT3nW9xK2pL5m for the maps service"
    path.write_text(path.read_text().replace("Maps service key lives in staging config", secret))
    code, out, err = gate("forget", memory_id)
    assert code == 0, err
    assert f"forgot {memory_id}" in out
    assert "holds a secret (credential in a sentence)" in err and f"gate forget --purge {memory_id}" in err
    assert "Zq8vT3nW9xK2pL5m" not in err
    code, _, err = gate("edit", memory_id, "--cues", "the api key for maps is Xk8pQ2vLm9zR7tWq")
    assert code == 2 and "the cues look like they contain a secret" in err
    assert gate("forget", "--purge", memory_id)[0] == 0
    assert files_holding(os.environ["GATE_HOME"], "Zq8vT3nW9xK2pL5m") == []
