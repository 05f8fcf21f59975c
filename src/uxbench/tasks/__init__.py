"""Tasks turn a case into model calls and a `SampleRecord`, and records into a summary."""
