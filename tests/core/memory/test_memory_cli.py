"""`tripane memory …` on a real data folder."""

from __future__ import annotations

import json

from core.cli import main
from core.memory.config import read_config
from core.memory.longterm import LongTermMemory


def test_memory_search_status_doctor_and_config_from_the_command_line(data_dir, embedder, capsys):
    memory = LongTermMemory(data_dir, embedder)
    memory.remember("The nightly job exports invoices to the billing bucket at 02:00", kind="fact", source="s1")
    memory.remember("The nightly job exports invoices to the billing bucket at 02:00 UTC", kind="fact", source="s2")
    memory.close()

    assert main(["memory", "search", "when are invoices exported", "--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[1].startswith("MEMORY.md:") and "billing bucket" in out

    assert main(["memory", "search", "invoices", "--json", "--data-dir", str(data_dir)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows and {"path", "start_line", "score", "vector", "keyword"} <= set(rows[0])

    assert main(["memory", "status", "--data-dir", str(data_dir)]) == 0
    assert "indexed" in capsys.readouterr().out

    assert main(["memory", "doctor", "--data-dir", str(data_dir)]) == 0
    assert "Duplicate" in capsys.readouterr().out

    assert main(["memory", "config", "--embedding-model", "openai/text-embedding-3-small",
                 "--data-dir", str(data_dir)]) == 0
    assert read_config(data_dir)["embedding_model"] == "openai/text-embedding-3-small"
    assert main(["memory", "config", "--embedding-model", "local", "--data-dir", str(data_dir)]) == 0
    assert read_config(data_dir)["embedding_model"] == ""
    assert main(["memory", "config", "--vectors", "exact", "--data-dir", str(data_dir)]) == 0
    capsys.readouterr()
    assert main(["memory", "status", "--data-dir", str(data_dir)]) == 0
    assert "vector search: exact" in capsys.readouterr().out
    assert read_config(data_dir)["embedding_model"] == ""  # a change keeps the other settings


def test_a_provider_embedding_model_that_fails_is_a_clear_error(data_dir, capsys, monkeypatch):
    monkeypatch.setenv("TRIPANE_MODELS_LOCAL_ONLY", "1")
    assert main(["memory", "config", "--embedding-model", "openai/text-embedding-3-small",
                 "--data-dir", str(data_dir)]) == 0
    capsys.readouterr()
    code = main(["memory", "search", "anything", "--data-dir", str(data_dir)])
    err = capsys.readouterr().err
    assert code != 0 and "only models on 127.0.0.1" in err
