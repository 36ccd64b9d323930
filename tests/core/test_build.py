"""Which build runs: the commit of a checkout (read without git) or of a bundle, with the version."""

from __future__ import annotations

import subprocess

from core import __version__, cli
from core.build import SOURCE_ROOT, bundled_commit, checkout_commit, version_text
from tests.support.marks import needs_git

COMMIT = "3c7cca8c26d4e1f0a9b8c7d6e5f4a3b2c1d0e9f8"


def git(folder, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=folder, check=True,
                          capture_output=True, text=True).stdout.strip()


@needs_git
def test_a_checkouts_commit_is_read_from_its_files_as_git_keeps_them(tmp_path):
    repo = tmp_path / "tripane"
    repo.mkdir()
    git(repo, "init", "-b", "main")
    assert checkout_commit(repo) == ""  # no commit yet
    (repo / "a.txt").write_text("a\n", encoding="utf-8")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-m", "one")
    first = git(repo, "rev-parse", "HEAD")
    assert checkout_commit(repo) == first  # the branch's loose ref
    git(repo, "pack-refs", "--all")  # as git gc leaves it
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert checkout_commit(repo) == first
    (repo / "a.txt").write_text("b\n", encoding="utf-8")
    git(repo, "commit", "-am", "two")
    second = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", first)  # detached
    assert checkout_commit(repo) == first
    git(repo, "checkout", "-q", "main")
    git(repo, "worktree", "add", "-q", "-b", "other", str(tmp_path / "other"), first)
    assert checkout_commit(tmp_path / "other") == first  # its .git is a file naming its folder
    assert checkout_commit(repo) == second


def test_no_checkout_or_a_damaged_one_says_no_commit(tmp_path):
    assert checkout_commit(tmp_path) == ""  # an installed copy: no .git
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    assert checkout_commit(tmp_path) == ""  # a branch that is nowhere
    (tmp_path / ".git" / "HEAD").write_bytes(b"\xff\xfe")
    assert checkout_commit(tmp_path) == ""
    (tmp_path / ".git" / "HEAD").write_text("not a commit\n", encoding="utf-8")
    assert checkout_commit(tmp_path) == ""


def test_a_bundle_names_the_commit_the_installer_wrote():
    assert bundled_commit(f"{COMMIT}\n") == COMMIT
    assert bundled_commit("\n") == ""  # built outside a checkout
    assert bundled_commit("garbage") == ""


def test_the_version_says_the_commit_this_checkout_runs_from(capsys):
    # From a checkout (CI clones one), its commit is said, ten characters of it; from a copy without
    # .git (a downloaded zip), the version alone.
    shown = version_text()
    if commit := checkout_commit(SOURCE_ROOT):
        assert shown == f"{__version__} ({commit[:10]})"
    else:
        assert shown == __version__
    try:
        cli.main(["--version"])
    except SystemExit:
        pass
    assert capsys.readouterr().out.strip() == f"tripane {shown}"
