"""Extractors behind the `Extractor` port: transcript -> candidate memories."""

from agent_memory.adapters.extractors.rules import RulesExtractor

__all__ = ["RulesExtractor"]
