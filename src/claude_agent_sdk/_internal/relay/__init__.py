"""The opt-in relay between Claude Code and the platform's API
(``tool_fields_relay``) that adds SDK tools' ``strict`` and ``input_examples``
to the requests; docs/relay.md, "How it is built", maps its modules."""
