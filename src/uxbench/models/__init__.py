"""Model layer: the provider protocol (`api.py`), providers (one module each) and their registry."""
