"""The tool registry: typed, documented functions become tools with JSON schemas.

A tool's schema is generated from its signature and the `Args:` section of its docstring; a tool
with an undocumented parameter is refused at registration, because the model cannot use well what
it cannot read about. Tool failures are data (ToolError → an error result the model sees); the
registry never lets an exception from a tool escape into the loop.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

GROUPS = ("file", "shell", "web", "memory", "plan", "findings", "human", "task", "delegate")


class ToolError(Exception):
    """A failure the model should see and can act on (bad path, command failed, …)."""


class InvalidCall(ToolError):
    """A call that could not start (an unknown tool, arguments missing or of the wrong type): the
    model is told, and nothing ran, so nothing in the work folder can have changed."""


class ToolRegistrationError(TypeError):
    """A programmer error in a tool definition."""


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]
    func: Callable[..., Any]
    risky: bool = False  # needs the person's approval under the "ask" policy
    gathers_information: bool = False  # counts toward the 2-Action Rule
    # What it changes in the work folder is found as a command's is (a tool server's tool that
    # may change things: it works there, out of Tripane's sight): before_command/after_command.
    changes_folder: bool = False

    @property
    def group(self) -> str:
        return self.name.split("_", 1)[0]

    def schema(self, brief: bool = False) -> dict[str, Any]:
        """`brief`: the description's first paragraph only, for models whose window is small."""
        description = self.description.split("\n\n", 1)[0] if brief else self.description
        return {
            "type": "function",
            "function": {"name": self.name, "description": description, "parameters": self.parameters},
        }


