"""The MCP server: ``labile serve mcp`` and its benchmark ``labile bench serve`` (``labile[mcp]``).

An agent (Claude Desktop, an IDE, any MCP client) reaches a labile memory
through the Model Context Protocol, over stdio or streamable HTTP:

* `labile_mcp.tools` builds the server on the official SDK's `MCPServer`,
  over a `labile.AsyncMemory`, with the add, search and stats tools;
* `labile_mcp.lifecycle` adds the get, list, forget and (opt-in) purge tools;
* `labile_mcp.toolkit` holds what the tool modules share;
* `labile_mcp.policy` binds a server to its namespaces and size limits;
* `labile_mcp.convert` turns chat messages into observations and hits into JSON;
* `labile_mcp.http` serves streamable HTTP behind a bearer token;
* `labile_mcp.commands` holds the command-line options and runners;
* `labile_bench.mcp_serve` measures the protocol's overhead against in-process search.

Importing this package does not import the SDK: the commands are listed
(and explain how to install it) where ``mcp`` is missing.
"""

from __future__ import annotations

from labile.plugin import RegisterCommand, hookimpl


@hookimpl
def labile_register_commands(register: RegisterCommand) -> None:
    """``labile serve mcp`` (its benchmark, ``labile bench serve``, is in `labile_bench`)."""
    from labile_mcp import commands as c

    register("serve", help="serve a memory to agents")
    register("serve mcp", run=c.run_serve_mcp, configure=c.serve_mcp_options,
             help="serve a memory over the Model Context Protocol (stdio or HTTP)")
