"""Strength benchmarks (nard_ai.reports.benchmark): the move benchmark's file round trip and checks, scoring.

Expected values come from the definitions in the module docstring: an agent judged by stored values
of its own 0-ply evaluation loses exactly 0 (it picks the play of highest value, nard_ai.reports.error_rate),
and an evaluator's equity error against labels that are its own evaluation is 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nard_ai.core.classes import CLASS_NAMES
from nard_ai.core.outcomes import cubeless_equity
from nard_ai.formats.position_id import board_from_position_id
from nard_ai.reports import benchmark as bm
from nard_ai.reports import cube_benchmark as cb
from nard_ai.search import load_agent


@pytest.fixture(scope="module")
def agent():
    return load_agent()


@pytest.fixture(scope="module")
def small(agent, tmp_path_factory):
    boards, dice = bm.sample_stratified_cases(
        {"contact": 12, "crashed": 4, "race": 6, "bearoff": 3}, agent, seed=4
    )
    bench = bm.make_move_benchmark(boards, dice, agent, meta={"referee": "default", "seed": 4})
    path = tmp_path_factory.mktemp("mb") / "moves.csv"
    bm.write_move_benchmark(path, bench)
    return bench, path


def test_the_quotas_are_met_class_by_class(small):
    bench, _ = small
    names = [CLASS_NAMES[k] for k in bench.classes]
    assert names == ["contact"] * 12 + ["crashed"] * 4 + ["race"] * 6 + ["bearoff"] * 3
    assert (bench.dice[:, 0] >= bench.dice[:, 1]).all()  # larger die first


def test_the_file_reads_back_the_same_benchmark(small):
    bench, path = small
    back = bm.read_move_benchmark(path)
    for name in ("boards", "dice", "classes", "afterstates", "owner"):
        assert np.array_equal(getattr(back, name), getattr(bench, name)), name
    assert np.allclose(back.values, bench.values, atol=5e-7)
    side = json.loads(path.with_suffix(".json").read_text())
    assert side["format"] == "nard_ai.move_benchmark" and side["cases"] == 25 and side["referee"] == "default"


def test_an_agent_judged_by_its_own_0ply_values_loses_nothing_and_pubeval_loses_some(small, agent):
    bench, _ = small
    result, table = bm.score_moves(agent, bench)
    assert result.lost.max() < 1e-6
    assert [r.name for r in table] == ["all", "contact", "crashed", "race", "bearoff"]
    assert [r.cases for r in table] == [25, 12, 4, 6, 3]
    from nard_ai.search import pubeval_agent

    result, table = bm.score_moves(pubeval_agent(), bench)
    assert result.lost.sum() > 0 and table[0].figures["mp_per_move"] == pytest.approx(
        1000 * result.lost.mean()
    )


def test_an_edited_csv_a_foreign_sidecar_and_stale_plays_are_errors(small, tmp_path):
    bench, path = small
    text = path.read_text()
    edited = tmp_path / "moves.csv"
    edited.write_text(text.replace(",0.", ",1.", 1))
    (tmp_path / "moves.json").write_text(path.with_suffix(".json").read_text())
    with pytest.raises(ValueError, match="SHA-256"):
        bm.read_move_benchmark(edited)
    (tmp_path / "moves.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ValueError, match="not a nard_ai.move_benchmark"):
        bm.read_move_benchmark(edited)
    # drop one play of case 0 and re-sign the file: the plays no longer match the legal plays
    lines = text.splitlines()
    stale = tmp_path / "stale.csv"
    stale.write_text("\n".join(lines[:1] + lines[2:]) + "\n")
    meta = json.loads(path.with_suffix(".json").read_text())
    from nard_ai.training.store import file_sha256

    meta["csv_sha256"] = file_sha256(stale)
    (tmp_path / "stale.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="not this engine's legal plays"):
        bm.read_move_benchmark(stale)
    # a malformed afterstate Position ID (column 5) on line 3 of a re-signed file: named by file and line
    bad = tmp_path / "bad.csv"
    cells = lines[2].split(",")
    cells[4] = "not-an-id"
    bad.write_text("\n".join([*lines[:2], ",".join(cells), *lines[3:]]) + "\n")
    meta["csv_sha256"] = file_sha256(bad)
    (tmp_path / "bad.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=r"bad\.csv, line 3: .*Position ID"):
        bm.read_move_benchmark(bad)
    with pytest.raises(FileNotFoundError):
        bm.read_move_benchmark(tmp_path / "none.csv")


def test_equity_errors_are_zero_against_the_agents_own_values_and_exact_against_a_known_label(small, agent):
    bench, _ = small
    probs, _ = agent.value(bench.boards)
    table = bm.score_equities(agent, bench.boards, probs)
    assert table[0].figures["equity_mae"] < 1e-6
    won = np.tile([1.0, 0.0, 0.0, 0.0, 0.0], (bench.cases, 1))  # a plain win for the side on roll: equity 1
    table = bm.score_equities(agent, bench.boards, won)
    expected = np.abs(cubeless_equity(probs.astype(np.float64)) - 1.0).mean()
    assert table[0].figures["equity_mae"] == pytest.approx(expected, abs=1e-6)


def test_a_label_folder_scores_like_an_agent_on_the_positions_both_folders_hold(tmp_path, capsys):
    """``equities REF --labels OTHER`` (README, "Which labels should the next generation learn from?"):
    LabelValues gives a folder's own labels back, so a folder scored against itself is 0 error; a folder
    holding 2 of the reference's 56 shards is scored on those 50 positions only; a folder labelling none
    of them (the table names the part), an empty one, a file, or neither --agent nor --labels is one error
    line and exit status 2."""
    import json
    import shutil
    from pathlib import Path

    from nard_ai.formats.position_id import board_from_position_id
    from nard_ai.training.store import LabelValues, read_labels

    root = Path(__file__).resolve().parent.parent / "benchmarks"
    ref = root / "contact-rollout"
    ids, labels = read_labels(ref)
    values = LabelValues(ref)
    boards = np.array([board_from_position_id(p) for p in ids[:30]], dtype=np.int8)
    probs, equity = values.value(boards)
    np.testing.assert_array_equal(probs, labels[:30])
    np.testing.assert_allclose(equity, cubeless_equity(labels[:30]))
    part = tmp_path / "part"
    part.mkdir()
    for name in ("labels-00003.csv", "labels-00003.json", "labels-00007.csv", "labels-00007.json"):
        shutil.copy(ref / name, part / name)
    assert bm.main(["equities", str(ref), "--labels", str(ref), "--labels", str(part), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    mine, partial = rows[f"labels {ref}"][0], rows[f"labels {part}"][0]
    assert (mine["class"], mine["cases"], mine["equity_mae"]) == ("all", 1400, 0.0)
    assert (partial["cases"], partial["equity_mae"]) == (50, 0.0)
    with pytest.raises(ValueError, match="does not label position"):
        LabelValues(part).value(boards[:1])  # shard 0's first position
    # the table names the part a folder scores, in the order given (a folder given twice: one row)
    assert (
        bm.main(["equities", str(ref), "--labels", str(part), "--labels", str(ref), "--labels", str(part)])
        == 0
    )
    out = capsys.readouterr().out
    assert f"labels {part} (50 of 1400)" in out and out.index(f"labels {part}") < out.index(f"labels {ref}\n")
    (tmp_path / "empty").mkdir()
    for argv, message in [
        (["--labels", str(root / "races-rollout")], "labels none of the positions"),
        # the label folders are checked before any agent is loaded or scored
        (["--agent", str(tmp_path / "no.pt"), "--labels", str(root / "races-rollout")], "labels none of"),
        (["--labels", str(tmp_path / "empty")], "holds no complete label shard"),
        (["--labels", str(ref / "labels-00000.csv")], "is a file, not a labels folder"),
        ([], "at least one --agent or --labels"),
    ]:
        assert bm.main(["equities", str(ref), *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("contact=5,over=2", "CLASS=COUNT"),
        ("contact=x", "integer"),
        ("race=-1", ">= 0"),
        ("race=0", "above 0"),
    ],
)
def test_bad_quotas_say_what_is_wrong(spec, message):
    with pytest.raises(ValueError, match=message):
        bm.parse_quotas(spec)


def test_the_command_line_reports_a_missing_file_in_one_line(capsys, tmp_path):
    assert bm.main(["moves", str(tmp_path / "none.csv"), "--agent", "default"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("benchmark: error:")


class _OwnReferee:
    """A stand-in for gnubg's program: the agent's own 0-ply cube decisions, as analyses."""

    def __init__(self, agent):
        self.agent = agent
        self.calls = 0

    def __call__(self, items, ply):
        from nard_ai.cube import cube_decision

        self.calls += 1
        return [cube_decision(b, c, 0, self.agent) for b, c in items]


def test_a_cube_benchmark_fills_its_quotas_reads_back_and_its_own_referee_agrees_fully(agent, tmp_path):
    referee = _OwnReferee(agent)
    quotas = {"no_double": 4, "double_take": 3, "double_pass": 3, "too_good": 2}
    ids, classes, analyses = cb.make_cube_benchmark(quotas, agent, seed=2, analyse=referee, chunk=50)
    groups = [cb.cube_group(a.action) for a in analyses]
    assert groups == ["no_double"] * 4 + ["double_take"] * 3 + ["double_pass"] * 3 + ["too_good"] * 2
    path = cb.write_cube_benchmark(tmp_path / "cubes.csv", ids, classes, analyses, {"referee": "own 0-ply"})
    boards, cubes, actions, meta = cb.read_cube_benchmark(path)
    assert len(boards) == 12 and meta["groups"] == quotas and actions == [a.action for a in analyses]
    assert all(c.value == 1 and c.owner == cubes[0].owner for c in cubes)  # money, cube 1 centred
    rows, confusion = cb.score_cubes(agent, boards, cubes, actions)
    assert rows[0].figures["agreement"] == 1.0
    assert confusion["double_take"] == {"no_double": 0, "double_take": 3, "double_pass": 0, "too_good": 0}
    path.write_text(path.read_text().replace("no_double,", "double_take,", 1))
    with pytest.raises(ValueError, match="SHA-256"):
        cb.read_cube_benchmark(path)


@pytest.mark.parametrize(
    ("spec", "message"), [("pass=3", "GROUP=COUNT"), ("too_good=-2", "integer"), ("too_good=0", "above 0")]
)
def test_bad_cube_quotas_say_what_is_wrong(spec, message):
    with pytest.raises(ValueError, match=message):
        cb.parse_cube_quotas(spec)


def test_the_shipped_benchmarks_read_and_match_this_engine():
    """benchmarks/moves-gnubg2.csv, moves-match-gnubg2.csv and cubes-gnubg2.csv (README, "Strength benchmarks"): their SHA-256s match
    their sidecars, and every case's stored plays are exactly the plays this engine generates."""
    root = Path(__file__).resolve().parent.parent / "benchmarks"

    def counts(bench):
        return {name: int((bench.classes == CLASS_NAMES.index(name)).sum()) for name in bm.REPORTED}

    moves = bm.read_move_benchmark(root / "moves-gnubg2.csv")
    assert moves.cases == 1200 and moves.meta["referee"] == "gnubg:2"
    assert counts(moves) == {"contact": 500, "crashed": 250, "race": 350, "bearoff": 100}
    match = bm.read_move_benchmark(root / "moves-match-gnubg2.csv")  # generation 16 against gnubg 0-ply
    assert match.cases == 1300 and match.meta["referee"] == "gnubg:2" and match.meta["opponent"] == "gnubg:0"
    assert counts(match) == {"contact": 600, "crashed": 300, "race": 300, "bearoff": 100}
    boards, cubes, actions, meta = cb.read_cube_benchmark(root / "cubes-gnubg2.csv")
    assert len(boards) == 550 and meta["groups"] == {
        "no_double": 150,
        "double_take": 150,
        "double_pass": 150,
        "too_good": 100,
    }


