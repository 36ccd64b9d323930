"""Fixtures for the core: a real store and real files in a temporary folder."""

from __future__ import annotations

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
