"""The opt-in relay between Claude Code and the Messages API (``tool_fields_relay``).

- ``lifecycle``: settings from the environment, start/stop, how the CLI is
  pointed at the relay (``ToolFieldsRelay``, ``prepare_for_cli``);
- ``server``: the loopback HTTP server and the forwarder;
- ``proxy`` and ``tls``: proxy mode (CONNECT for ``api.anthropic.com`` only,
  under a per-session CA);
- ``rewrite``: adds ``strict`` / ``input_examples`` to a request body;
- ``connections``: the outbound connection pool.
"""