def test_the_shipped_race_benchmark_reads_whole():
    """benchmarks/races-rollout (README, "Strength benchmarks"): 700 races rolled out 1,296 games each by
    nard-sup256.pt at 0-ply with variance reduction; every shard matches its sidecar's SHA-256 (read_labels
    leaves out a shard that does not), every position is a race, and the labels are gnubg-order cumulative
    probabilities (win >= win_g >= win_bg, lose_g >= lose_bg, all in 0..1)."""
    import json
    from pathlib import Path

    from nard_ai.core.classes import race_flags
    from nard_ai.formats.position_id import board_from_position_id
    from nard_ai.training.store import read_labels

    root = Path(__file__).resolve().parent.parent / "benchmarks" / "races-rollout"
    ids, labels = read_labels(root)
    assert len(ids) == 700 and len(set(ids)) == 700 and labels.shape == (700, 5)
    boards = np.stack([board_from_position_id(i) for i in ids])
    assert race_flags(boards).all()
    win, win_g, win_bg, lose_g, lose_bg = labels.T
    assert (win >= win_g - 1e-9).all() and (win_g >= win_bg - 1e-9).all() and (lose_g >= lose_bg - 1e-9).all()
    assert ((0 <= labels) & (labels <= 1)).all()
    for side in sorted(root.glob("labels-*.json")):
        race = json.loads(side.read_text())["labels"]["race"]
        assert (race["method"], race["games"], race["play_ply"], race["variance_reduction"]) == (
            "rollout",
            1296,
            0,
            True,
        )


