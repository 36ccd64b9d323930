"""Tripane's agent core: asyncio only, no Qt. Usable from the GUI, the CLI and tests."""

__version__ = "0.1.0"
