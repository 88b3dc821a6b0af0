"""Bad input to the training-data commands (``python -m nard_ai.training positions|label|ensemble``) and
their files: one ``error:`` line and status 2 before any work, nothing left behind, no silently wrong labels.

The position sets here are written by hand from fixed boards (no self-play: a few seconds in all); the
labels are the shipped network's 0-ply values. Each test names the defect of the training-data review
it covers (D1 .. D17).
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from nard_ai.core.board import pos, starting_board
from nard_ai.formats.position_id import position_id
from nard_ai.model.atomic import nearest_existing
from nard_ai.model.network import default_checkpoint_path
from nard_ai.training import labels as labels_mod
from nard_ai.training.argtypes import TRAINING_LIMITS
from nard_ai.training.cli import main
from nard_ai.training.labels import make_plan, parse_mix, run_labels
from nard_ai.training.positions import (
    PositionSet,
    classify_positions,
    generate_positions,
    read_position_set,
    write_position_set,
)
from nard_ai.training.store import (
    LABEL_COLUMNS,
    ORDER_TOLERANCE,
    check_out_folder,
    consistent_probs,
    file_provenance,
    format_labels_csv,
    parse_labels_csv,
    read_labels,
)

HEADER = ",".join(LABEL_COLUMNS)
#: Eight distinct positions before the roll: contact, crashed, race and bear-off (tests/test_training_data.py).
BOARDS = np.stack(
    [
        starting_board(),
        pos(me={1: 10, 2: 2, 20: 3}, opp={6: 5, 8: 3, 13: 5, 18: 2}),  # crashed
        pos(me={20: 3, 3: 3}, opp={6: 5, 8: 3, 13: 5, 18: 2}),  # crashed (few checkers left)
        pos(me={1: 1, 2: 9, 20: 5}, opp={6: 5, 8: 3, 13: 5, 18: 2}),  # contact
        pos(me={6: 5, 8: 5, 10: 5}, opp={6: 5, 8: 5, 10: 5}),  # race
        pos(me={6: 5, 8: 5, 9: 5}, opp={6: 5, 8: 5, 10: 5}),  # race
        pos(me={1: 3, 2: 3}, opp={3: 4}),  # bear-off
        pos(me={1: 1}, opp={6: 15}),  # bear-off
    ]
)


def _set(folder: Path, network: Path | None = None, shard_size: int = 2) -> Path:
    """A position set of :data:`BOARDS` in shards of ``shard_size`` (four by default), recording ``network``
    (path and SHA-256, as the positions command records it) when given."""
    ps = PositionSet(BOARDS, classify_positions(BOARDS), {"settings": {}})
    extra = {"network": file_provenance(network)} if network is not None else {}
    write_position_set(folder, ps, shard_size=shard_size, extra=extra)
    return folder


@pytest.fixture
def pset(tmp_path) -> Path:
    """A four-shard set made by a copy of the shipped network (``tmp_path / "net.pt"``)."""
    net = tmp_path / "net.pt"
    shutil.copy(default_checkpoint_path(), net)
    return _set(tmp_path / "pos", net)


def _error(capsys) -> str:
    """The command's stderr, checked to be one line without a traceback."""
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


def _label(pset: Path, out: Path, *extra: str) -> int:
    return main(["label", "--positions", str(pset), "--out", str(out), "--method", "0ply", "--workers", "1",
                 "--no-progress", *extra])  # fmt: skip


# --------------------------------------------------------------------------- D1: non-finite labels