def test_early_positions_are_the_openings_self_play_keeps_meeting(tmp_path, monkeypatch):
    """benchmarks/early_positions.py (README, "Strength benchmarks"): the exclusion set of the contact and
    crashed equity benchmark. Ply 1 of every game is the starting position, so one ply gives exactly one
    position. Without exploration (epsilon 0) two plies give it and one play for each of the 15 opening rolls
    (a game never opens on a double: docs/RULES.md, section 2), 16 positions, once 300 games have met
    every roll. The script writes, for two networks, the union of what each network's games meet (the k-th
    with seed [seed, k]), each position once; the same arguments write the same shards (same SHA-256); the
    manifest names each network's SHA-256; ``positions --exclude`` reads the set, and a set generated with it
    as ``exclude`` holds none of its positions."""
    from conftest import load_script

    from nard_ai.core.board import starting_board
    from nard_ai.eval.evaluator import NetworkEvaluator
    from nard_ai.model.network import default_checkpoint_path, load_checkpoint
    from nard_ai.training.positions import generate_positions, load_keys, position_keys, read_position_set
    from nard_ai.training.store import file_sha256

    script = load_script(monkeypatch, "benchmarks/early_positions.py")
    default = default_checkpoint_path()
    rich = default.parent / "nard-rich.pt"
    evaluator = NetworkEvaluator(load_checkpoint(default).network)
    one = script.early_positions(evaluator, 50, 1, seed=5)
    np.testing.assert_array_equal(one, starting_board()[None])
    two = script.early_positions(evaluator, 300, 2, seed=5, epsilon=0.0)
    assert len(two) == 16 and len(set(position_keys(two))) == 16

    argv = [
        "--network",
        str(default),
        "--network",
        str(rich),
        "--games",
        "200",
        "--plies",
        "4",
        "--seed",
        "3",
    ]
    assert script.main(["--out", str(tmp_path / "a"), *argv]) == 0
    assert script.main(["--out", str(tmp_path / "b"), *argv]) == 0
    first, again = read_position_set(tmp_path / "a"), read_position_set(tmp_path / "b")
    assert [s["sha256"] for s in first["shards"]] == [s["sha256"] for s in again["shards"]]
    assert [n["sha256"] for n in first["networks"]] == [file_sha256(default), file_sha256(rich)]
    keys = load_keys([tmp_path / "a"])
    assert first["count"] == len(keys)  # each position once
    rich_evaluator = NetworkEvaluator(load_checkpoint(rich).network)
    union = set(position_keys(script.early_positions(evaluator, 200, 4, seed=[3, 0])))
    union |= set(position_keys(script.early_positions(rich_evaluator, 200, 4, seed=[3, 1])))
    assert keys == union
    assert script.main(["--out", str(tmp_path / "c"), "--network", str(rich), "--plies", "2", "--games",
                        "300", "--epsilon", "0", "--seed", "5"]) == 0  # fmt: skip
    assert read_position_set(tmp_path / "c")["count"] == 16

    ps = generate_positions(evaluator, 40, seed=7, proportions={"contact": 1.0}, exclude=keys)
    assert len(ps) == 40 and not keys & set(position_keys(ps.boards))
    assert ps.info["excluded_seen"] > 0

    with pytest.raises(ValueError, match="games must be an integer >= 1"):
        script.early_positions(evaluator, 0, 2, seed=1)
    with pytest.raises(ValueError, match="epsilon must be a number in"):
        script.early_positions(evaluator, 10, 2, seed=1, epsilon=float("nan"))


