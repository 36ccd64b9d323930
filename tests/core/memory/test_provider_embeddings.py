"""Vectors from a provider's embedding model, through litellm's real code path, against a scripted
OpenAI-compatible server on 127.0.0.1 (the embedding model is the only fake)."""

from __future__ import annotations

import hashlib
import math

import pytest

from core.llm import ModelError
from core.memory.config import write_config
from core.memory.longterm import LongTermMemory
from tests.support.openai_server import Failure, ScriptedServer

DIM = 64


def hashed_words(texts: list[str]) -> list[list[float]]:
    """A scripted embedding model: words hashed into 64 buckets (texts sharing words are close)."""
    vectors = []
    for text in texts:
        vector = [0.0] * DIM
        for word in text.lower().replace(":", " ").split():
            vector[int(hashlib.sha1(word.encode()).hexdigest(), 16) % DIM] += 1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        vectors.append([v / norm for v in vector])
    return vectors


def test_a_configured_provider_embedding_model_makes_the_vectors(data_dir, monkeypatch):
    monkeypatch.setenv("TRIPANE_MODELS_LOCAL_ONLY", "1")  # only 127.0.0.1 may be called
    with ScriptedServer(embed=hashed_words) as server:
        write_config(data_dir, embedding_model="openai/scripted-embed", api_base=server.url)
        memory = LongTermMemory.open(data_dir)
        assert memory.status().embedder == "vectors from openai/scripted-embed (provider)"
        memory.remember("The nightly backup writes to the cold bucket", kind="fact", source="s1")
        memory.remember("Deploys happen on Thursdays after the review", kind="fact", source="s1")
        hits = memory.search("backup bucket nightly", top_k=1, mode="vector")
        memory.close()
    assert "nightly backup" in hits[0].text
    embedding_requests = [r for r in server.requests if "input" in r]
    assert embedding_requests and all(r["model"] == "scripted-embed" for r in embedding_requests)
    assert any(isinstance(r["input"], list) and len(r["input"]) > 1 for r in embedding_requests)  # batched


def test_a_refusing_embedding_provider_is_a_clear_error_and_the_files_stay(data_dir, monkeypatch):
    monkeypatch.setenv("TRIPANE_MODELS_LOCAL_ONLY", "1")
    with ScriptedServer(embed=Failure(401, "invalid api key")) as server:
        write_config(data_dir, embedding_model="openai/scripted-embed", api_base=server.url)
        memory = LongTermMemory.open(data_dir)
        memory.remember("The nightly backup writes to the cold bucket", kind="fact", source="s1")
        with pytest.raises(ModelError) as failure:
            memory.search("backup")
        memory.close()
    assert failure.value.kind == "auth" and "refused the API key" in str(failure.value)
    assert "nightly backup" in (data_dir / "memory" / "MEMORY.md").read_text(encoding="utf-8")
