"""Tool servers: programs that give the agent more tools over the Model Context Protocol (MCP).

A person who already uses MCP servers with another client (a database's, an issue tracker's, their
company's documentation) names them once (config.py); each session's first request lists their
tools and records them (core/events.py ServerToolsListed), so that the tools are part of the
byte-stable prefix from then on, whatever the server offers later. A server runs as a child
process per work folder, started when first needed (pool.py), and speaks JSON-RPC over its
standard streams (client.py). Its tools' results are untrusted data, as web pages are (tools.py).
"""
