"""Train, evaluate and serve a UX judge of your own (`uxbench judge ...`)."""
