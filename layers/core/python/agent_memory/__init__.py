"""Agent Memory Service: governed long-term memory for customer-facing AI agents."""

__version__ = "0.1.0"
