"""What a user message says of the persona's facts: a value said only inside another fact's value (a name in an
e-mail address) is said with that fact, not on its own."""

from __future__ import annotations

from uxbench.sim.persona import Fact
from uxbench.sim.said import facts_said, states_hidden

FACTS = [Fact(id="name", label="name", value="Amelia"),
         Fact(id="email", label="email", value="amelia.silva7872@example.com"),
         Fact(id="user_id", label="user id", value="raj_sanchez_7340"),
         Fact(id="other", label="name", value="Raj Sanchez")]


def test_a_value_inside_another_is_said_with_it() -> None:
    assert facts_said("My email is amelia.silva7872@example.com.", FACTS) == ("email",)
    assert facts_said("I'm Amelia; my email is amelia.silva7872@example.com.", FACTS) == ("name", "email")
    assert facts_said("My user id is raj_sanchez_7340.", FACTS) == ("user_id",)  # no word boundary in an id
    assert facts_said("I am Raj Sanchez.", FACTS) == ("other",)


def test_the_leak_check_allows_a_hidden_value_only_inside_an_allowed_one() -> None:
    allowed = ["amelia.silva7872@example.com"]
    assert states_hidden("My email is amelia.silva7872@example.com.", ["Amelia"], allowed) is None
    assert states_hidden("Amelia here, my email is amelia.silva7872@example.com.", ["Amelia"], allowed)
    # a hidden value that holds an allowed one is still caught
    assert states_hidden("Reach me at amelia.silva7872@example.com", ["amelia.silva7872@example.com"], ["Amelia"])
