"""Task 3, UX Recovery: after the user complained, the model under test repairs the conversation."""