@pytest.mark.parametrize(
    "case, message",
    [
        ("missing network", "no checkpoint at"),
        ("not a checkpoint", "not a readable nard_ai checkpoint"),
        ("out is a set", "already holds a position set"),
        ("out is a file", "is a file, not a folder"),
        ("negative seed", "--seed must be >= 0"),
        ("out under a file", "is a file, not a folder"),
    ],
)
def test_early_positions_refuses_bad_input_in_one_line(case, message, tmp_path, monkeypatch, capsys):
    """benchmarks/early_positions.py: bad input is one error line and exit status 2 (the brief: a clear
    error, never a crash), before any game is played, and nothing is written."""
    from conftest import load_script

    from nard_ai.model.network import default_checkpoint_path

    script = load_script(monkeypatch, "benchmarks/early_positions.py")
    net, out, seed = str(default_checkpoint_path()), tmp_path / "out", "1"
    if case == "missing network":
        net = str(tmp_path / "missing.pt")
    elif case == "not a checkpoint":
        (tmp_path / "junk.pt").write_text("junk")
        net = str(tmp_path / "junk.pt")
    elif case == "out is a set":
        out.mkdir()
        (out / "positions.json").write_text("{}")
    elif case == "out is a file":
        out.write_text("a file")
    elif case == "out under a file":
        out.write_text("a file")
        out = out / "sub"
    else:
        seed = "-1"
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(SystemExit) as exit_:
        script.main(["--out", str(out), "--network", net, "--games", "5", "--plies", "2", "--seed", seed])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and message in err and "Traceback" not in err
    assert sorted(tmp_path.rglob("*")) == before


def test_the_shipped_contact_rollouts_are_the_sets_positions_rolled_out():
    """benchmarks/contact-rollout (README, "Strength benchmarks"): the labels of all 56 shards of the contact
    and crashed equity set, rolled out 1,296 games each by nard-sup256.pt at 0-ply with variance reduction (seed
    61). Label shard k is positions shard k of benchmarks/contact-positions, row for row (its sidecar names the
    positions file and its SHA-256, and the network's SHA-256 is the shipped checkpoint's); every shard matches
    its own sidecar's SHA-256 (read_labels refuses a folder with one that does not); every position is contact or crashed;
    and the labels are gnubg-order cumulative probabilities (win >= win_g >= win_bg, lose_g >= lose_bg, in
    0..1: the labeller clips luck-adjusted means to consistent probabilities)."""
    import json
    from pathlib import Path

    from nard_ai.training.positions import read_position_set, read_positions_shard
    from nard_ai.training.store import file_sha256, read_labels

    root = Path(__file__).resolve().parent.parent
    labels_dir, positions_dir = (
        root / "benchmarks" / "contact-rollout",
        root / "benchmarks" / "contact-positions",
    )
    manifest = read_position_set(positions_dir)
    assert manifest["count"] == 1400 and manifest["classes"]["contact"] == 910
    assert manifest["classes"]["crashed"] == 490
    shards = {s["file"]: s["sha256"] for s in manifest["shards"]}
    sidecars = sorted(labels_dir.glob("labels-*.json"))
    assert len(sidecars) == len(shards) == 56  # the whole set: 1,400 positions
    ids, labels = read_labels(labels_dir)
    assert len(ids) == 1400 and labels.shape == (1400, 5)
    net_sha = file_sha256(root / "checkpoints" / "nard-sup256.pt")
    rows = 0
    for side in sidecars:
        meta = json.loads(side.read_text())
        assert meta["seed"] == 61 and meta["network"]["sha256"] == net_sha
        pos = meta["positions"]
        assert shards[pos["file"]] == pos["sha256"]
        pids, _, classes = read_positions_shard(positions_dir / pos["file"], pos["sha256"])
        assert ids[rows : rows + len(pids)] == pids
        assert set(CLASS_NAMES[c] for c in classes.tolist()) <= {"contact", "crashed"}
        rows += len(pids)
        for name in ("contact", "crashed"):
            spec = meta["labels"][name]
            assert (spec["method"], spec["games"], spec["play_ply"], spec["variance_reduction"]) == (
                "rollout",
                1296,
                0,
                True,
            )
            assert spec["truncate"] is None
    win, win_g, win_bg, lose_g, lose_bg = labels.T
    assert (win >= win_g - 1e-9).all() and (win_g >= win_bg - 1e-9).all() and (lose_g >= lose_bg - 1e-9).all()
    assert ((0 <= labels) & (labels <= 1)).all()


