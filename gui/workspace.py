"""The sessions the window knows: one store in the data folder, sessions opened once and kept."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from core.llm import ModelClient
from core.paths import DB_NAME, session_dir
from core.session import Session, SessionConfig
from core.store import SessionRow, Store


def default_model_client(retries: int = 4) -> ModelClient:
    from core.llm import LiteLLMClient
    from core.secrets import get_api_key

    return LiteLLMClient(api_key=get_api_key, retries=retries)


def connection_test_client() -> ModelClient:
    """For "Test connection": one attempt, so a wrong address is reported at once, not after retries."""
    return default_model_client(retries=0)


class Workspace:
    def __init__(self, data_dir: Path, model_factory: Callable[[], ModelClient] = default_model_client):
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.store = Store(self.data_dir / DB_NAME)
        self._model_factory = model_factory
        self._open: dict[str, Session] = {}

    def sessions(self, search: str = "") -> list[SessionRow]:
        needle = search.strip().lower()
        rows = self.store.sessions()
        if needle:
            rows = [r for r in rows if needle in r.task.lower() or needle in r.title.lower() or needle in r.id]
        return rows

    def create(self, config: SessionConfig) -> Session:
        session = Session.create(self.store, self.data_dir, config, self._model_factory())
        self._open[session.id] = session
        return session

    def open(self, session_id: str) -> Session:
        if session_id not in self._open:
            self._open[session_id] = Session.open(self.store, self.data_dir, session_id, self._model_factory())
        return self._open[session_id]

    def opened(self) -> list[Session]:
        return list(self._open.values())

    def rename(self, session_id: str, title: str) -> None:
        title = " ".join(title.split())
        if not title:
            raise ValueError("a session needs a name")
        self.store.update_session(session_id, title=title[:120])

    async def delete(self, session_id: str) -> None:
        """Remove the session's events and its folder (the three files, offloads)."""
        session = self._open.pop(session_id, None)
        if session is not None:
            await session.close()
        self.store.delete_session(session_id)
        shutil.rmtree(session_dir(self.data_dir, session_id), ignore_errors=True)

    async def close(self) -> None:
        for session in list(self._open.values()):
            await session.close()
        self.store.close()
