"""Training data (nard_ai.training): formats, gnubg's position classes, generation, labels, resuming, errors.

Positions use ``pos(me=..., opp=...)``, each side in its own numbering
(RULES.md §1); the side ``me`` is on roll and has not rolled yet. The
classes are checked on hand-built positions against gnubg's
``ClassifyPosition`` rule as eval.c writes it, and on self-play positions
against gnubg itself (``gnubg_nn.classify``, when installed). Labels of
positions whose value is known exactly (finished games, bear-offs, a last
roll) are checked against that value.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from nard_ai.core.board import pos, starting_board, swap_sides
from nard_ai.eval.bearoff import bearoff_probs
from nard_ai.eval.evaluator import NetworkEvaluator
from nard_ai.formats.position_id import board_from_position_id, position_id
from nard_ai.model.network import default_checkpoint_path, load_checkpoint, result_probs
from nard_ai.training import labels as labels_mod
from nard_ai.training.cli import main
from nard_ai.training.labels import (
    LabelMethod,
    label_boards,
    make_plan,
    parse_mix,
    plan_tasks,
    rollout_seed,
    run_labels,
    shard_complete,
)
from nard_ai.training.positions import (
    BEAROFF,
    CLASS_NAMES,
    CONTACT,
    CRASHED,
    OVER,
    RACE,
    PositionSet,
    classify_positions,
    crashed_sides,
    generate_positions,
    load_keys,
    parse_proportions,
    position_keys,
    read_position_set,
    read_positions_shard,
    write_position_set,
)
from nard_ai.training.store import (
    LABEL_COLUMNS,
    consistent_probs,
    format_labels_csv,
    parse_labels_csv,
    parse_positions_csv,
    read_labels,
)

# --------------------------------------------------------------------------- fixtures

#: The side on roll has piled ten checkers on its 1-point: gnubg's crashed rule, a1 = 10 > 1 and
#: tot = 15 <= 6 + 10. Its three checkers on its 20-point are behind the opponent's: contact.
CRASHED_BOARD = pos(me={1: 10, 2: 2, 20: 3}, opp={6: 5, 8: 3, 13: 5, 18: 2})
#: Crashed by the count alone: six checkers left (tot <= 6), still in contact.
CRASHED_FEW = pos(me={20: 3, 3: 3}, opp={6: 5, 8: 3, 13: 5, 18: 2})
#: Crashed with a1 <= 1: ten checkers on the 2-point, tot = 15 <= 6 + a2 - 1.
CRASHED_DEEP_TWO = pos(me={2: 10, 20: 5}, opp={6: 5, 8: 3, 13: 5, 18: 2})
#: Not crashed: a1 = 1, a2 = 9, tot = 15 > 6 + 9 - 1.
NOT_CRASHED = pos(me={1: 1, 2: 9, 20: 5}, opp={6: 5, 8: 3, 13: 5, 18: 2})
#: No contact, not all home: a race.
RACE_BOARD = pos(me={6: 5, 8: 5, 10: 5}, opp={6: 5, 8: 5, 10: 5})
#: Both sides home, none on the bar: the bear-off database's range.
BEAROFF_BOARD = pos(me={1: 3, 2: 3}, opp={3: 4})
#: The side on roll has borne off everything: over (it won a single).
OVER_BOARD = pos(me={}, opp={3: 4})
#: One checker on the 1-point against 15 at home, none off: every roll wins a gammon.
SURE_GAMMON = pos(me={1: 1}, opp={6: 15})
#: One checker on the 1-point against two: every roll wins a single game.
SURE_SINGLE = pos(me={1: 1}, opp={6: 2})


@pytest.fixture(scope="module")
def evaluator():
    return NetworkEvaluator(load_checkpoint(default_checkpoint_path()).network)


@pytest.fixture(scope="module")
def small_set(evaluator, tmp_path_factory):
    """A 60-position set in shards of 20, from the shipped network."""
    folder = tmp_path_factory.mktemp("positions")
    ps = generate_positions(evaluator, 60, 11, pool=32)
    network = default_checkpoint_path()
    write_position_set(folder, ps, shard_size=20, extra={"network": {"path": str(network)}})
    return folder


def _files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name.startswith("labels-")}


# --------------------------------------------------------------------------- classes


def test_hand_built_positions_get_gnubg_classes():
    boards = np.stack(
        [
            CRASHED_BOARD,
            CRASHED_FEW,
            CRASHED_DEEP_TWO,
            NOT_CRASHED,
            starting_board(),
            RACE_BOARD,
            BEAROFF_BOARD,
            OVER_BOARD,
        ]
    )
    expected = [CRASHED, CRASHED, CRASHED, CONTACT, CONTACT, RACE, BEAROFF, OVER]
    assert classify_positions(boards).tolist() == expected


def test_a_crashed_opponent_makes_the_position_crashed_from_either_side():
    for board in (CRASHED_BOARD, CRASHED_FEW, CRASHED_DEEP_TWO):
        assert classify_positions(swap_sides(board)).tolist() == [CRASHED]
        assert crashed_sides(swap_sides(board)).tolist() == [[False, True]]
        assert crashed_sides(board).tolist() == [[True, False]]


def test_classes_agree_with_gnubg_on_self_play_positions(evaluator):
    gnubg_nn = pytest.importorskip("gnubg_nn", reason="gnubg_nn is not installed")
    from nard_ai.formats.tanboard import to_tanboard

    ps = generate_positions(evaluator, 400, 5, proportions="contact=1,crashed=1,race=1,bearoff=1", pool=64)
    # gnubg_nn numbers its classes over, bearoff (two-sided), bearoff (one-sided), race, crashed, contact
    to_ours = {0: OVER, 1: BEAROFF, 2: BEAROFF, 3: RACE, 4: CRASHED, 5: CONTACT}
    theirs = [to_ours[gnubg_nn.classify(to_tanboard(b).tolist())] for b in ps.boards]
    assert classify_positions(ps.boards).tolist() == theirs
    assert set(theirs) == {BEAROFF, RACE, CRASHED, CONTACT}


# --------------------------------------------------------------------------- formats


def test_labels_csv_round_trips_with_six_decimals():
    ids = [position_id(b) for b in (starting_board(), RACE_BOARD)]
    probs = np.array([[0.5123456789, 0.15, 0.01, 0.14, 0.009], [1.0, 0.0, 0.0, 0.0, 0.0]])
    data = format_labels_csv(ids, probs)
    assert data.decode().splitlines()[0] == ",".join(LABEL_COLUMNS)
    assert data.decode().splitlines()[1] == "4HPwATDgc/ABMA,0.512346,0.150000,0.010000,0.140000,0.009000"
    back_ids, back = parse_labels_csv(data)
    assert back_ids == ids
    np.testing.assert_allclose(back, probs, atol=5e-7)


def test_a_position_set_round_trips_through_its_files(tmp_path):
    boards = np.stack([CRASHED_BOARD, RACE_BOARD, BEAROFF_BOARD, starting_board(), NOT_CRASHED])
    ps = PositionSet(boards, classify_positions(boards), {"settings": {}})
    manifest = write_position_set(tmp_path, ps, shard_size=2)
    assert [s["rows"] for s in manifest["shards"]] == [2, 2, 1]
    assert read_position_set(tmp_path)["classes"] == ps.counts()
    got = [read_positions_shard(tmp_path / s["file"], s["sha256"]) for s in manifest["shards"]]
    ids = sum((g[0] for g in got), [])
    np.testing.assert_array_equal(np.concatenate([g[1] for g in got]), boards)
    assert ids == [position_id(b) for b in boards]
    assert [board_from_position_id(i).tolist() for i in ids] == boards.tolist()
    with pytest.raises(ValueError, match="already holds a position set"):
        write_position_set(tmp_path, ps)


def test_consistent_probs_clips_rollout_means_into_the_cumulative_order():
    p = consistent_probs([[1.02, 0.3, 0.4, 0.01, -0.001], [0.4, 0.1, 0.0, 0.7, 0.2]])
    np.testing.assert_allclose(p, [[1.0, 0.3, 0.3, 0.0, 0.0], [0.4, 0.1, 0.0, 0.6, 0.2]])


# --------------------------------------------------------------------------- generation


def test_generation_deduplicates_and_fills_the_class_quotas(evaluator):
    ps = generate_positions(
        evaluator, 200, 3, proportions="contact=0.5,crashed=0.2,race=0.2,bearoff=0.1", pool=64
    )
    ids = [position_id(b) for b in ps.boards]
    assert len(set(ids)) == len(ids) == 200
    assert ps.counts() == {"over": 0, "bearoff": 20, "race": 40, "crashed": 40, "contact": 100}
    assert classify_positions(ps.boards).tolist() == ps.classes.tolist()
    assert not ps.info["shortfall"]


def test_generation_plays_its_games_on_the_lockstep_engine(evaluator, monkeypatch):
    """Position generation's self-play runs on play.lockstep's engine (issue 13: one engine for every
    game loop of agents): its ply limit applies, in the local and the sharded path alike."""
    import nard_ai.play.lockstep as lockstep

    monkeypatch.setattr(lockstep, "MAX_PLIES", 3)
    with pytest.raises(RuntimeError, match="a self-play game passed 3 plies"):
        generate_positions(evaluator, 50, 3, pool=8)
    with pytest.raises(RuntimeError, match="a self-play game passed 3 plies"):
        generate_positions(evaluator, 50, 3, pool=8, shard_games=16)


def test_generation_is_reproducible_for_a_seed(evaluator, tmp_path):
    a = generate_positions(evaluator, 120, 7, pool=32, epsilon=0.1, temperature=0.05)
    b = generate_positions(evaluator, 120, 7, pool=32, epsilon=0.1, temperature=0.05)
    c = generate_positions(evaluator, 120, 8, pool=32, epsilon=0.1, temperature=0.05)
    np.testing.assert_array_equal(a.boards, b.boards)
    assert a.info == b.info
    assert not np.array_equal(a.boards, c.boards)
    write_position_set(tmp_path / "a", a, shard_size=50)
    write_position_set(tmp_path / "b", b, shard_size=50)
    for name in ("positions-00000.csv", "positions-00001.csv", "positions-00002.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_an_excluded_set_never_overlaps_a_new_one(evaluator, tmp_path):
    first = generate_positions(evaluator, 150, 1, pool=32)
    write_position_set(tmp_path / "first", first)
    keys = load_keys([tmp_path / "first"])
    assert keys == set(position_keys(first.boards))
    second = generate_positions(evaluator, 150, 2, pool=32, exclude=keys)
    assert not keys & set(position_keys(second.boards))
    assert second.info["excluded_seen"] > 0  # the openings repeat: there was something to exclude


def test_a_class_that_falls_short_is_reported(evaluator):
    ps = generate_positions(evaluator, 100, 4, proportions="bearoff=1", pool=8, max_games=8)
    assert ps.info["shortfall"]["bearoff"] == 100 - len(ps)
    assert set(ps.classes.tolist()) <= {BEAROFF}


def test_disagreement_selection_keeps_the_positions_search_changes_most(evaluator):
    from nard_ai.training.positions import disagreement

    ps = generate_positions(evaluator, 20, 9, proportions="race=1", pool=16, oversample=3, disagreement_ply=1)
    assert ps.counts()["race"] == 20
    assert ps.info["candidates"]["race"] == 60
    assert disagreement(evaluator, ps.boards, 1).min() >= 0.0


# --------------------------------------------------------------------------- labels


def test_finished_and_bearoff_positions_are_labelled_with_their_exact_value(evaluator):
    from nard_ai.search import Agent

    boards = np.stack([OVER_BOARD, BEAROFF_BOARD, SURE_GAMMON, SURE_SINGLE])
    classes = classify_positions(boards)
    ids = [position_id(b) for b in boards]

    def agent_for_ply(ply):
        return Agent(evaluator, ply=ply)

    probs, used = label_boards(agent_for_ply, boards, classes, ids, make_plan("2ply"), 0)
    assert used == {"exact": 4}
    np.testing.assert_array_equal(probs[0], result_probs(np.array([1]))[0])
    np.testing.assert_allclose(probs[1], bearoff_probs(BEAROFF_BOARD), atol=1e-7)
    np.testing.assert_array_equal(probs[2:], [[1, 1, 0, 0, 0], [1, 0, 0, 0, 0]])
    # searched or rolled out, a position every roll wins gets the same exact value
    for plan in (make_plan("1ply", "bearoff=1ply"), make_plan("2ply", "bearoff=2ply")):
        searched, _ = label_boards(agent_for_ply, boards[2:], classes[2:], ids[2:], plan, 0)
        np.testing.assert_allclose(searched, [[1, 1, 0, 0, 0], [1, 0, 0, 0, 0]], atol=1e-7)
    rolled, used = label_boards(
        agent_for_ply, boards[2:], classes[2:], ids[2:], make_plan("rollout", "bearoff=rollout", games=36), 0
    )
    assert used == {"rollout": 2}
    np.testing.assert_allclose(rolled, [[1, 1, 0, 0, 0], [1, 0, 0, 0, 0]], atol=1e-7)


def test_rollout_seeds_depend_on_the_seed_and_the_position_only():
    assert rollout_seed(1, "4HPwATDgc/ABMA") == rollout_seed(1, "4HPwATDgc/ABMA")
    assert rollout_seed(1, "4HPwATDgc/ABMA") != rollout_seed(2, "4HPwATDgc/ABMA")
    assert 0 <= rollout_seed(1, "4HPwATDgc/ABMA") < 2**64


def test_plans_give_each_class_a_method_and_reject_what_makes_no_sense():
    plan = make_plan("2ply", "race=rollout", games=144, truncate=10)
    assert {k: m.method for k, m in plan.items()} == {
        "over": "exact",
        "bearoff": "exact",
        "race": "rollout",
        "crashed": "2ply",
        "contact": "2ply",
    }
    assert plan["race"].to_json()["games"] == 144 and plan["race"].ply == 0
    assert LabelMethod.from_json(plan["race"].to_json()) == plan["race"]
    with pytest.raises(ValueError, match="unknown label method"):
        make_plan("3ply")
    with pytest.raises(ValueError, match="only for the classes"):
        make_plan("2ply", "contact=exact")
    with pytest.raises(ValueError, match="always labelled 'exact'"):
        make_plan("2ply", "over=2ply")
    with pytest.raises(ValueError, match="unknown position class"):
        parse_mix("midgame=2ply")
    with pytest.raises(ValueError, match="CLASS=METHOD"):
        parse_mix("2ply")
    with pytest.raises(ValueError, match="rollout games"):
        make_plan("rollout", games=0)
    with pytest.raises(ValueError, match="play ply"):
        LabelMethod("rollout", play_ply=2)


# --------------------------------------------------------------------------- runs


def test_a_run_writes_labels_and_sidecars_for_every_shard(small_set, tmp_path):
    summary = run_labels(small_set, tmp_path, make_plan("0ply"), workers=1, progress=False)
    assert (summary["shards"], summary["done"], summary["skipped"], summary["rows"]) == (3, 3, 0, 60)
    ids, probs = read_labels(tmp_path)
    pos_ids = sum((read_positions_shard(small_set / f"positions-{k:05d}.csv")[0] for k in range(3)), [])
    assert ids == pos_ids
    assert ((probs >= 0) & (probs <= 1)).all()
    side = json.loads((tmp_path / "labels-00001.json").read_text())
    assert side["positions"]["file"] == "positions-00001.csv"
    assert side["labels"]["contact"] == {"method": "0ply", "ply": 0}
    assert side["network"]["file"] == "nard-expert.pt" and len(side["network"]["sha256"]) == 64
    assert sum(side["rows_by_method"].values()) == side["rows"] == 20


def test_resuming_an_interrupted_run_gives_the_same_files_and_recomputes_only_missing_shards(
    small_set, tmp_path, monkeypatch
):
    plan = make_plan("1ply")
    whole = tmp_path / "whole"
    run_labels(small_set, whole, plan, workers=1, progress=False)

    part = tmp_path / "part"
    first = run_labels(small_set, part, plan, workers=1, progress=False, max_shards=1)
    assert first["done"] == 1
    # a kill mid-shard: shard 1's CSV written, its sidecar not, a temporary file left behind
    (part / "labels-00001.csv").write_bytes((whole / "labels-00001.csv").read_bytes()[:50])
    (part / ".labels-00002.csv.abc.tmp").write_bytes(b"partial")
    calls = []
    real = labels_mod.label_shard
    monkeypatch.setattr(labels_mod, "label_shard", lambda task: calls.append(task.index) or real(task))
    second = run_labels(small_set, part, plan, workers=1, progress=False)
    assert calls == [1, 2]
    assert (second["skipped"], second["done"]) == (1, 2)
    assert _files(part) == _files(whole)
    assert not list(part.glob(".*.tmp"))
    # a damaged CSV is relabelled; a complete folder is left alone
    (part / "labels-00000.csv").write_bytes(b"position_id,win,win_g,win_bg,lose_g,lose_bg\n")
    calls.clear()
    run_labels(small_set, part, plan, workers=1, progress=False)
    assert calls == [0]
    assert _files(part) == _files(whole)
    calls.clear()
    assert run_labels(small_set, part, plan, workers=1, progress=False)["done"] == 0
    assert calls == []


def test_two_worker_processes_write_the_same_files_as_one(small_set, tmp_path):
    plan = make_plan("0ply")
    run_labels(small_set, tmp_path / "one", plan, workers=1, progress=False)
    run_labels(small_set, tmp_path / "two", plan, workers=2, progress=False)
    assert _files(tmp_path / "one") == _files(tmp_path / "two")


def test_a_folder_of_another_run_is_refused(small_set, tmp_path):
    run_labels(small_set, tmp_path, make_plan("0ply"), workers=1, progress=False, max_shards=1)
    with pytest.raises(ValueError, match="other settings"):
        run_labels(small_set, tmp_path, make_plan("1ply"), workers=1, progress=False)
    with pytest.raises(ValueError, match="other settings"):
        run_labels(small_set, tmp_path, make_plan("0ply"), seed=5, workers=1, progress=False)
    tasks, _ = plan_tasks(small_set, tmp_path, make_plan("0ply"))
    assert shard_complete(tasks[0]) and not shard_complete(tasks[1])


def _damaged(folder, shard: str) -> str:
    return (
        f"{folder / f'labels-{shard}.csv'}: its SHA-256 does not match labels-{shard}.json (damaged or "
        "edited since it was written); rerun the label command with the same settings (its resume "
        "relabels this shard) or remove both files"
    )


def test_a_damaged_shard_is_an_error_an_unfinished_one_is_left_out_and_a_rerun_relabels_it(
    small_set, tmp_path, monkeypatch
):
    """A shard whose sidecar says it is complete but whose CSV was truncated or edited (or is missing, or
    whose sidecar is unreadable or counts other rows) is an error naming it, not 20 rows fewer; a CSV without
    a sidecar (a run killed mid-shard) is still left out; rerunning the label command relabels a damaged
    shard to the bytes of an undamaged run."""
    import re
    import shutil

    plan = make_plan("0ply")
    whole = tmp_path / "whole"
    run_labels(small_set, whole, plan, workers=1, progress=False)
    assert len(read_labels(whole)[0]) == 60
    good = (whole / "labels-00001.csv").read_bytes()
    lines = good.decode().splitlines(keepends=True)
    edited = "".join([*lines[:3], "garbage,row\n", *lines[4:]]).encode()
    for damage in (good[:500], edited):  # `head -c 500`; one row replaced
        lab = tmp_path / "lab"
        shutil.rmtree(lab, ignore_errors=True)
        shutil.copytree(whole, lab)
        (lab / "labels-00001.csv").write_bytes(damage)
        with pytest.raises(ValueError, match=f"^{re.escape(_damaged(lab, '00001'))}$"):
            read_labels(lab)
    # the rerun of the label command relabels the damaged shard, and only it
    calls = []
    real = labels_mod.label_shard
    monkeypatch.setattr(labels_mod, "label_shard", lambda task: calls.append(task.index) or real(task))
    assert run_labels(small_set, lab, plan, workers=1, progress=False)["done"] == 1 and calls == [1]
    assert _files(lab) == _files(whole)
    # unfinished (no sidecar): left out, as before
    (lab / "labels-00001.json").unlink()
    ids, _ = read_labels(lab)
    assert len(ids) == 40 and ids == read_labels(whole)[0][:20] + read_labels(whole)[0][40:]
    # a sidecar without its CSV, an unreadable sidecar, a sidecar that counts other rows
    shutil.copy(whole / "labels-00001.json", lab)
    (lab / "labels-00001.csv").unlink()
    with pytest.raises(ValueError, match=r"labels-00001\.json: its shard labels-00001\.csv is missing"):
        read_labels(lab)
    (lab / "labels-00001.csv").write_bytes(good)
    (lab / "labels-00001.json").write_text('{"csv_sha256": ')
    with pytest.raises(
        ValueError, match=r"labels-00001\.json: the sidecar cannot be read .*its resume relabels this shard"
    ):
        read_labels(lab)
    meta = json.loads((whole / "labels-00001.json").read_text())
    (lab / "labels-00001.json").write_text(json.dumps({**meta, "rows": 21}))
    with pytest.raises(ValueError, match=r"labels-00001\.csv: 20 rows, but labels-00001\.json says 21"):
        read_labels(lab)
    # ...and the label command's resume relabels that shard too (its CSV's SHA-256 matches, its rows do
    # not), where it once kept it and left training to refuse it
    calls.clear()
    assert run_labels(small_set, lab, plan, workers=1, progress=False)["done"] == 1 and calls == [1]
    assert _files(lab) == _files(whole)


# --------------------------------------------------------------------------- bad input


def test_malformed_position_files_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="header"):
        parse_positions_csv(b"id,class\n")
    bad_id = tmp_path / "bad_id.csv"
    bad_id.write_text("position_id,class\nnot-an-id!!!!!,race\n")
    with pytest.raises(ValueError, match="line 2"):
        read_positions_shard(bad_id)
    wrong_class = tmp_path / "wrong_class.csv"
    wrong_class.write_text(f"position_id,class\n{position_id(RACE_BOARD)},contact\n")
    with pytest.raises(ValueError, match="but the position is 'race'"):
        read_positions_shard(wrong_class)
    with pytest.raises(ValueError, match="SHA-256"):
        read_positions_shard(wrong_class, sha256="0" * 64)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        parse_labels_csv(b"position_id,win,win_g,win_bg,lose_g,lose_bg\nx,1.5,0,0,0,0\n")
    with pytest.raises(ValueError, match="not a .complete. position set"):
        read_position_set(tmp_path)


def test_bad_generation_arguments_are_value_errors(evaluator):
    for kwargs, match in (
        ({"count": 0}, "count"),
        ({"epsilon": 1.5}, "epsilon"),
        ({"temperature": -1}, "temperature"),
        ({"proportions": "midgame=1"}, "unknown position class"),
        ({"proportions": "over=1"}, "unknown position class"),
        ({"proportions": "race=0"}, "at least one"),
        ({"disagreement_ply": 3}, "disagreement_ply"),
    ):
        args = {"count": 10, **kwargs}
        count = args.pop("count")
        with pytest.raises(ValueError, match=match):
            generate_positions(evaluator, count, 0, **args)
    assert parse_proportions("race=1,contact=3") == {"race": 0.25, "contact": 0.75}


def test_the_command_line_exits_2_with_a_message_on_bad_input(small_set, tmp_path, capsys):
    import signal

    handler = signal.getsignal(signal.SIGTERM)
    assert main(["label", "--positions", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("python -m nard_ai.training label: error: no positions folder")
        and "Traceback" not in err
    )
    assert (
        main(["label", "--positions", str(small_set), "--out", str(tmp_path / "o"), "--mix", "race=exact"])
        == 2
    )
    assert "only for the classes" in capsys.readouterr().err
    assert main(["positions", "--count", "5", "--out", str(small_set)]) == 2
    assert "already holds a position set" in capsys.readouterr().err
    (tmp_path / "a-file").write_text("not a folder")  # refused before any game is played
    assert main(["positions", "--count", "5", "--out", str(tmp_path / "a-file")]) == 2
    err = capsys.readouterr().err
    assert "is a file, not a folder" in err and "Traceback" not in err
    assert main(["positions", "--count", "5", "--out", str(tmp_path / "a-file" / "sub")]) == 2
    err = capsys.readouterr().err
    assert "a-file is a file, not a folder" in err and "Traceback" not in err
    assert main(["positions", "--count", "5", "--out", str(tmp_path / "p"), "--classes", "x=1"]) == 2
    assert "unknown position class" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is handler  # main's SIGTERM handler is restored on return
    with pytest.raises(SystemExit) as exit_:
        main(["label", "--positions", str(small_set), "--out", str(tmp_path / "o"), "--method", "3ply"])
    assert exit_.value.code == 2
    with pytest.raises(SystemExit) as exit_:
        main(["positions", "--count", "0", "--out", str(tmp_path / "p")])
    assert exit_.value.code == 2


def test_sigterm_stops_a_two_worker_run_cleanly_and_the_rerun_resumes(small_set, tmp_path):
    """``kill PID`` on ``label --workers 2``: exit 143 with the resume message, the run log's stop line,
    no leaked-semaphore warning from Python's resource tracker, no worker left running, and a rerun
    that picks the folder up (the same settings). Rollouts of 1,296 games make a shard of 20 positions
    take minutes, so the signal lands while the workers start or label, never after the run."""
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    out = tmp_path / "lab"
    cmd = [
        sys.executable,
        "-m",
        "nard_ai.training",
        "label",
        "--positions",
        str(small_set),
        "--out",
        str(out),
    ]
    cmd += ["--method", "rollout", "--games", "1296", "--workers", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not ((out / "run.log").exists() and "start:" in (out / "run.log").read_text()):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.2)
        time.sleep(3.0)  # the workers are being spawned or are labelling
        children = subprocess.run(
            ["pgrep", "-P", str(proc.pid)], capture_output=True, text=True
        ).stdout.split()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    assert "interrupted; complete shards are kept" in err and "leaked" not in err and "Traceback" not in err
    assert "stop: 0 shards labelled" in (out / "run.log").read_text()
    assert children  # the two workers and the resource tracker

    def running(pid: str) -> bool:  # a zombie (no init reaping it in a container) has stopped
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False

    deadline = time.monotonic() + 10
    while any(running(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(running(pid) for pid in children)
    resumed = run_labels(
        small_set, out, make_plan("rollout", games=1296), workers=1, progress=False, max_shards=0
    )
    assert (resumed["done"], resumed["skipped"]) == (0, 0)


def test_the_command_line_makes_and_labels_a_set_and_checks_overlap(tmp_path, capsys):
    out = tmp_path / "pos"
    assert (
        main(
            ["positions", "--count", "30", "--out", str(out), "--seed", "2", "--pool", "16", "--no-progress"]
        )
        == 0
    )
    assert "30 positions in 1 shards" in capsys.readouterr().out
    other = tmp_path / "other"
    args = ["positions", "--count", "30", "--out", str(other), "--seed", "3", "--pool", "16", "--no-progress"]
    assert main([*args, "--exclude", str(out)]) == 0
    assert json.loads((other / "positions.json").read_text())["exclude"][0]["path"] == str(out.resolve())
    assert main(["overlap", str(out), str(other)]) == 0
    assert main(["overlap", str(out), str(out)]) == 1
    capsys.readouterr()
    lab = tmp_path / "lab"
    assert (
        main(["label", "--positions", str(out), "--out", str(lab), "--method", "0ply", "--workers", "1"]) == 0
    )
    assert "1 shards labelled (30 positions" in capsys.readouterr().out
    assert len(read_labels(lab)[0]) == 30
    assert CLASS_NAMES[OVER] == "over"
