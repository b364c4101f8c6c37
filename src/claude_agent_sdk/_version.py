"""Version information for claude-agent-sdk."""

__version__ = "0.2.189"