def test_a_network_that_gives_nan_writes_no_label_shard(pset, tmp_path, monkeypatch):
    """D1: a network with NaN weights gives NaN probabilities; ``consistent_probs`` passes NaN through
    (``np.clip(nan) = nan``), and the shard was written as ``ID,nan,nan,nan,nan,nan`` and marked complete.
    Now the shard is an error naming it and the network, no file of it is written, and a shard labelled
    before it stays (the folder is not removed)."""
    import nard_ai.search as search

    real = search.position_probs
    calls = []

    def nan_from_the_second_shard(evaluator, boards, ply, *args):
        calls.append(len(boards))
        probs = real(evaluator, boards, ply, *args)
        return probs if len(calls) == 1 else np.full_like(probs, np.nan)

    monkeypatch.setattr(search, "position_probs", nan_from_the_second_shard)
    out = tmp_path / "lab"
    with pytest.raises(ValueError) as exc:
        run_labels(pset, out, make_plan("0ply"), workers=1, progress=False)
    message = str(exc.value)
    # shard 0 (starting position, crashed) labelled; shard 1 (crashed, contact) got NaN
    assert message.startswith(
        f"shard 00001 (positions-00001.csv): not labelled: the network {tmp_path / 'net.pt'} (SHA-256 "
    )
    assert "gave non-finite probabilities (NaN or infinite) for 2 of 2 positions" in message
    assert sorted(p.name for p in out.glob("labels-*")) == ["labels-00000.csv", "labels-00000.json"]
    assert len(read_labels(out)[0]) == 2
    # the writer is the last line of defence: it refuses NaN whatever gave it
    pid = position_id(starting_board())
    with pytest.raises(ValueError, match=rf"^position {pid} \(row 1\): probabilities must be finite numbers"):
        format_labels_csv([pid], [[np.nan] * 5])
    assert np.isnan(consistent_probs([[np.nan] * 5])).all()  # why the check cannot rely on the clipping


# --------------------------------------------------------------------------- D5: the cumulative order


@pytest.mark.parametrize(
    ("row", "why"),
    [
        # win_g (win a gammon or backgammon) is part of win: 0.9 > 0.1 cannot be
        ("0.1,0.9,0,0,0", "win_g 0.9 > win 0.1"),
        # lose_g is part of losing, 1 - win = 0 when win = 1; lose_bg is part of lose_g
        ("1,0,0,1,1", "lose_g 1 > 1 - win 0"),
        ("0.5,0.2,0.3,0.1,0", "win_bg 0.3 > win_g 0.2"),
        ("0.5,0.2,0.1,0.1,0.2", "lose_bg 0.2 > lose_g 0.1"),
    ],
)
def test_label_rows_out_of_the_cumulative_order_are_refused(row, why):
    """D5: the format (nard_ai.training.store) requires win_bg <= win_g <= win and lose_bg <= lose_g <=
    1 - win; only [0, 1] was checked, so these rows trained with arbitrary targets."""
    pid = position_id(starting_board())
    with pytest.raises(
        ValueError, match=rf"^lab\.csv, line 3: the probabilities contradict each other \({why}"
    ):
        parse_labels_csv(f"{HEADER}\n{pid},0.5,0.1,0,0.1,0\n{pid},{row}\n", "lab.csv")


def test_the_rounding_to_six_digits_stays_within_the_tolerance():
    """What the writer does: ``consistent_probs`` then rounding to 6 digits. ``lose_g = 1 - win`` exactly
    can round to a sum 1 + 1e-6 (0.6666665 and 0.3333335 both round up); every such row reads back, and
    the tolerance is that one rounding step (1e-6, plus float error), no more."""
    win = np.linspace(0, 1, 2001) + 5e-7  # many values whose rounding goes up
    probs = consistent_probs(np.stack([win, win / 2, win / 4, 1 - win, (1 - win) / 3], axis=1))
    ids = [position_id(starting_board())] * len(probs)
    _, back = parse_labels_csv(format_labels_csv(ids, probs))
    assert (back[:, 0] + back[:, 3] > 1).any()  # the case the tolerance is for occurs
    assert (back[:, 0] + back[:, 3] <= 1 + ORDER_TOLERANCE).all()
    assert 1e-6 < ORDER_TOLERANCE < 1.01e-6
    pid = ids[0]
    parse_labels_csv(f"{HEADER}\n{pid},0.333334,0,0,0.666667,0\n")  # 1.000001: one rounding step
    with pytest.raises(ValueError, match="lose_g 0.666668 > 1 - win 0.666666"):
        parse_labels_csv(f"{HEADER}\n{pid},0.333334,0,0,0.666668,0\n")  # two steps: a contradiction


