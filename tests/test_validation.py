"""Bad input to the public rules-core API raises ValueError with a message saying what is wrong.

The brief: "Bad input gets a clear error, never a crash or a silent wrong
answer". Each case below was once a silent wrong answer or another exception.
"""

from __future__ import annotations

import numpy as np
import pytest

import nard_ai as na

BOARD = na.starting_board()
RNG = np.random.default_rng(0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: na.pip_count(np.full(26, 15)), "bar"),
        (lambda: na.swap_sides(np.full(26, 100)), "only 15"),
        (lambda: na.swap_sides(np.arange(5)), "shape"),
        (lambda: na.swap_sides(BOARD + 0.5), "integer"),
        (lambda: na.swap_sides("abc"), "shape"),
        (lambda: na.pip_count([1, 2, 3]), "shape"),
        # A float board is refused even when whole: 1e20 once became 0 in a cast.
        (lambda: na.legal_plays(np.where(np.arange(26) == 10, 1e20, BOARD.astype(float)), (3, 1)), "integer"),
        (lambda: na.legal_plays(np.array([-(2**63)] + [0] * 25), (3, 1)), "only 15"),
        (lambda: na.legal_plays(np.array([2**64 - 1] + [0] * 25, dtype=np.uint64), (3, 1)), "only 15"),
        (lambda: na.legal_plays(BOARD, (3, 1), rules="000"), "Rules"),
        (lambda: na.legal_plays(BOARD, (3, 1), rules=None), "Rules"),
        (lambda: na.random_games(4, RNG, rules="000"), "Rules"),
        (lambda: na.Rules(no_hit_and_continue=[]), "no_hit_and_continue"),
        (lambda: na.new_games(2, None), "Generator"),
        (lambda: na.new_games(2.5, RNG), "integer"),
        (lambda: na.random_games(2.5, RNG), "integer"),
        (lambda: na.legal_plays(BOARD, (3, 1, 2)), "dice"),
        (lambda: na.legal_plays(BOARD, 3), "dice"),
        (lambda: na.legal_plays(BOARD, None), "dice"),
        (lambda: na.legal_plays(BOARD, np.array([[3, 1], [2, 2]])), "one roll"),
        (lambda: na.legal_plays(BOARD, (3.0, 1.0)), "integers"),
        (lambda: na.legal_plays(BOARD, (0, 1)), "1..6"),
    ],
)
def test_bad_input_raises_value_error_naming_the_problem(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_step_rejects_an_afterstate_that_moves_opponent_checkers():
    """RULES.md §4: the opponent's checkers only leave their points when hit (to the bar)."""
    state = na.new_games(1, np.random.default_rng(1))
    after = state.boards.copy()
    after[0, 1] = 0  # the opponent's two back checkers vanish
    with pytest.raises(ValueError, match="not a play"):
        na.step(state, after, np.random.default_rng(1))
    with pytest.raises(ValueError, match="Generator"):
        na.step(state, state.boards, "x")


def test_agents_are_exported_lazily_without_importing_torch_for_the_rules_core():
    import subprocess
    import sys

    code = "import sys, nard_ai; assert 'torch' not in sys.modules; nard_ai.load_agent; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"
    probs, equity = na.load_agent().evaluate(na.starting_board()[None])
    assert probs.shape == (1, 5) and equity.shape == (1,)