def test_paired_figures_are_the_mean_and_interval_of_the_per_case_differences_by_class():
    """``paired_figures`` (module docstring, "Paired against a baseline"): per class the mean of the
    differences and ``1.96 std / sqrt(n)`` (sample std), worked here by hand."""
    c, r = CLASS_NAMES.index("contact"), CLASS_NAMES.index("race")
    classes = np.array([c, c, c, r, r])
    diff = np.array([0.001, 0.002, 0.003, -0.004, 0.0])
    rows = {row.name: row for row in bm.paired_figures(classes, diff, 1000.0)}
    assert list(rows) == ["all", "contact", "race"]
    assert rows["contact"].figures["paired"] == pytest.approx(2.0)  # (1 + 2 + 3) / 3 mp
    assert rows["contact"].figures["paired_ci95"] == pytest.approx(1.96 * 1.0 / np.sqrt(3))  # std 1 mp
    assert rows["race"].figures["paired"] == pytest.approx(-2.0)
    assert rows["race"].figures["paired_ci95"] == pytest.approx(1.96 * np.sqrt(8.0) / np.sqrt(2))
    assert rows["all"].figures["paired"] == pytest.approx(0.4)
    with pytest.raises(ValueError, match="4 differences but 5 cases"):
        bm.paired_figures(classes, diff[:4])


def test_moves_against_a_baseline_that_loses_nothing_pairs_to_the_agents_own_error_rate(small, capsys):
    """``moves --baseline``: the small benchmark's referee is the default's own 0-ply, so the default
    loses 0 on every case; any agent's per-case change against it is then its own loss, and the paired
    figures equal its mp/move and interval, class by class; the baseline paired with itself is 0 ± 0."""
    _, path = small
    argv = ["moves", str(path), "--agent", "pubeval", "--agent", "default", "--baseline", "default"]
    assert bm.main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert all(row["paired_against"] == "default" for rows in out.values() for row in rows)
    for row in out["pubeval"]:
        if row["cases"] > 1:
            assert row["paired"] == pytest.approx(row["mp_per_move"]), row["class"]
            assert row["paired_ci95"] == pytest.approx(row["ci95"]), row["class"]
    assert out["pubeval"][0]["paired"] > 0
    assert all(row["paired"] == 0 and row["paired_ci95"] == 0 for row in out["default"])
    assert bm.main(argv) == 0
    text = capsys.readouterr().out
    assert "paired: change against default" in text and "paired_ci95 ±" in text
    for bad, message in [("no-such.pt", "no checkpoint at no-such.pt"), ("", "an agent spec must be")]:
        assert bm.main(["moves", str(path), "--agent", "default", "--baseline", bad]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0]


