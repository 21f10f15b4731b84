"""HTTP entry-point helpers shared by the thin handlers in functions/: identity, the resolver
factory with errors mapped once (http.py), every route's request and response models (models/),
and the merged OpenAPI document (openapi.py)."""
