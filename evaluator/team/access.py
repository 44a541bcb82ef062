"""Who may do what: the one decision every write asks before it happens (README "Team mode").

    action    who may
    run       evaluators and admins (start a run, the sample run included)
    generate  evaluators and admins
    review    evaluators and admins (reviews change agreement figures and corrected means)
    resume    the run's owner and admins
    rescore   the run's owner and admins
    stop      the run's owner and admins
    rename    admins
    delete    admins

On a laptop (no team mode) everything is allowed: the person at the keyboard owns every run. The
check sits where the write happens (the run starter, the review store, the history's rename and
delete), so a button drawn by mistake, or a request crafted without one, still cannot write.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

from ..config import Config, RolesConfig
from ..errors import NotAllowed
from .identity import IdentityRefused, normalise

OWNER = "owner"  # the action belongs to the run's owner (and to admins)
ACTIONS: Dict[str, str] = {"run": "evaluator", "generate": "evaluator", "review": "evaluator",
                           "resume": OWNER, "rescore": OWNER, "stop": OWNER, "rename": "admin", "delete": "admin"}
VERBS = {"run": "start runs", "generate": "generate test sets", "review": "save reviews",
         "resume": "resume this run", "rescore": "re-score this run", "stop": "stop this run",
         "rename": "rename runs", "delete": "delete runs"}


@dataclass(frozen=True)
class Access:
    """One user's standing: `user` None means nobody is signed in. `team` False: a laptop, all allowed."""

    user: Optional[str]
    roles: RolesConfig = RolesConfig()
    team: bool = False

    @classmethod
    def of(cls, config: Config, user: Optional[str]) -> "Access":
        return cls(user=user, roles=config.roles, team=config.team)

    def may(self, action: str, owner: Optional[str] = None) -> bool:
        """Whether this user may do `action` (to a run owned by `owner`, for owner actions)."""
        needed = ACTIONS[action]  # KeyError for an unknown action: a bug, never "allowed"
        if not self.team:
            return True
        if self.user is None:
            return False
        if needed != OWNER:
            return self.roles.allows(self.user, needed)
        if self.roles.allows(self.user, "admin"):
            return True
        return _same(owner, self.user) and self.roles.allows(self.user, "evaluator")

    def check(self, action: str, owner: Optional[str] = None) -> None:
        """NotAllowed (saying what and why) unless this user may do `action`."""
        if not self.may(action, owner):
            who = self.user or "nobody signed in"
            rule = "only the run's owner and admins may" if ACTIONS[action] == OWNER else \
                f"that needs the {ACTIONS[action]} role"
            raise NotAllowed(f"{who} may not {VERBS[action]} ({rule}); ask this dashboard's admins")


LAPTOP_ACCESS = Access(user=None)


def _same(owner: Optional[str], user: str) -> bool:
    """An owner recorded before identities were normalised ("Alice@…") is still Alice's."""
    if not owner:
        return False
    try:
        return normalise(owner) == user
    except IdentityRefused:
        return False