def test_equities_against_a_baseline_pairs_position_by_position(capsys):
    """``equities --baseline``: the mean of per-position differences is the difference of the two mean
    absolute errors (to rounding), with an interval narrower than either error's own; label folders'
    rows carry no paired figures; --baseline without an --agent, or a bad baseline spec, is one error."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    ref = root / "benchmarks" / "contact-rollout"
    older = root / "checkpoints" / "nard-sup256.pt"  # not gen10: it shares generation 11's contact nets
    argv = ["equities", str(ref), "--agent", str(older), "--baseline", "default", "--labels", str(ref)]
    assert bm.main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert bm.main(["equities", str(ref), "--agent", "default", "--json"]) == 0
    base = {row["class"]: row for row in json.loads(capsys.readouterr().out)["default"]}
    for row in out[str(older)]:
        assert row["paired"] == pytest.approx(row["equity_mae"] - base[row["class"]]["equity_mae"], abs=1e-12)
        assert 0 < row["paired_ci95"] < row["ci95"]
    assert "paired" not in out[f"labels {ref}"][0]
    for bad, message in [
        (["--baseline", "default", "--labels", str(ref)], "give at least one --agent"),
        (["--agent", "default", "--baseline", "no-such.pt"], "no checkpoint at no-such.pt"),
        (["--agent", "default", "--baseline", ""], "an agent spec must be"),
        # pubeval ranks plays by a score of its own: it has no equity to compare with the labels
        (["--agent", "default", "--baseline", "pubeval"], "no real probabilities"),
        (["--agent", "pubeval"], "no real probabilities"),
    ]:
        assert bm.main(["equities", str(ref), *bad]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0]


def test_the_cube_names_benchmark_exported_before_the_split_still_import_from_it():
    """The cube benchmark moved to nard_ai.reports.cube_benchmark; the names benchmark.py exported
    (its __all__ before the move) are still there, the same objects."""
    from nard_ai.reports import cube_benchmark

    for name in (
        "CUBES_FORMAT",
        "CUBE_GROUPS",
        "cube_group",
        "make_cube_benchmark",
        "read_cube_benchmark",
        "score_cubes",
    ):
        assert name in bm.__all__ and getattr(bm, name) is getattr(cube_benchmark, name)


def _strict_json(text: str):
    """json.loads refusing NaN and infinities, as strict parsers (RFC 8259) do."""

    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_json_writes_a_figure_with_no_value_as_null(agent, tmp_path, capsys):
    """A class of one case has no 95% interval (a sample std needs two): ``--json`` writes it as null,
    never NaN, which is not JSON; the text table still prints it (as nan)."""
    boards, dice = bm.sample_stratified_cases({"contact": 2, "race": 1}, agent, seed=5)
    bench = bm.make_move_benchmark(boards, dice, agent, meta={"referee": "default", "seed": 5})
    path = tmp_path / "one.csv"
    bm.write_move_benchmark(path, bench)
    argv = ["moves", str(path), "--agent", "default", "--baseline", "default"]
    assert bm.main([*argv, "--json"]) == 0
    rows = {row["class"]: row for row in _strict_json(capsys.readouterr().out)["default"]}
    assert rows["race"]["cases"] == 1
    assert rows["race"]["ci95"] is None and rows["race"]["paired_ci95"] is None
    assert rows["race"]["mp_per_move"] == 0.0  # the referee is the agent itself: nothing lost
    assert rows["contact"]["ci95"] == 0.0 and rows["all"]["paired"] == 0.0
    assert bm.main(argv) == 0
    assert "nan" in capsys.readouterr().out


def test_every_agent_spec_is_checked_before_any_is_scored(small, monkeypatch, capsys):
    """A bad --agent fails at once with one error line, not after the agents before it are scored; a
    spec given twice is refused (the table names rows by spec, so one would hide the other)."""
    _, path = small

    def no_scoring(*_args, **_kw):
        raise AssertionError("scored before every spec was checked")

    monkeypatch.setattr(bm, "score_moves", no_scoring)
    monkeypatch.setattr(bm, "score_cubes", no_scoring)
    monkeypatch.setattr(bm, "equity_errors", no_scoring)
    from pathlib import Path

    ref = str(Path(__file__).resolve().parent.parent / "benchmarks" / "races-rollout")

    cubes = Path(__file__).resolve().parent.parent / "benchmarks" / "cubes-gnubg2.csv"
    for argv, message in [
        (["moves", str(path), "--agent", "default", "--agent", "no-such.pt"], "no checkpoint at no-such.pt"),
        (["moves", str(path), "--agent", "pubeval", "--agent", "pubeval"], "--agent pubeval is given twice"),
        (["cubes", str(cubes), "--agent", "default", "--agent", "no-such.pt"], "no checkpoint at no-such.pt"),
        (["cubes", str(cubes), "--agent", "default", "--agent", "default"], "--agent default is given twice"),
        # pubeval has no equity: refused when made, not after the agents before it are scored
        (["equities", ref, "--agent", "default", "--agent", "pubeval"], "no real probabilities"),
        (["equities", ref, "--agent", "default", "--baseline", "pubeval"], "no real probabilities"),
    ]:
        assert bm.main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], argv


def test_pip_edges_parse_and_refuse_with_a_clear_error():
    assert bm.parse_pip_edges("150,200, 250,300") == (150, 200, 250, 300)
    assert bm.parse_pip_edges("750") == (750,)
    for bad, message in [
        ("", "comma-separated whole numbers"),
        ("150,abc", "comma-separated whole numbers"),
        ("-5", "comma-separated whole numbers"),
        ("\u00b2", "comma-separated whole numbers"),  # '²' is a digit to str.isdigit, not a number
        ("\u0661\u0665\u0660", "comma-separated whole numbers"),  # Arabic-Indic 150: ASCII digits only
        ("9" * 5000, "comma-separated whole numbers"),  # no 5000-digit int conversion
        ("200,150", "strictly ascending"),
        ("150,150", "strictly ascending"),
        ("0,100", "edge 0 is outside 1 .. 750"),
        ("100,751", "edge 751 is outside 1 .. 750"),
    ]:
        with pytest.raises(ValueError, match=message):
            bm.parse_pip_edges(bad)


def test_pip_groups_band_positions_by_both_sides_pips_added():
    """The starting position's pip total is 2 x 167 = 334 (RULES.md section 1); one mover checker on
    the bar and the opponent's on its 1-point (all else borne off) is 25 + 1 = 26: half-open bands."""
    from nard_ai.core.board import BAR, starting_board

    start = starting_board()
    late = np.zeros(26, np.int8)
    late[BAR], late[24] = 1, -1  # index 24 is the opponent's 1-point: 1 pip
    boards = np.stack([start, late, start])
    groups = bm.pip_groups(boards, (26, 334))
    assert [name for name, _ in groups] == ["pips<26", "pips 26-333", "pips>=334"]
    assert [name for name, _ in bm.pip_groups(boards, (26, 27, 334))][:3] == [
        "pips<26",
        "pips 26",
        "pips 27-333",
    ]
    assert [mask.tolist() for _, mask in groups] == [[False] * 3, [False, True, False], [True, False, True]]
    assert bm.pip_groups(boards, ()) == []


