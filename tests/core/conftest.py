"""Fixtures for the core: a real store and real files in a temporary folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.store import Store


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.fixture
def ctx(tmp_path: Path):
    """A file tools' context in tmp_path/work, its session in tmp_path/session."""
    return _tools_context(tmp_path, sees_pictures=False)


@pytest.fixture
def seeing_ctx(tmp_path: Path):
    """A file tools' context in tmp_path/work, for a model that sees pictures."""
    return _tools_context(tmp_path, sees_pictures=True)


def _tools_context(tmp_path: Path, sees_pictures: bool):
    from core.memory.working import WorkingMemory
    from core.tools.context import ToolContext

    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(workdir=work, session_dir=tmp_path / "session", memory=WorkingMemory(tmp_path / "session"),
                       sees_pictures=sees_pictures)


@pytest.fixture
def store(data_dir: Path):
    db = Store(data_dir / "tripane.db")
    yield db
    db.close()


@pytest.fixture(scope="session", autouse=True)
def litellm_loaded():
    """litellm once, before the first test: its import takes seconds on a cold machine, and it
    would otherwise land in the first session's first turn, inside that test's hang guard."""
    from core.llm import load_litellm

    load_litellm()


@pytest.fixture
def signed_out(monkeypatch, tmp_path):
    """A computer never signed in to a cloud: no AWS or Google Cloud credentials in the
    environment or in the home folder."""
    for variable in [v for v in os.environ if v.startswith(("AWS_", "GOOGLE_", "CLOUDSDK_", "VERTEX"))]:
        if variable != "AWS_EC2_METADATA_DISABLED":
            monkeypatch.delenv(variable)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
