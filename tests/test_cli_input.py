"""What a new user can get wrong at the command line, each met with a clear refusal or note (issue #32, item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.parametrize("where", ["home", "root"])
def test_remember_outside_any_project_is_refused(where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """`gate remember` run in the home directory (or /) with no git checkout made a store for it, which no
    session reads; it is refused with a hint, and nothing is written. With --project it is the user's choice."""
    from gate.cli import main
    from gate.paths import user_dirs

    directory = Path.home() if where == "home" else Path("/")
    monkeypatch.chdir(directory)
    code = main(["remember", "Deploys need approval from the release manager"])
    err = capsys.readouterr().err
    assert code != 0 and "is not a project" in err and "--project DIR" in err
    assert not Path(user_dirs().data).exists() or not any(Path(user_dirs().data).rglob("*.toml"))
    if where == "home":
        assert main(["remember", "Deploys need approval from the release manager", "--project", str(directory)]) == 0


def test_a_mistyped_command_gets_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    from gate.cli import main

    assert main(["serch", "waterfall"]) == 2
    err = capsys.readouterr().err
    assert "no command 'serch'; did you mean 'search'?" in err and "gate --help" in err
    assert len(err.splitlines()) == 2  # not the list of all commands
    assert main(["xyzzy"]) == 2
    assert "did you mean" not in capsys.readouterr().err


def test_counts_take_the_number_of_their_noun(gate, tmp_path: Path) -> None:
    """"the cues looks like", "1 links", "1 blocks" (issue #32): each message in the number its count takes."""
    from gate.render import counted
    from gate.replay.report import _counts

    assert counted(1, "memory", "memories") == "1 memory" and counted(0, "link") == "0 links"
    one = {"prompts": 1, "fires": 1, "delivered": 1, "turns_ended": 1, "blocks": 1}
    assert _counts(one) == "1 prompt, 1 fire, 1 memory delivered, 1 turn ended, 1 block"
    code, _, err = gate("remember", "Deploy credentials live in the vault", "--cues",
                        "the admin password is hunter2 for the staging box")
    assert code != 0 and "the cues look like they contain a secret" in err


def test_claude_memory_index_with_one_link_says_one_link(tmp_path: Path) -> None:
    from gate.importers.claude_memory import index_note

    (tmp_path / "MEMORY.md").write_text("- [Deploys](deploys.md)\n")
    (tmp_path / "deploys.md").write_text("Deploys need approval\n")
    assert "1 link to topic files" in index_note(tmp_path)


def test_remember_outside_git_says_which_project_it_went_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 44: outside $HOME, a directory outside git silently became a store. It is still allowed (the
    directory is the project, as for every other command), and said on stderr; the id alone is on stdout."""
    from gate.cli import main
    from gate.memory.store.store import Store

    plain = tmp_path / "notes"
    (plain / "sub").mkdir(parents=True)
    assert not any((parent / ".git").exists() for parent in [plain, *plain.parents])
    monkeypatch.chdir(plain)
    assert main(["remember", "Deploys need approval from the release manager"]) == 0
    out, err = capsys.readouterr()
    assert f"stored in the project {plain.resolve()}, which is not a git repository" in err
    assert "--project DIR" in err
    assert out.strip() and Store.for_cwd(str(plain)).get(out.strip()).title.startswith("Deploys")
    # named with --project, the same note
    assert main(["remember", "Releases are cut on Thursdays", "--project", str(plain / "sub")]) == 0
    assert f"stored in the project {(plain / 'sub').resolve()}, which is not a git repository" in \
        capsys.readouterr().err


def test_remember_in_a_git_project_adds_no_note(gate) -> None:
    code, out, err = gate("remember", "Deploys need approval from the release manager")
    assert code == 0 and "not a git repository" not in err


def test_an_unknown_option_gets_its_subcommands_usage(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 44: `gate search --foo x` printed `usage: gate [-h] [--version] COMMAND ...`; the error is the
    subcommand's, with its usage (what it does take)."""
    from gate.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["search", "--foo", "x"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: gate search ") and "--explain" in err
    assert "gate search: error: unrecognized arguments: --foo" in err
    assert "COMMAND ..." not in err
    with pytest.raises(SystemExit):  # before any command: the top-level usage, as before
        main(["--foo"])
    assert capsys.readouterr().err.startswith("usage: gate [-h]")