def test_the_shipped_rollout_labels_satisfy_the_order():
    """The 1,400 rollout labels of benchmarks/contact-rollout (written by this code) read under the check."""
    folder = Path(__file__).resolve().parent.parent / "benchmarks" / "contact-rollout"
    ids, probs = read_labels(folder)
    assert len(ids) == 1400 and probs.shape == (1400, 5)


# --------------------------------------------------------------------------- D6: the set's network


def test_a_replaced_network_file_is_refused_unless_given_explicitly(pset, tmp_path, capsys):
    """D6: without --network the set's recorded path is used; after that file was replaced (here by the
    TD network's bytes) its SHA-256 differs from the manifest's, and the labels would come from another
    network. Refused, naming the set's network; --network with the same path labels."""
    net = tmp_path / "net.pt"
    recorded = read_position_set(pset)["network"]["sha256"]
    shutil.copy(default_checkpoint_path().parent / "nard-rich.pt", net)
    out = tmp_path / "lab"
    assert _label(pset, out) == 2
    err = _error(capsys)
    assert f"the position set {pset} was made by the network {net} of SHA-256 {recorded[:12]}..." in err
    assert f"pass it explicitly: --network {net}" in err
    assert not out.exists()
    assert _label(pset, out, "--network", str(net), "--max-shards", "1") == 0
    assert json.loads((out / "labels-00000.json").read_text())["network"]["file"] == "net.pt"


