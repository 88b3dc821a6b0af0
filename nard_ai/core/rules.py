"""Rule settings (RULES.md sections 3-7) as data.

The standard rules are the default. The Iranian house rule of RULES.md
section 7 (no hit-and-continue in the mover's home board) is opt-in, in the
two forms the seeds give: seed 000's (a checker that hit a blot on a
home-board point may not move on from that point in the same turn) and seed
002's (it may move on, but not onto a point the mover already holds). In both
forms the rule only removes plays when at least one legal play respects it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# Integer codes passed to the compiled kernels.
NO_HIT_AND_CONTINUE_OFF = 0
NO_HIT_AND_CONTINUE_000 = 1  # seed 000: the hitter may not leave the point it hit on
NO_HIT_AND_CONTINUE_002 = 2  # seed 002: the hitter may not continue onto a point the mover holds

_CODES = {None: NO_HIT_AND_CONTINUE_OFF, "000": NO_HIT_AND_CONTINUE_000, "002": NO_HIT_AND_CONTINUE_002}


@dataclass(frozen=True)
class Rules:
    """Which rules the legal-play generator applies.

    Attributes:
        no_hit_and_continue: ``None`` for standard backgammon (RULES.md
            sections 3-6, the default); ``"000"`` for the Iranian rule of
            seed 000 (a checker that hits a blot on one of the mover's points
            1-6 may not move off that point later in the same turn); ``"002"``
            for seed 002's narrower form (that checker may not move onto a
            point holding the mover's checkers). RULES.md section 7: a play
            respects the rule if at least one of its move sequences does, and
            when no legal play respects it, all stay legal.
    """

    no_hit_and_continue: Literal["000", "002"] | None = None

    def __post_init__(self) -> None:
        value = self.no_hit_and_continue
        if not (value is None or isinstance(value, str)) or value not in _CODES:
            raise ValueError(
                f"no_hit_and_continue must be None, '000' or '002', got {self.no_hit_and_continue!r}"
            )

    @staticmethod
    def check(rules: object) -> Rules:
        """Return ``rules`` if it is a :class:`Rules`, else raise ValueError (for public entry points)."""
        if not isinstance(rules, Rules):
            raise ValueError(
                f"rules must be a nard_ai.Rules, e.g. Rules(no_hit_and_continue='000'); got {rules!r}"
            )
        return rules

    @property
    def code(self) -> int:
        """The integer code of this setting for the compiled kernels."""
        return _CODES[self.no_hit_and_continue]

    @classmethod
    def standard(cls) -> Rules:
        """Standard backgammon (the international rules, seed 001)."""
        return cls()

    @classmethod
    def iranian(cls, form: Literal["000", "002"] = "000") -> Rules:
        """The Iranian no-hit-and-continue variant (RULES.md section 7)."""
        return cls(no_hit_and_continue=form)
