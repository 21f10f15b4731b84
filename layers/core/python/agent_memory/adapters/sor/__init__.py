"""System-of-record adapters: HTTP (production) and a local table (development)."""