# --------------------------------------------------------------------------- D7, D8: bounds, empty --out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["positions", "--count", "40", "--out", "x", "--oversample", "1e300"],
         "argument --oversample: must be a number in [1, 100], got 1e300"),
        (["positions", "--count", "4000000000000000000000", "--out", "y", "--max-games", "1"],
         "argument --count: must be <= 10000000, got 4000000000000000000000"),
        (["positions", "--count", "40", "--out", "x", "--max-games", str(10**30)],
         f"argument --max-games: must be <= 100000000, got {10**30}"),
        (["positions", "--count", "40", "--out", "x", "--pool", "16385"],
         "argument --pool: must be <= 16384, got 16385"),
        (["positions", "--count", "40", "--out", "x", "--shard-size", "1000001"],
         "argument --shard-size: must be <= 1000000, got 1000001"),
        (["positions", "--count", "40", "--out", "x", "--seed", str(2**64)],
         f"argument --seed: must be <= {2**64 - 1}, got {2**64}"),
        (["positions", "--count", "40", "--out", "x", "--temperature", "inf"],
         "argument --temperature: must be a finite number >= 0, got inf"),
        (["positions", "--count", "40", "--out", "x", "--epsilon", "nan"],
         "argument --epsilon: must be a number in [0, 1], got nan"),
        (["positions", "--count", "40", "--out", ""], "argument --out: must not be empty"),
        (["label", "--positions", "p", "--out", "o", "--seed", str(2**64)],
         f"argument --seed: must be <= {2**64 - 1}, got {2**64}"),
        (["label", "--positions", "p", "--out", "o", "--workers", "65"], "argument --workers: must be <= 64, got 65"),
        (["label", "--positions", "p", "--out", "o", "--games", str(10**7 + 1)],
         f"argument --games: must be <= 10000000, got {10**7 + 1}"),
        (["label", "--positions", "p", "--out", "o", "--truncate", "5001"],
         "argument --truncate: must be <= 5000, got 5001"),
        (["label", "--positions", "p", "--out", "o", "--max-shards", str(10**20)],
         f"argument --max-shards: must be <= 10000000, got {10**20}"),
        (["label", "--positions", "p", "--out", ""], "argument --out: must not be empty"),
        (["ensemble", "--out", "", "a.pt", "b.pt"], "argument --out: must not be empty"),
    ],
)  # fmt: skip
def test_sizes_are_bounded_and_an_empty_out_is_refused(argv, message, capsys):
    """D7, D8, D17 (the temperature's wording): argparse refuses with status 2; the bounds are
    TRAINING_LIMITS (train.py's for --pool and --workers, nard rollout's for --games, a game's ply
    limit for --truncate) and 2**64 - 1 for seeds (train.py's)."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"error: {message}" in err and "Traceback" not in err


def test_combined_sizes_and_the_library_bounds(tmp_path, capsys):
    """D7: count x oversample (the candidates generation holds) and --shard-games, checked before the
    network loads; the library gives ValueErrors, not OverflowError, at the same bounds; an empty folder
    (Path("") is the current folder) is refused by the library too (D8)."""
    out = tmp_path / "p"
    assert main(["positions", "--count", "10000000", "--oversample", "3", "--out", str(out)]) == 2
    assert "--count x --oversample must be at most 20,000,000 candidates" in _error(capsys)
    assert main(["positions", "--count", "40", "--out", str(out), "--shard-games", "1000001"]) == 2
    assert "argument --shard-games: must be <= 1000000, got 1000001" in _error(capsys)
    assert not out.exists()
    for kwargs, match in (
        ({"count": 4 * 10**21}, "count must be an integer <= 10,000,000"),
        ({"count": 40, "oversample": 1e300}, r"oversample must be a number in \[1, 100\]"),
        ({"count": 40, "max_games": 10**30}, "max_games must be an integer <= 100,000,000"),
        ({"count": 40, "seed": 2**64}, "seed must be an integer <= 18,446,744,073,709,551,615"),
        ({"count": 40, "temperature": float("inf")}, r"temperature must be a finite number >= 0, got inf"),
    ):
        count = kwargs.pop("count")
        with pytest.raises(ValueError, match=match):
            generate_positions(None, count, kwargs.pop("seed", 0), **kwargs)  # refused before any play
    assert TRAINING_LIMITS["count"] * 2 == TRAINING_LIMITS["candidates"]  # the default oversample fits
    with pytest.raises(ValueError, match="--out is empty"):
        check_out_folder("")
    with pytest.raises(ValueError, match="--out is empty"):
        run_labels(tmp_path, "", make_plan("0ply"), workers=1, progress=False)


# --------------------------------------------------------------------------- D9, D11, D12, D14: folders


def test_shards_beyond_the_set_are_refused_before_the_folder_is_made(pset, tmp_path, capsys):
    """D9: --shards 10:20 on a set of four shards labelled nothing, exited 0 and made run.json/run.log;
    --shards 3:20 labelled shard 3 alone, as if the range were open-ended (``3:``)."""
    out = tmp_path / "lab"
    assert _label(pset, out, "--shards", "10:20") == 2
    assert _error(capsys).endswith(
        f"shards 10:20 select none of the position set's shards: {pset} has shards 0..3"
    )
    assert _label(pset, out, "--shards", "4:") == 2  # an open range starting past the set
    assert _error(capsys) == (
        "python -m nard_ai.training label: error: shards 4: select none of the position set's "
        f"shards: {pset} has shards 0..3"
    )
    assert _label(pset, out, "--shards", "7") == 2  # one shard beyond the set: named as typed
    assert _error(capsys) == (
        "python -m nard_ai.training label: error: shard 7 is not one of the position set's "
        f"shards: {pset} has shards 0..3"
    )
    assert _label(pset, out, "--shards", "3:20") == 2
    assert _error(capsys) == (
        "python -m nard_ai.training label: error: shards 3:20 go beyond the position set's shards: "
        f"{pset} has 4 shards, 0..3 (use a STOP of at most 4, or 3: for shard 3 to the last)"
    )
    assert not out.exists()
    out.mkdir()  # a folder that exists (a resume): nothing is written in it either
    assert _label(pset, out, "--shards", "0:5") == 2
    assert _error(capsys) == (
        "python -m nard_ai.training label: error: shards 0:5 go beyond the position set's shards: "
        f"{pset} has 4 shards, 0..3 (use a STOP of at most 4, or 0: for shard 0 to the last)"
    )
    with pytest.raises(ValueError) as exc:  # the library refuses it too
        run_labels(pset, out, make_plan("0ply"), workers=1, progress=False, shards=range(2, 5))
    assert str(exc.value) == (
        f"shards 2:5 go beyond the position set's shards: {pset} has 4 shards, 0..3 (use a STOP of at "
        "most 4, or 2: for shard 2 to the last)"
    )
    assert not any(out.iterdir())
    assert _label(pset, out, "--shards", "3:") == 0  # START: runs to the last shard
    assert sorted(p.name for p in out.glob("labels-*.json")) == ["labels-00003.json"]
    assert _label(pset, out, "--shards", "1:4") == 0  # a STOP of the shard count is the last shard
    assert sorted(p.name for p in out.glob("labels-*.json")) == [f"labels-0000{k}.json" for k in (1, 2, 3)]


def test_nearest_existing_walks_up_to_the_nearest_part_that_exists(tmp_path, monkeypatch):
    """The one walk of check_writable (nard_ai.model.atomic) and check_out_folder/make_out_folder (store)."""
    (tmp_path / "afile").write_text("x")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    assert nearest_existing(tmp_path / "new" / "deeper" / "x.pt") == tmp_path  # absolute
    assert nearest_existing(str(tmp_path)) == tmp_path  # the path itself, given as a str
    assert nearest_existing(Path(tmp_path.anchor) / "no-such-folder-here" / "x") == Path(tmp_path.anchor)
    assert nearest_existing(tmp_path / "afile" / "x" / "y") == tmp_path / "afile"  # a file: returned as it is
    # a dangling link exists by lexists (the default), not by stat (follow_symlinks=True)
    assert nearest_existing(tmp_path / "dangling" / "x") == tmp_path / "dangling"
    assert nearest_existing(tmp_path / "dangling" / "x", follow_symlinks=True) == tmp_path
    monkeypatch.chdir(tmp_path)
    assert nearest_existing(Path("new/deeper/x.pt")) == Path(".")  # relative: no part exists, ends at '.'
    assert nearest_existing("afile/x") == Path("afile")
    assert nearest_existing("dangling") == Path("dangling")
    assert nearest_existing(".") == Path(".") and nearest_existing("") == Path(".")
    assert nearest_existing("..") == Path("..")
    with monkeypatch.context() as m:  # nothing exists at all: the walk ends at '.' or the root, no loop
        m.setattr("os.path.lexists", lambda path: False)
        assert nearest_existing("new/deeper/x.pt") == Path(".") and nearest_existing(".") == Path(".")
        assert nearest_existing(tmp_path / "new") == Path(tmp_path.anchor)
    # the callers' behaviour: a dangling link on an --out path is no file to refuse here (mkdir says why)
    assert check_out_folder(tmp_path / "dangling" / "x") == tmp_path / "dangling" / "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "dangling"]  # nothing made


def test_an_out_that_cannot_be_a_folder_is_worded_as_positions_words_it(pset, tmp_path, capsys):
    """D11: label said ``[Errno 17] File exists``, ``[Errno 20] Not a directory`` and, for /proc/x,
    ``[Errno 2] No such file or directory``; positions failed on /proc/x only after all its games."""
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    for out in (afile, afile / "x"):
        assert _label(pset, out) == 2
        assert _error(capsys) == (
            f"python -m nard_ai.training label: error: {afile} is a file, not a folder; choose another --out"
        )
    if sys.platform.startswith("linux") and Path("/proc/self").is_dir():  # /proc takes no new folder
        assert _label(pset, Path("/proc/x")) == 2
        assert _error(capsys).endswith("cannot create the folder /proc/x (No such file or directory); "
                                       "choose another --out")  # fmt: skip
        assert main(["positions", "--count", "5", "--out", "/proc/x", "--no-progress"]) == 2
        assert _error(capsys) == (
            "python -m nard_ai.training positions: error: cannot create the folder /proc/x (No such file or "
            "directory); choose another --out"
        )


def test_a_failed_run_removes_only_the_folders_it_made(pset, tmp_path, capsys):
    """D12, D14: a positions shard changed since the set was written (its SHA-256), or a manifest whose
    ``rows`` was edited, is refused before the labels folder is made (it was made, with run.json and
    run.log, and left behind); a run that fails before labelling a shard removes the folders it made,
    never one that was there before."""
    changed = tmp_path / "changed"
    shutil.copytree(pset, changed)
    csv = changed / "positions-00002.csv"
    csv.write_text("".join(csv.read_text().splitlines(keepends=True)[:2]))  # one row of two left
    nested = tmp_path / "new" / "sub" / "lab"
    assert _label(changed, nested) == 2
    assert _error(capsys).endswith(f"{csv}: its SHA-256 does not match the manifest (the file changed)")
    assert not (tmp_path / "new").exists()

    edited = tmp_path / "edited"
    shutil.copytree(pset, edited)
    manifest = json.loads((edited / "positions.json").read_text())
    manifest["shards"][1]["rows"] = 3
    (edited / "positions.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=r"positions-00001\.csv: 2 rows, but positions\.json says 3"):
        read_position_set(edited)
    assert _label(edited, nested) == 2
    assert "positions-00001.csv: 2 rows, but positions.json says 3" in _error(capsys)
    assert not (tmp_path / "new").exists()

    # a shard that does not read (a class that is not its position's), manifest made to agree: refused
    # before the folder is made, although it is the last shard to label
    wrong = tmp_path / "wrong"
    shutil.copytree(pset, wrong)
    csv = wrong / "positions-00003.csv"
    csv.write_text(csv.read_text().replace(",bearoff", ",race", 1))
    manifest = json.loads((wrong / "positions.json").read_text())
    manifest["shards"][3]["sha256"] = file_provenance(csv)["sha256"]
    (wrong / "positions.json").write_text(json.dumps(manifest))
    assert _label(wrong, nested) == 2
    assert _error(capsys).endswith(f"{csv}, line 2: class 'race', but the position is 'bearoff'")
    assert not (tmp_path / "new").exists()

    # a failure inside the labelling (here every shard fails) in a new folder, and in an existing one
    def fail(task):
        raise ValueError("shard failed")

    before = tmp_path / "before"
    before.mkdir()
    for out, kept in ((tmp_path / "made" / "lab", False), (before, True)):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(labels_mod, "label_shard", fail)
            with pytest.raises(ValueError, match="shard failed"):
                run_labels(pset, out, make_plan("0ply"), workers=1, progress=False)
        assert out.exists() is kept
    assert not (tmp_path / "made").exists()
    assert (before / "run.json").is_file()  # the folder that existed keeps its run, for a rerun


# --------------------------------------------------------------------------- D10: interrupted positions


def test_interrupted_positions_says_nothing_was_kept(tmp_path, monkeypatch, capsys):
    """D10: positions writes its set only at the end (write_position_set after generate_positions), so an
    interrupt during generation keeps nothing; it said ``complete shards are kept: rerun ... to resume``."""
    import nard_ai.training.positions as positions

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(positions, "generate_positions", interrupted)
    out = tmp_path / "p"
    assert main(["positions", "--count", "5", "--out", str(out), "--no-progress"]) == 130
    assert capsys.readouterr().err.strip() == (
        "interrupted; no position set was written (it is written only at the end): rerun the command to "
        "start over"
    )
    assert not out.exists()


def test_positions_prints_the_classes_a_set_can_hold(tmp_path, monkeypatch, capsys):
    """D17: the summary printed an always-zero ``"over": 0`` (no pre-roll position of a running game is
    over; parse_proportions refuses the class); the manifest still counts every class."""
    import nard_ai.training.positions as positions

    info = {"plies": 0, "games_started": 0, "shortfall": {}, "settings": {}}
    monkeypatch.setattr(
        positions,
        "generate_positions",
        lambda *a, **k: PositionSet(BOARDS, classify_positions(BOARDS), dict(info)),
    )
    out = tmp_path / "p"
    assert main(["positions", "--count", "8", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out.splitlines()[-1]
    assert printed == 'classes: {"bearoff": 2, "race": 2, "crashed": 2, "contact": 2}'
    assert read_position_set(out)["classes"]["over"] == 0


# --------------------------------------------------------------------------- D13: options that do nothing


def test_rollout_options_without_a_rollout_and_a_class_named_twice_are_refused(pset, tmp_path, capsys):
    """D13: rollout settings with a method that rolls nothing out were silently ignored; in a mix the
    last of two entries for one class won."""
    out = tmp_path / "lab"
    assert _label(pset, out, "--truncate", "5") == 2
    assert _error(capsys).endswith("error: --truncate applies only to rollouts (--method rollout, or "
                                   "CLASS=rollout in --mix), and this plan rolls out no class")  # fmt: skip
    argv = ["--rollout-ply", "1", "--games", "5", "--variance-reduction", "on"]
    assert main(["label", "--positions", str(pset), "--out", str(out), "--method", "1ply", *argv]) == 2
    assert "--games, --rollout-ply, --variance-reduction apply only to rollouts" in _error(capsys)
    assert (
        main(["label", "--positions", str(pset), "--out", str(out), "--mix", "bearoff=1ply,bearoff=exact"])
        == 2
    )
    assert _error(capsys).endswith("the label mix names bearoff twice (bearoff=1ply and bearoff=exact); "
                                   "name each class once")  # fmt: skip
    assert not out.exists()
    with pytest.raises(
        ValueError, match=r"rollout settings \(games, truncate\) given, but the plan rolls out"
    ):
        make_plan("2ply", games=5, truncate=3)
    with pytest.raises(ValueError, match="names race twice"):
        parse_mix("race=rollout,race=2ply")
    # with a class rolled out they apply (to it)
    assert make_plan("2ply", "race=rollout", games=36)["race"].games == 36


def test_an_ensemble_member_named_twice_is_refused(tmp_path, capsys):
    """D13: ``ensemble --out e.pt m1.pt m1.pt`` built the ensemble of a network with itself (the same
    network at twice the cost); a copy of the same bytes is the same member."""
    m1 = default_checkpoint_path()
    copy = tmp_path / "copy.pt"
    shutil.copy(m1, copy)
    out = tmp_path / "e.pt"
    assert main(["ensemble", "--out", str(out), str(m1), str(m1)]) == 2
    assert _error(capsys).endswith(f"member 2 ({m1}) is member 1 again: name each member once")
    assert main(["ensemble", "--out", str(out), str(m1), str(copy)]) == 2
    assert _error(capsys).endswith(
        f"member 2 ({copy}) is the same checkpoint as member 1 ({m1}): the same SHA-256; the ensemble of a "
        "network with itself is that network"
    )
    assert not out.exists()


# --------------------------------------------------------------------------- D17: the labels reader


def test_empty_shards_a_bad_id_and_a_partial_folder_are_said_as_they_are(pset, tmp_path, capsys, caplog):
    """D17: complete shards of a header only said ``no complete label shards``; a bad Position ID in a label
    CSV said ``Position ID number 0: ...`` without file or line; a folder with some shards labelled gave
    no note (the label command's summary and the reader, which knows the count from run.json, say it)."""
    out = tmp_path / "lab"
    assert _label(pset, out, "--max-shards", "1") == 0
    err = capsys.readouterr().err.strip()
    assert err == (
        f"note: 1 of the position set's 4 shards are labelled in {out}; training reads those only (rerun "
        "without --max-shards or --shards to label the rest)"
    )
    with caplog.at_level(logging.WARNING, logger="nard_ai.training.store"):
        ids, _ = read_labels(out)
    assert len(ids) == 2
    assert caplog.messages == [
        f"note: {out}: 1 of the 4 label shards of its position set are complete; reading those 1 (rerun "
        "its label command to label the rest)"
    ]
    caplog.clear()
    assert _label(pset, out) == 0 and "note" not in capsys.readouterr().err
    with caplog.at_level(logging.WARNING, logger="nard_ai.training.store"):
        assert len(read_labels(out)[0]) == 8
    assert not caplog.messages

    empty = tmp_path / "empty"
    empty.mkdir()
    import hashlib

    for k in range(2):  # complete (sidecar and CSV agree) but header only
        data = (HEADER + "\n").encode()
        (empty / f"labels-0000{k}.csv").write_bytes(data)
        (empty / f"labels-0000{k}.json").write_text(
            json.dumps({"csv_sha256": hashlib.sha256(data).hexdigest(), "rows": 0})
        )
    with pytest.raises(ValueError, match=r"its 2 complete label shards hold no rows \(a header only\)"):
        read_labels(empty)

    bad = f"{HEADER}\n{position_id(starting_board())},0.5,0.1,0,0.1,0\n!!!!!!!!!!!!!!,0.5,0.1,0,0.1,0\n"
    with pytest.raises(ValueError, match=r"^lab/labels-00003\.csv, line 3: "):
        parse_labels_csv(bad, "lab/labels-00003.csv")
