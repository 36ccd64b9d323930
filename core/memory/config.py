"""The memory settings of a data folder (memory/config.json): which embedding model makes its vectors.

Kept with the data, not with one front end, so the window and the command line search the same
index with the same model. A light module: the settings dialog reads it without loading NumPy.
"""

from __future__ import annotations

import json
from pathlib import Path


def config_path(data_dir: Path) -> Path:
    return Path(data_dir) / "memory" / "config.json"


def read_config(data_dir: Path) -> dict[str, str]:
    try:
        data = json.loads(config_path(data_dir).read_text(encoding="utf-8"))
        return {k: str(v) for k, v in data.items()} if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def write_config(data_dir: Path, **changes: str) -> dict[str, str]:
    """Change memory settings of this data folder: `embedding_model` ("" = the offline one) and its
    `api_base`, `vectors` (auto | sqlite-vec | exact). A new embedding model re-embeds everything at the
    index's next refresh."""
    unknown = set(changes) - {"embedding_model", "api_base", "vectors"}
    if unknown:
        raise ValueError(f"unknown memory settings: {', '.join(sorted(unknown))}")
    if changes.get("vectors", "auto") not in ("auto", "sqlite-vec", "exact"):
        raise ValueError(f"vectors must be auto, sqlite-vec or exact, not {changes['vectors']!r}")
    config = {**read_config(data_dir), **{k: v.strip() for k, v in changes.items()}}
    path = config_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return config