def test_equities_pips_rows_are_the_figures_of_the_band_alone(capsys):
    """``equities --pips``: each band's row equals the table of that band's positions scored alone, the
    bands' cases add up to all, and paired rows get the same bands."""
    from pathlib import Path

    from nard_ai.agents import agent_from_spec
    from nard_ai.training.store import read_labels

    root = Path(__file__).resolve().parent.parent
    ref = root / "benchmarks" / "contact-rollout"
    argv = [
        "equities",
        str(ref),
        "--agent",
        "default",
        "--baseline",
        "default",
        "--pips",
        "200,300",
        "--json",
    ]
    assert bm.main(argv) == 0
    rows = {row["class"]: row for row in _strict_json(capsys.readouterr().out)["default"]}
    bands = ["pips<200", "pips 200-299", "pips>=300"]
    assert [name for name in rows if name.startswith("pips")] == bands
    assert sum(rows[b]["cases"] for b in bands) == rows["all"]["cases"] == 1400
    ids, labels = read_labels(ref)
    boards = np.array([board_from_position_id(p) for p in ids], dtype=np.int8)
    mask = dict(bm.pip_groups(boards, (200, 300)))["pips>=300"]
    alone = bm.score_equities(agent_from_spec("default", seed=1), boards[mask], labels[mask])[0]
    assert rows["pips>=300"]["cases"] == alone.cases
    # float32 network outputs differ in the last bits with the batch they are evaluated in
    assert rows["pips>=300"]["equity_mae"] == pytest.approx(alone.figures["equity_mae"], abs=1e-6)
    assert rows["pips>=300"]["paired"] == 0.0
    for bad, message in [("300,200", "strictly ascending"), ("", "comma-separated whole numbers")]:
        assert bm.main(["equities", str(ref), "--agent", "default", "--pips", bad]) == 2
        assert message in capsys.readouterr().err


def test_moves_pips_rows_split_the_cases_by_pip_total(small, capsys):
    bench, path = small
    assert bm.main(["moves", str(path), "--agent", "pubeval", "--pips", "100,250", "--json"]) == 0
    rows = _strict_json(capsys.readouterr().out)["pubeval"]
    bands = [row for row in rows if row["class"].startswith("pips")]
    totals = bm.pip_count(bench.boards).sum(axis=1)
    expected = {"pips<100": (totals < 100).sum(), "pips 100-249": ((totals >= 100) & (totals < 250)).sum(),
                "pips>=250": (totals >= 250).sum()}  # fmt: skip
    assert {row["class"]: row["cases"] for row in bands} == {k: int(v) for k, v in expected.items() if v}
    assert sum(row["cases"] for row in bands) == bench.cases


def test_make_moves_takes_its_cases_from_games_against_an_opponent(agent, tmp_path, capsys):
    """``make-moves --opponent SPEC``: the cases are those of ``--agent``'s games against SPEC
    (:func:`sample_stratified_cases` with that opponent, both sides' turns), the sidecar names the
    opponent, and a bad opponent spec is one error line and exit 2, with no file written."""
    from nard_ai.agents import agent_from_spec
    from nard_ai.model.network import default_checkpoint_path
    from nard_ai.training.store import file_sha256

    out = tmp_path / "vs.csv"
    argv = ["make-moves", "--out", str(out), "--agent", "default", "--referee", "default:0", "--seed", "2"]
    assert bm.main([*argv, "--opponent", "pubeval", "--quotas", "contact=4,race=2"]) == 0
    bench = bm.read_move_benchmark(out)
    assert bench.meta["opponent"] == "pubeval" and bench.meta["sampled_by"] == "default"
    default = Path(default_checkpoint_path())  # "default" changes with each generation: the digest says which
    assert bench.meta["sampled_by_network"] == {"file": default.name, "sha256": file_sha256(default)}
    assert "opponent_network" not in bench.meta  # pubeval has no checkpoint
    boards, dice = bm.sample_stratified_cases(
        {"contact": 4, "race": 2}, agent, seed=2, opponent=agent_from_spec("pubeval")
    )
    assert np.array_equal(bench.boards, boards) and np.array_equal(bench.dice, np.sort(dice, 1)[:, ::-1])
    selfplay, _ = bm.sample_stratified_cases({"contact": 4, "race": 2}, agent, seed=2)
    assert not np.array_equal(selfplay, boards)  # pubeval's plays lead elsewhere
    capsys.readouterr()
    bad = tmp_path / "bad.csv"
    for spec in ("no-such-agent", ""):  # an empty spec is an error too, not self-play
        assert bm.main(["make-moves", "--out", str(bad), "--opponent", spec, "--quotas", "race=1"]) == 2
        assert capsys.readouterr().err.startswith(f"benchmark: error: --opponent {spec!r}: ")
        assert not bad.exists()


