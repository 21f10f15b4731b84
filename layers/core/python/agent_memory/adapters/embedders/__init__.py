"""Embedders behind the `Embedder` port."""
