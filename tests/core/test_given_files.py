"""Files given to the agent from outside the work folder that cannot go as text (a customer's
support bundle from Downloads): a copy kept in the session's offload/given/, which the file tools read."""

from __future__ import annotations

import errno
import zipfile
from pathlib import Path

import pytest

from core import given_files
from core.events import ToolResult
from core.export import export_session
from core.given_files import NotGiven, given_name, keep_given
from core.scripted import ScriptedModel, call, reply
from core.store import DiskFull
from tests.core.helpers import events_of, make_session


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    downloads = tmp_path / "Downloads"
    downloads.mkdir()
    with zipfile.ZipFile(downloads / "acme-bundle.zip", "w") as archive:
        archive.writestr("logs/app.log", "10:07 ERROR pool exhausted (5/5 connections in use)\n")
    return downloads / "acme-bundle.zip"


async def test_a_file_given_with_the_task_is_copied_into_the_session_and_read_there(store, data_dir, workdir, bundle,
                                                                                   tmp_path):
    model = ScriptedModel([reply("", call("file_search", query="ERROR", path="offload:given/acme-bundle.zip")),
                           reply("", call("task_done", summary="found it"))])
    task = "Why did ACME's orders fail? Their bundle: `offload:given/acme-bundle.zip`"
    session = make_session(store, data_dir, workdir, model, task=task, given=((str(bundle), "acme-bundle.zip"),))
    assert await session.run() == "done"
    assert events_of(session, ToolResult)[0].content.splitlines()[0] == \
        "offload:given/acme-bundle.zip/logs/app.log:1: 10:07 ERROR pool exhausted (5/5 connections in use)"
    assert (session.dir / "offload" / "given" / "acme-bundle.zip").read_bytes() == bundle.read_bytes()
    assert sorted(path.name for path in workdir.iterdir()) == []  # (nothing put in the person's project)
    # The copy is the person's, not the run's: an export (for a bug report) leaves it out.
    with zipfile.ZipFile(export_session(store, data_dir, session.id, tmp_path / "shared.zip")) as archive:
        assert not [name for name in archive.namelist() if "/offload/given/" in name]


def test_the_same_file_given_twice_is_kept_once_and_another_of_its_name_beside_it(tmp_path, bundle):
    from core.given_files import copy_given

    session_dir = tmp_path / "session"
    assert copy_given(session_dir, bundle) == "offload:given/acme-bundle.zip"
    assert copy_given(session_dir, bundle) == "offload:given/acme-bundle.zip"  # (dragged again, to be sure)
    other = tmp_path / "web-2" / "acme-bundle.zip"  # (the other machine's)
    other.parent.mkdir()
    other.write_bytes(bundle.read_bytes() + b"\x00")
    assert copy_given(session_dir, other) == "offload:given/acme-bundle-2.zip"
    assert sorted(path.name for path in (session_dir / "offload" / "given").iterdir()) == [
        "acme-bundle-2.zip", "acme-bundle.zip"]


def test_a_file_that_cannot_be_given_is_refused_before_the_session_is_made(store, data_dir, workdir, tmp_path):
    with pytest.raises(NotGiven, match=r"^gone\.zip is not a file$"):
        make_session(store, data_dir, workdir, ScriptedModel([]), given=((str(tmp_path / "gone.zip"), "gone.zip"),))
    assert store.sessions() == []


def test_a_name_given_twice_is_kept_beside_the_first_and_a_copy_is_whole_or_not_at_all(tmp_path, bundle, monkeypatch):
    # app.log from two machines; a bundle larger than a copy made as it is dropped; a full disk.
    assert given_name(Path("/a/app.log"), []) == "app.log"
    assert given_name(Path("/b/app.log"), ["app.log"]) == "app-2.log"
    assert given_name(Path("/c/app.log.1.gz"), ["app.log.1.gz", "app-2.log.1.gz"]) == "app-3.log.1.gz"
    session_dir = tmp_path / "session"
    assert keep_given(session_dir, bundle, "acme-bundle.zip") == "offload:given/acme-bundle.zip"
    monkeypatch.setattr(given_files, "GIVEN_MAX_BYTES", 10)
    with pytest.raises(NotGiven, match=r"^acme-bundle\.zip is \d+ bytes, more than Tripane copies for the agent"):
        keep_given(session_dir, bundle, "again.zip")
    monkeypatch.setattr(given_files, "GIVEN_MAX_BYTES", 2**20)

    def no_room(source, target):
        Path(target).write_bytes(b"half")
        raise OSError(errno.ENOSPC, "No space left on device", str(target))

    monkeypatch.setattr(given_files.shutil, "copyfile", no_room)
    with pytest.raises(DiskFull):
        keep_given(session_dir, bundle, "full.zip")
    assert sorted(path.name for path in (session_dir / "offload" / "given").iterdir()) == ["acme-bundle.zip"]
