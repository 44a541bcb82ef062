"""access: one decision for every write, per role and per run owner; a laptop allows everything."""
import pytest

from evaluator.team.access import ACTIONS, Access
from evaluator.config import RolesConfig
from evaluator.errors import NotAllowed

ROLES = RolesConfig(viewers=("*",), evaluators=("eve@example.com", "ed@example.com", "ann@example.com"),
                    admins=("ann@example.com",))
VIEWER, EVE, ED, ADMIN = "vera@example.com", "eve@example.com", "ed@example.com", "ann@example.com"

# (user, action, run owner, allowed)
CASES = [
    (VIEWER, "run", None, False), (VIEWER, "generate", None, False), (VIEWER, "review", None, False),
    (VIEWER, "resume", VIEWER, False),  # owning a run (a CI job wrote it) does not make a viewer an evaluator
    (VIEWER, "rename", None, False), (VIEWER, "delete", None, False), (VIEWER, "stop", VIEWER, False),
    (EVE, "run", None, True), (EVE, "generate", None, True), (EVE, "review", None, True),
    (EVE, "resume", EVE, True), (EVE, "rescore", EVE, True), (EVE, "stop", EVE, True),
    (EVE, "resume", ED, False), (EVE, "rescore", ED, False), (EVE, "stop", ED, False),
    (EVE, "stop", None, False), (EVE, "rename", EVE, False), (EVE, "delete", EVE, False),
    (EVE, "resume", "EVE@Example.com", True),  # an owner stored before names were normalised
    (ADMIN, "resume", ED, True), (ADMIN, "rescore", ED, True), (ADMIN, "stop", ED, True),
    (ADMIN, "rename", ED, True), (ADMIN, "delete", ED, True), (ADMIN, "review", None, True),
    (None, "run", None, False), (None, "stop", None, False),  # nobody signed in
]


@pytest.mark.parametrize("user, action, owner, allowed", CASES)
def test_who_may_do_what_in_team_mode(user, action, owner, allowed):
    access = Access(user, ROLES, team=True)
    assert access.may(action, owner) is allowed
    if allowed:
        access.check(action, owner)
    else:
        with pytest.raises(NotAllowed, match="may not"):
            access.check(action, owner)


def test_every_action_is_in_the_table_and_an_unknown_one_is_never_allowed():
    assert set(ACTIONS) == {"run", "generate", "review", "resume", "rescore", "stop", "rename", "delete"}
    with pytest.raises(KeyError):
        Access(ADMIN, ROLES, team=True).may("drop_database")


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_a_laptop_allows_everything(action):
    assert Access(None).may(action, "someone-else")


def test_the_message_says_who_may():
    with pytest.raises(NotAllowed, match="only the run's owner and admins"):
        Access(EVE, ROLES, team=True).check("stop", ED)
    with pytest.raises(NotAllowed, match="vera@example.com may not save reviews.*evaluator role"):
        Access(VIEWER, ROLES, team=True).check("review")
