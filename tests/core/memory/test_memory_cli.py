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


def test_a_skills_variant_is_tested_or_set_aside_from_the_command_line(data_dir, embedder, capsys):
    from core.memory.variants import TESTING, proposals, propose, variant_of
    from tests.core.memory.test_variants import (
        NEW_STRATEGY,
        SLUG,
        variants_yaml,
        write_skill,
    )

    memory = LongTermMemory(data_dir, embedder)
    propose(memory.files, write_skill(memory), proposals(variants_yaml(NEW_STRATEGY))[0], "")
    assert main(["memory", "learned", "--data-dir", str(data_dir)]) == 0
    assert "*Variant waiting for you*, a new strategy: first list what you do not know." in capsys.readouterr().out
    assert main(["memory", "variant", SLUG, "test", "--data-dir", str(data_dir)]) == 0
    assert capsys.readouterr().out == ("The variant of “Fix failing tests” (a new strategy: first list what you do not "
                                       "know) is tested: the tasks the skill fits alternate between the two.\n")
    assert variant_of(memory.files, SLUG).status == TESTING
    assert main(["memory", "variant", f"{SLUG}.md", "drop", "--data-dir", str(data_dir)]) == 0
    assert "is set aside" in capsys.readouterr().out and variant_of(memory.files, SLUG) is None
    assert main(["memory", "variant", SLUG, "drop", "--data-dir", str(data_dir)]) == 1
    assert capsys.readouterr().err == ("tripane: memory variant: the skill 'fix-failing-tests' has no variant "
                                       "(skills/variants/fix-failing-tests.md)\n")
    memory.close()
