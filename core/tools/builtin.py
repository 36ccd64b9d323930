"""The built-in tool set. Every session gets all of them, always, in the same order (KV-cache)."""

from __future__ import annotations

from core.tools import delegate, files, memory, notebook, search, shell, web
from core.tools.registry import ToolRegistry

# Tools the loop handles itself rather than running.
CONTROL_TOOLS = frozenset({"human_ask", "task_done", "delegate_research"})


def builtin_registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(files.file_read, gathers_information=True)
    registry.register(files.file_list, gathers_information=True)
    registry.register(search.file_search, gathers_information=True)
    registry.register(files.file_write)
    registry.register(files.file_edit)
    registry.register(shell.shell_run, risky=True)
    registry.register(web.web_fetch, risky=True, gathers_information=True)
    # Not risky: the query goes to the search provider the person chose, as the context goes to their
    # model's; what comes back is titles and snippets, marked untrusted, and a page is read by web_fetch.
    registry.register(web.web_search, gathers_information=True)
    registry.register(notebook.plan_update)
    registry.register(notebook.findings_add)
    registry.register(memory.memory_search, gathers_information=True)
    registry.register(memory.memory_get, gathers_information=True)
    registry.register(memory.memory_remember)
    registry.register(memory.memory_save_skill)
    registry.register(notebook.human_ask)
    registry.register(notebook.task_done)
    # Its report is read like a file: it counts toward the 2-Action Rule, so its facts get written down.
    registry.register(delegate.delegate_research, gathers_information=True)
    return registry
