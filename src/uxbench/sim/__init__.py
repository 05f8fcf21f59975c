"""UXBench Pro: simulated users (personas, policy, realisers, sessions) and the checks of the simulator itself."""
