"""Fakes for unit tests: in-memory stand-ins that pass the same contract tests as the real adapters."""
