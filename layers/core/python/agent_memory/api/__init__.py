"""HTTP entry-point helpers shared by the thin handlers in functions/: identity,
the resolver factory with errors mapped once, request schemas."""
