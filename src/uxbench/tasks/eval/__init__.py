"""Task 2, UX Eval: the model under test answers failure-prone queries; a judge scores each reply."""
