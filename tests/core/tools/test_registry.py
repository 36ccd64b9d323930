from __future__ import annotations

import pytest

from core.tools.builtin import builtin_registry
from core.tools.registry import ToolError, ToolRegistrationError, ToolRegistry, ToolSpec


def file_sample(ctx, path: str, count: int = 3, tags: list[str] | None = None) -> str:
    """Do something with a file.

    Args:
        path: Where the file is.
        count: How many times,
            continued on a second line.
        tags: Labels to attach.
    """
    return f"{path}:{count}:{tags}"


def test_schema_is_built_from_signature_and_docstring():
    spec = ToolRegistry().register(file_sample)
    params = spec.parameters
    assert spec.description == "Do something with a file."
    assert params["required"] == ["path"]
    assert params["properties"]["count"] == {"type": "integer", "description": "How many times, continued on a second line.", "default": 3}
    assert params["properties"]["tags"]["type"] == "array"
    assert spec.group == "file"


def test_undocumented_parameters_and_missing_prefixes_are_refused():
    def file_bad(ctx, path: str) -> str:
        """No args section."""
    def teleport(ctx) -> str:
        """Goes places."""
    with pytest.raises(ToolRegistrationError, match="not described"):
        ToolRegistry().register(file_bad)
    with pytest.raises(ToolRegistrationError, match="group prefix"):
        ToolRegistry().register(teleport)


async def test_calls_check_names_arguments_and_types():
    registry = ToolRegistry()
    registry.register(file_sample)
    assert await registry.call("file_sample", {"path": "a"}, None) == "a:3:None"
    with pytest.raises(ToolError, match="Unknown tool 'nope'"):
        await registry.call("nope", {}, None)
    with pytest.raises(ToolError, match=r"missing argument\(s\) \['path'\]"):
        await registry.call("file_sample", {}, None)
    with pytest.raises(ToolError, match="unknown argument"):
        await registry.call("file_sample", {"path": "a", "colour": 1}, None)
    with pytest.raises(ToolError, match="must be of type integer"):
        await registry.call("file_sample", {"path": "a", "count": "three"}, None)
    with pytest.raises(ToolError, match="must be of type string"):
        await registry.call("file_sample", {"path": None}, None)  # required: null is not a path


async def test_a_tool_servers_open_schema_lets_its_server_check_what_it_declares_loosely():
    async def run(ctx, **arguments):
        return sorted(arguments.items())
    schema = {"type": "object", "required": ["q"], "properties": {
        "q": {"type": "string"}, "limit": {"type": ["integer", "null"]}, "any": True,
        "mode": {"type": "string", "enum": ["fast", "full"]}}}
    registry = ToolRegistry({"mcp_db_query": ToolSpec("mcp_db_query", "Query.", schema, run)})
    called = await registry.call("mcp_db_query", {"q": "x", "limit": None, "any": [1], "extra-flag": True}, None)
    assert called == '[["any", [1]], ["extra-flag", true], ["q", "x"]]'  # (null for an optional one: its default)
    with pytest.raises(ToolError, match="must be one of"):
        await registry.call("mcp_db_query", {"q": "x", "mode": "slow"}, None)
    with pytest.raises(ToolError, match="must be of type string"):
        await registry.call("mcp_db_query", {"q": 3}, None)


async def test_the_loose_forms_small_models_send_are_taken_as_they_plainly_mean():
    registry = ToolRegistry()
    registry.register(file_sample)
    assert await registry.call("file_sample", {"path": "a", "count": " 12 "}, None) == "a:12:None"
    assert await registry.call("file_sample", {"path": "a", "count": 5.0}, None) == "a:5:None"
    assert await registry.call("file_sample", {"path": "a", "count": None, "tags": None}, None) == "a:3:None"
    assert await registry.call("file_sample", {"path": "a", "tags": '["x", "y"]'}, None) == "a:3:['x', 'y']"
    with pytest.raises(ToolError, match="must be of type integer"):
        await registry.call("file_sample", {"path": "a", "count": 2.5}, None)
    with pytest.raises(ToolError, match="must be of type array"):
        await registry.call("file_sample", {"path": "a", "tags": "x, y"}, None)

    def file_find(ctx, query: str, regex: bool = False, share: float = 0.5) -> str:
        """Find.

        Args:
            query: What.
            regex: As a regular expression.
            share: How much.
        """
        return f"{query}:{regex!r}:{share!r}"
    registry.register(file_find)
    assert await registry.call("file_find", {"query": "q", "regex": "True", "share": "0.25"}, None) == "q:True:0.25"
    with pytest.raises(ToolError, match="must be of type boolean"):
        await registry.call("file_find", {"query": "q", "regex": "yes"}, None)


def test_builtin_tools_are_stable_grouped_and_documented():
    schemas = builtin_registry().schemas()
    names = [s["function"]["name"] for s in schemas]
    assert names == sorted(names)
    assert {"file_read", "file_write", "file_edit", "file_list", "file_search", "shell_run", "web_fetch", "web_search",
            "plan_update", "findings_add", "memory_search", "memory_get", "memory_remember", "memory_save_skill",
            "human_ask", "task_done", "delegate_research"} == set(names)
    assert builtin_registry().schemas() == schemas
