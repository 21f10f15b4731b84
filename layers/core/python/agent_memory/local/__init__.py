"""Local parity: embedded PostgreSQL, the HTTP front that speaks API Gateway events, invoke."""
