"""The routes of `uxbench view`, one module per page."""