def _resigned(src: Path, dst: Path, edit) -> Path:
    """A copy of the benchmark CSV ``src`` at ``dst`` with ``edit(list of CSV lines)`` applied, and its sidecar
    re-signed with the copy's SHA-256: a file damaged by its maker, which the SHA-256 check cannot catch."""
    from nard_ai.training.store import file_sha256

    lines = src.read_text().splitlines()
    edit(lines)
    dst.write_text("\n".join(lines) + "\n")
    meta = json.loads(src.with_suffix(".json").read_text())
    meta["csv_sha256"] = file_sha256(dst)
    dst.with_suffix(".json").write_text(json.dumps(meta))
    return dst


def _set_cell(line: int, column: int, value: str):
    def edit(lines: list[str]) -> None:
        cells = lines[line - 1].split(",")
        cells[column] = value
        lines[line - 1] = ",".join(cells)

    return edit


@pytest.mark.parametrize("equity", ["nan", "NaN", "inf", "-inf", "3.5", "-3.000001", "", "0.1x"])
def test_a_bad_equity_in_a_move_benchmark_is_an_error_naming_file_and_line(equity, tmp_path, capsys):
    """Issue: a move benchmark with case 0's equities set to nan (re-signed) scored ``mp_per_move nan`` for
    every row. An equity must be a finite cubeless money equity, at most a backgammon: -3 .. 3 ppg (the
    shipped file's lie in -3.0 .. 2.19); anything else is a damaged file: one error line, status 2."""
    root = Path(__file__).resolve().parent.parent / "benchmarks"
    bad = _resigned(root / "moves-gnubg2.csv", tmp_path / "v2.csv", _set_cell(2, 5, equity))
    with pytest.raises(ValueError, match=r"v2\.csv, line 2: bad equity"):
        bm.read_move_benchmark(bad)
    assert bm.main(["moves", str(bad), "--agent", "pubeval"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"benchmark: error: {bad}, line 2: bad equity {equity!r} (must be a number in -3 .. 3)"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_set_cell(3, 0, "x"), r"line 3: bad case 'x' \(must be a whole number >= 0\)"),
        (_set_cell(2, 0, "-1"), r"line 2: bad case '-1'"),
        (_set_cell(2, 2, "70"), r"line 2: dice '70' must be two digits 1-6"),
    ],
)
def test_a_bad_case_number_or_roll_in_a_move_benchmark_is_an_error_naming_file_and_line(
    edit, message, small, tmp_path
):
    """Before: int('x') failed with Python's own words and no file, and dice '70' passed as 7 and 0."""
    _, path = small
    with pytest.raises(ValueError, match=r"moves\.csv, " + message):
        bm.read_move_benchmark(_resigned(path, tmp_path / "moves.csv", edit))


@pytest.mark.parametrize(("column", "name"), [(3, "no-double"), (4, "double/take"), (5, "double/pass")])
@pytest.mark.parametrize("value", ["nan", "inf", "6.5"])
def test_a_bad_equity_in_a_cube_benchmark_is_an_error_naming_file_and_line(
    column, name, value, tmp_path, capsys
):
    """A cube benchmark's three cubeful equities (ppg per unit of the cube before the decision) are finite
    and at most a backgammon at a doubled cube: -6 .. 6 (the shipped file's lie in -0.30 .. 3.56)."""
    root = Path(__file__).resolve().parent.parent / "benchmarks"
    bad = _resigned(root / "cubes-gnubg2.csv", tmp_path / "cubes.csv", _set_cell(4, column, value))
    with pytest.raises(ValueError, match=rf"cubes\.csv, line 4: bad {name} equity '{value}'"):
        cb.read_cube_benchmark(bad)
    assert bm.main(["cubes", str(bad), "--agent", "pubeval"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1
        and err[0].startswith("benchmark: error: ")
        and "(must be a number in -6 .. 6)" in err[0]
    )


@pytest.mark.parametrize("sidecar", ["not json", "[1, 2]", "\udcff"])
def test_an_unreadable_sidecar_is_an_error_naming_it(sidecar, small, tmp_path):
    """A sidecar that is not JSON, not a JSON object or not UTF-8 names itself (a list ended in an
    AttributeError traceback before)."""
    _, path = small
    csv = tmp_path / "moves.csv"
    csv.write_bytes(path.read_bytes())
    csv.with_suffix(".json").write_bytes(sidecar.encode("utf-8", "surrogateescape"))
    with pytest.raises(ValueError, match=r"moves\.json: not a"):
        bm.read_move_benchmark(csv)


def test_a_bad_probability_in_a_label_folder_is_one_error_line(tmp_path, capsys):
    """The equity benchmark's label folders are read by nard_ai.training.store, which already refuses a
    probability that is NaN or outside 0 .. 1 by file and line: ``equities`` exits with one line, status 2."""
    root = Path(__file__).resolve().parent.parent / "benchmarks" / "contact-rollout"
    folder = tmp_path / "labels"
    folder.mkdir()
    for value in ("nan", "1.5"):
        bad = _resigned(root / "labels-00003.csv", folder / "labels-00003.csv", _set_cell(3, 2, value))
        assert bm.main(["equities", str(folder), "--labels", str(root)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"benchmark: error: {bad}, line 3: probabilities must lie in [0, 1]"]
