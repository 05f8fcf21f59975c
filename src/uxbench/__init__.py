"""uxbench: measure how AI assistants make their users feel.

Imports here stay minimal so that `uxbench --help` starts fast; import sub-packages directly.
"""

__version__ = "0.1.0"
