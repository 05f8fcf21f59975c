"""Run directories: manifest, crash-safe per-sample records, summaries, resume."""
