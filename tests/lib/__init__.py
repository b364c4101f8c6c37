"""The stand-ins that ``tests/`` and ``tools/`` share, imported as
``tests.lib.<module>`` (the repository root is on ``sys.path``: pytest's
``pythonpath``, ``python -m tools.<name>`` from the root). Nothing here
imports pytest, so the tools can run where it is not installed.

- ``fake_api``: the stand-in Messages API the real CLI talks to (scripted
  turns: ``text``, ``tool_use``, ``broken_tool_use``, ``api_error``,
  ``loading``; every request recorded), or a recording proxy to the real API.
- ``relay_upstream``: the stand-in upstream behind the relay, one configurable
  ``Upstream`` for the relay's tests (plain or HTTPS, recorded requests,
  slow/gzip/big streams, a tunnelling forward proxy), first party
  (``Upstream.first_party``: ``api.anthropic.com`` through a proxy, served by
  ``fake_api``) and the relay bench (paced and bulk streams, nothing recorded).
- ``cli_harness``: one query through the real Claude Code CLI, recording the
  SDK <-> CLI, CLI <-> API and hook boundaries.
- ``cli_peer``: the CLI's side of an SDK MCP server's JSON-RPC, in process:
  the one stand-in CLI peer of the tests and the benches (``tools/bench*.py``).
- ``cases``: the case-law search tool (schema, examples, the fork's fields)
  and ``LegalServer``, the SDK MCP server that serves it.
- ``pydantic_cases``: the pydantic models of the pydantic-input-models tests.
- ``loopback``: the threaded stdlib HTTP(S) server on 127.0.0.1 that
  ``fake_api`` and ``relay_upstream`` run on.
- ``tls``: throwaway certificate authorities for loopback TLS and for a
  TLS-intercepting stand-in of a public host.
"""
