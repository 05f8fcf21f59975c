"""UXBench Pro: simulated users that talk to a model under test over many turns (see docs/SIMULATION.md).

Each user turn has three steps: *assess* the last reply against the persona's goal (`sim.assess`), *decide* the
next act with a pure, seeded policy (`sim.policy`), and *realise* it as text (`sim.realize`). Every party's
view of the conversation is built by one function (`sim.projection.project`), so the model under test never
sees persona text and the realiser never sees a fact it may not yet say.
"""
