"""Data layer: typed cases, taxonomies, loaders and the bundled demo set. Imports nothing else of uxbench."""
