"""Providers, one module each. They register themselves in `uxbench.models.registry` by name."""