@dataclass
class ToolRegistry:
    specs: dict[str, ToolSpec] = field(default_factory=dict)

    def register(self, func: Callable[..., Any], *, risky: bool = False, gathers_information: bool = False) -> ToolSpec:
        spec = build_spec(func, risky=risky, gathers_information=gathers_information)
        if spec.name in self.specs:
            raise ToolRegistrationError(f"tool {spec.name!r} registered twice")
        self.specs[spec.name] = spec
        return spec

    def get(self, name: str) -> ToolSpec | None:
        return self.specs.get(name)

    def schemas(self, brief: bool = False) -> list[dict[str, Any]]:
        """All tool schemas in a fixed order: they are part of the byte-stable prefix."""
        return [self.specs[name].schema(brief) for name in sorted(self.specs)]

    def checked(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The call's arguments as the tool declares them (loose forms taken as meant); raises InvalidCall for
        an unknown tool, a missing or unknown argument, a wrong type or a value outside its choices."""
        spec = self.specs.get(name)
        if spec is None:
            known = ", ".join(sorted(self.specs))
            raise InvalidCall(f"Unknown tool {name!r}. Available tools: {known}.")
        params = spec.parameters["properties"]
        missing = [p for p in spec.parameters.get("required", []) if p not in arguments]
        # (A tool server's schema may let more through: the server checks those itself.)
        closed = spec.parameters.get("additionalProperties", True) is False
        unknown = [a for a in arguments if a not in params] if closed else []
        if missing or unknown:
            raise InvalidCall(
                f"{name}: "
                + "; ".join(filter(None, [missing and f"missing argument(s) {missing}",
                                          unknown and f"unknown argument(s) {unknown}"]))
                + f". Expected parameters: {sorted(params)}."
            )
        arguments = _as_declared(params, spec.parameters.get("required", []), arguments)
        _check_types(name, params, arguments)
        return arguments

    async def call(self, name: str, arguments: dict[str, Any], ctx: Any) -> str:
        """Run a tool; raises ToolError for anything the model should be told."""
        arguments = self.checked(name, arguments)
        spec = self.specs[name]
        if inspect.iscoroutinefunction(spec.func):
            result = await spec.func(ctx, **arguments)
        else:
            # Synchronous tools do file or process I/O: keep it off the event loop.
            result = await asyncio.to_thread(spec.func, ctx, **arguments)
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, sort_keys=True)


_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def build_spec(func: Callable[..., Any], *, risky: bool, gathers_information: bool) -> ToolSpec:
    name = func.__name__
    group = name.split("_", 1)[0]
    if group not in GROUPS:
        raise ToolRegistrationError(f"tool {name!r} must start with a group prefix from {GROUPS}")
    summary, arg_docs = parse_docstring(inspect.getdoc(func) or "")
    if not summary:
        raise ToolRegistrationError(f"tool {name!r} has no description")
    hints = typing.get_type_hints(func)
    properties: dict[str, Any] = {}
    required: list[str] = []
    params = list(inspect.signature(func).parameters.values())[1:]  # the first is the context
    for param in params:
        if param.name not in arg_docs:
            raise ToolRegistrationError(f"tool {name!r}: parameter {param.name!r} is not described under Args:")
        schema = _type_schema(hints.get(param.name, str), f"{name}.{param.name}")
        schema["description"] = arg_docs[param.name]
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
        else:
            schema["default"] = param.default
        properties[param.name] = schema
    parameters = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    return ToolSpec(name, summary, parameters, func, risky=risky, gathers_information=gathers_information)


def _type_schema(hint: Any, where: str) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):  # `X | None`: optional, described as X
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(inner) == 1:
            return _type_schema(inner[0], where)
    if hint in _JSON_TYPES:
        return {"type": _JSON_TYPES[hint]}
    if origin is list:
        (item,) = typing.get_args(hint) or (str,)
        return {"type": "array", "items": _type_schema(item, where)}
    if origin is Literal:
        return {"type": "string", "enum": list(typing.get_args(hint))}
    raise ToolRegistrationError(f"{where}: unsupported parameter type {hint!r}")


_INTEGER = re.compile(r"[+-]?\d+")


def _as_declared(params: dict[str, Any], required: list[str], arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments, with the loose forms small models send taken as what they plainly mean (as
    pydantic's lax mode does): "120" for an integer, "true" for a boolean, an array sent as its
    JSON text, null for an optional argument (its default). Each such slip cost a failed call,
    a strike towards 3-Strike, and a turn; anything else is still refused by _check_types."""
    declared: dict[str, Any] = {}
    for arg, value in arguments.items():
        expected = _declared(params, arg).get("type")
        if value is None and arg not in required:
            continue
        if isinstance(value, str):
            text = value.strip()
            if expected == "integer" and _INTEGER.fullmatch(text):
                value = int(text)
            elif expected == "number" and _is_number(text):
                value = float(text)
            elif expected == "boolean" and text.lower() in ("true", "false"):
                value = text.lower() == "true"
            elif expected == "array" and text.startswith("["):
                try:
                    parsed = json.loads(text)
                except ValueError:
                    parsed = None
                value = parsed if isinstance(parsed, list) else value
        elif expected == "integer" and isinstance(value, float) and value.is_integer():
            value = int(value)
        declared[arg] = value
    return declared


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _check_types(name: str, params: dict[str, Any], arguments: dict[str, Any]) -> None:
    checks = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list}
    for arg, value in arguments.items():
        param = _declared(params, arg)
        expected = param.get("type") if isinstance(param.get("type"), str) else None
        ok = isinstance(value, checks[expected]) if expected in checks else True
        if expected in ("integer", "number") and isinstance(value, bool):
            ok = False
        if not ok:
            raise InvalidCall(f"{name}: argument {arg!r} must be of type {expected}, got {type(value).__name__}.")
        if isinstance(param.get("enum"), list) and value not in param["enum"]:
            raise InvalidCall(f"{name}: argument {arg!r} must be one of {param['enum']}.")


def _declared(params: dict[str, Any], arg: str) -> dict[str, Any]:
    """What the schema says of an argument ({} for one it lets through undeclared, or declares as
    `true`, as a tool server's schema may)."""
    param = params.get(arg)
    return param if isinstance(param, dict) else {}


_ARG_LINE = re.compile(r"^\s{2,}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and its Args: entries."""
    description: list[str] = []
    args: dict[str, str] = {}
    current: str | None = None
    section = "description"
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:"):
            section = "args"
            continue
        if stripped.endswith(":") and not line.startswith(" ") and stripped[:-1].isalpha():
            section = "other"
            continue
        if section == "description":
            description.append(line)
        elif section == "args":
            match = _ARG_LINE.match(line)
            if match:
                current = match.group(1)
                args[current] = match.group(2).strip()
            elif current and stripped:
                args[current] += " " + stripped
    return "\n".join(description).strip(), args
