"""The network of a checkpoint as one ONNX file, for runtimes in other languages (``nard export --onnx``).

A frontend in another language evaluates positions with the exported file and an ONNX runtime
(onnxruntime for C, C++, C#, Java, JavaScript, Rust, ...): it encodes each board itself, after the
layout of :func:`input_layout` (the checkpoint's encoder, :mod:`nard_ai.model.encoding`), and reads
the side on roll's outcome probabilities back. No Python is needed at run time.

The graph's interface
---------------------
One file holds every phase net of the checkpoint: for a network with a race net
(:class:`nard_ai.model.network.NetworkConfig` ``race_net``, as ``nard-rich.pt``) the
contact net and the race net, and the crashed net where it has one (``crashed_net``, as the default
``nard-expert.pt``); otherwise its
one net (``"all"``).

=================  ===============  ============================================================
name               shape, dtype     meaning
=================  ===============  ============================================================
``inputs``         ``(N, S)`` f32   N encoded boards, ``S`` = the encoder's size (221 for
                                    ``rich`` v1), each board **from its side on roll's view**;
                                    ``N`` is dynamic (1 or more)
``outcomes``       ``(N, 6)`` f32   the 6 exclusive outcomes of the side on roll, a softmax, in
                                    :data:`nard_ai.model.network.OUTCOMES` order: win single,
                                    win gammon, win backgammon, lose single, lose gammon, lose
                                    backgammon (non-negative, summing to 1)
``probabilities``  ``(N, 5)`` f32   gnubg's 5 cumulative numbers of the side on roll, in gnubg's
                                    order: win, win gammon, win backgammon, lose gammon, lose
                                    backgammon (:func:`nard_ai.model.network.exclusive_to_gnubg`)
``equity``         ``(N,)`` f32     cubeless money equity of the side on roll, points per game at
                                    cube 1 (gnubg ``Utility()``:
                                    :func:`nard_ai.model.network.cubeless_equity`)
=================  ===============  ============================================================

Each row goes to one phase net exactly as :meth:`nard_ai.model.network.Network.forward` routes it:
to the race net where ``inputs[:, race_unit] > 0.5`` (unit 220 of ``rich``: no contact), else to
the crashed net (if there is one) where either side is crashed by gnubg's rule, read from the
TD-Gammon units of the inputs (:func:`nard_ai.model.network.route_rows`), else to the contact net.
The graph computes every net on every row and selects per row (ONNX ``Where``), so a batch may mix
phases and a frontend encodes nothing beyond the inputs. To value an afterstate, swap it to the opponent's view first (the
opponent is then on roll) and invert the result, as :mod:`nard_ai.search` does.

Metadata
--------
``metadata_props`` of the model (:data:`METADATA_KEYS`) say what the file holds: ``format``
(:data:`FORMAT`), ``format_version``, ``encoder`` and ``encoder_version`` (the checkpoint's encoder,
which a frontend must reproduce), ``encoder_size``, ``race_unit`` (``"none"`` without a race net),
``phase_nets`` (comma-separated: ``contact,race``, ``contact,crashed,race`` or ``all``), ``board_layout_version``,
``outcomes`` and ``probabilities`` (the output columns, comma-separated), ``network`` (the
:class:`NetworkConfig` as JSON), ``games_trained``, ``checkpoint`` (its file name) and
``checkpoint_sha256`` (SHA-256 of the checkpoint file's bytes, hex).

Writing
-------
:func:`export_onnx` checks that the destination can be written (a temporary file
``.NAME.XXXXXXXX.tmp`` in its folder) before it exports, exports with ``torch.onnx.export``
(the dynamo exporter, which needs onnxscript), checks the model (``onnx.checker``), runs it in
onnxruntime on the starting position and a few other boards against torch (within
:data:`CHECK_TOLERANCE`), and only then renames the temporary file onto the destination, so a
failed export never leaves a half-written file.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from nard_ai.core.board import BAR, LAYOUT_VERSION, NUM_CHECKERS, NUM_POINTS, OPP_BAR, starting_board
from nard_ai.model.atomic import file_sha256
from nard_ai.model.embedding import CONSTANT_UNIT
from nard_ai.model.encoding import RICH_SIDE_FEATURES, Encoder
from nard_ai.model.expert import EXPERT_NAMES
from nard_ai.model.network import (
    CRASHED_ROUTE,
    GNUBG_OUTPUTS,
    OUTCOMES,
    Network,
    config_dict,
    cubeless_equity,
    default_checkpoint_path,
    exclusive_to_gnubg,
    load_checkpoint,
    resolve_checkpoint,
    route_rows,
)
from nard_ai.model.race_inputs import RACE_HALF_INPUTS, RACE_INPUT_NAMES

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "INPUT_NAME",
    "OUTPUT_NAMES",
    "METADATA_KEYS",
    "OPSET",
    "CHECK_TOLERANCE",
    "REQUIRED_MODULES",
    "InputRange",
    "OnnxExport",
    "input_layout",
    "input_layout_markdown",
    "phase_nets",
    "export_onnx",
    "read_metadata",
]

FORMAT = "nard_ai.onnx"
FORMAT_VERSION = 1
INPUT_NAME = "inputs"
OUTPUT_NAMES = ("outcomes", "probabilities", "equity")
OPSET = 18
"""The ONNX opset of the graph (ONNX 1.13, 2022): onnxruntime 1.14 and later run it, onnxruntime-web
included."""
CHECK_TOLERANCE = 1e-5
"""Largest absolute difference allowed between onnxruntime's and torch's outputs in the export's
own check."""
REQUIRED_MODULES = ("onnx", "onnxscript", "onnxruntime")
"""What an export needs beyond torch: the ``onnx`` extra (``pip install 'nard_ai[onnx]'``)."""
TMP_SUFFIX = ".tmp"

METADATA_KEYS = (
    "format",
    "format_version",
    "encoder",
    "encoder_version",
    "encoder_size",
    "race_unit",
    "phase_nets",
    "board_layout_version",
    "outcomes",
    "probabilities",
    "network",
    "games_trained",
    "checkpoint",
    "checkpoint_sha256",
)


@dataclass(frozen=True)
class InputRange:
    """Input units ``first .. last`` (inclusive) of an encoder and what they hold."""

    first: int
    last: int
    meaning: str

    @property
    def units(self) -> str:
        """``"0 .. 95"`` or ``"192"``: the range as the README table writes it."""
        return str(self.first) if self.first == self.last else f"{self.first} .. {self.last}"


_POINT_UNITS = (
    "4 units per point, for its ``n`` checkers there: ``n >= 1``, ``n >= 2``, ``n >= 3``, "
    "``(n - 3) / 2`` if ``n > 3`` else 0"
)

RICH_FEATURES = (
    "pip count / 150",
    "checkers back (on points 19..24 and the bar) / 5",
    "blots (points 1..24 with exactly one checker) / 5; 0 without contact",
    "shots: fraction of the 36 rolls on which the other side hits one of these blots; 0 without contact",
    "longest prime (consecutive points with 2 or more checkers) / 6",
    "home board points made (points 1..6) / 6",
    "anchors (points 19..24 made) / 2",
    "escapes of the rearmost checker (gnubg's `Escapes`) / 36; 1 without contact",
    "containment: fewest escapes from any of points 15..24 / 36; 1 without contact",
    "break-contact pips (gnubg's `I_BREAK_CONTACT`) / 150; 0 without contact",
    "points made on 1..24 / 12",
)
"""The 11 hand-made features of one side in ``rich`` v1, in unit order (short forms of the table in
:mod:`nard_ai.model.encoding`'s docstring, which gives their exact definitions)."""
if len(RICH_FEATURES) != RICH_SIDE_FEATURES:  # pragma: no cover - a guard against the encoder changing
    raise RuntimeError(f"RICH_FEATURES has {len(RICH_FEATURES)} entries, the encoder {RICH_SIDE_FEATURES}")


def input_layout(encoder: Encoder) -> tuple[InputRange, ...]:
    """Every input unit of an encoder, as consecutive ranges (the README's "ONNX export" table).

    Built from the encoder's own constants (:data:`nard_ai.core.board.NUM_POINTS`,
    :data:`~nard_ai.core.board.NUM_CHECKERS`, :data:`nard_ai.model.embedding.CONSTANT_UNIT`,
    :data:`nard_ai.model.encoding.RICH_SIDE_FEATURES`, ``encoder.race_unit``); the layouts are
    those of :mod:`nard_ai.model.encoding`'s docstring. "Side on roll" is the side the board is
    seen from (positive counts); each side's points are in its own numbering (24 down to 1 in
    its direction of play).

    Args:
        encoder: ``td198``, ``rich``, ``expert`` or ``expert_race`` at version 1.

    Returns:
        Ranges covering ``0 .. encoder.size - 1`` in order, without gaps.

    Raises:
        ValueError: for another encoder (no documented layout here).
    """
    if encoder.name not in ("td198", "rich", "expert", "expert_race") or encoder.version != 1:
        raise ValueError(
            f"no input layout for encoder {encoder.key}: td198@1, rich@1, expert@1 and expert_race@1 only"
        )
    half = 4 * NUM_POINTS
    bar = 2 * half
    rows = [
        InputRange(
            0,
            half - 1,
            f"side on roll's points 1..{NUM_POINTS}: point `p` at units `4 (p - 1) .. 4 (p - 1) + 3`, "
            + _POINT_UNITS,
        ),
        InputRange(
            half,
            bar - 1,
            f"opponent's points 1..{NUM_POINTS} in its own numbering (board index `{BAR} - q` for its "
            f"point `q`): point `q` at units `{half} + 4 (q - 1) ..`, the same 4 units",
        ),
        InputRange(bar, bar, "side on roll's checkers on the bar / 2"),
        InputRange(bar + 1, bar + 1, "opponent's checkers on the bar / 2"),
        InputRange(bar + 2, bar + 2, f"side on roll's checkers borne off / {NUM_CHECKERS}"),
        InputRange(bar + 3, bar + 3, f"opponent's checkers borne off / {NUM_CHECKERS}"),
        InputRange(CONSTANT_UNIT, CONSTANT_UNIT, 'always 1 (TD-Gammon\'s "side on roll" unit)'),
        InputRange(CONSTANT_UNIT + 1, CONSTANT_UNIT + 1, 'always 0 (TD-Gammon\'s "opponent on roll" unit)'),
    ]
    if encoder.name in ("rich", "expert", "expert_race"):
        first = CONSTANT_UNIT + 2
        for side, base in (("side on roll", first), ("opponent", first + RICH_SIDE_FEATURES)):
            for k, feature in enumerate(RICH_FEATURES):
                rows.append(InputRange(base + k, base + k, f"{side}: {feature}"))
        race = first + 2 * RICH_SIDE_FEATURES
        if encoder.race_unit != race:  # pragma: no cover - a guard against the encoder changing
            raise RuntimeError(
                f"encoder {encoder.key}: race unit {encoder.race_unit}, the layout says {race}"
            )
        rows.append(InputRange(race, race, "race: 1 when no checker can meet an opposing one again, else 0"))
    end = len(rows)
    if encoder.name in ("expert", "expert_race"):
        first = race + 1
        for side, base in (("side on roll", first), ("opponent", first + len(EXPERT_NAMES))):
            for k, name in enumerate(EXPERT_NAMES):
                rows.append(
                    InputRange(
                        base + k, base + k, f"{side}: gnubg's `{name}` (`nard_ai/model/expert.py`'s table)"
                    )
                )
        end = first + 2 * len(EXPERT_NAMES)
    if encoder.name == "expert_race":
        for side, base in (("side on roll", end), ("opponent", end + RACE_HALF_INPUTS)):
            for k, name in enumerate(RACE_INPUT_NAMES):
                rows.append(
                    InputRange(base + k, base + k, f"{side}: {name} (`nard_ai/model/race_inputs.py`)")
                )
        whole = end + 2 * RACE_HALF_INPUTS
        rows.append(InputRange(whole, whole, "pip lead of the side on roll / 20"))
        rows.append(InputRange(whole + 1, whole + 1, "(pip lead + 4) / sqrt(both pip counts)"))
        rows.append(InputRange(whole + 2, whole + 2, "10 x pip lead / both pip counts"))
        end = whole + 3
    if encoder.name in ("expert", "expert_race") and end != encoder.size:  # pragma: no cover - a guard
        raise RuntimeError(f"encoder {encoder.key}: {encoder.size} inputs, the layout says {end}")
    return tuple(rows)


def input_layout_markdown(encoder: Encoder) -> str:
    """The :func:`input_layout` of ``encoder`` as a Markdown table (``| units | meaning |``), as the
    README shows it; one line per range, no trailing newline."""
    lines = ["| units | meaning |", "|---|---|"]
    lines += [f"| {r.units} | {r.meaning.replace('``', '`')} |" for r in input_layout(encoder)]
    return "\n".join(lines)


def phase_nets(network: Network) -> tuple[str, ...]:
    """The names of a network's phase nets as the export writes them: ``("contact", "race")`` with
    a race net, ``("contact", "crashed", "race")`` with a crashed net too, else ``("all",)``."""
    if network.race_mlp is None:
        return ("all",)
    return ("contact", "crashed", "race") if network.crashed_mlp is not None else ("contact", "race")


class _Graph(nn.Module):
    """What is exported: encoded inputs ``(N, S)`` -> ``(outcomes (N, 6), probabilities (N, 5),
    equity (N,))``, all for the side on roll, routed per row like ``Network.forward``."""

    def __init__(self, network: Network) -> None:
        super().__init__()
        self.contact = network.mlp
        self.race = network.race_mlp
        self.crashed = network.crashed_mlp
        self.race_unit = network.encoder.race_unit

    def forward(self, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        outcomes = torch.softmax(self.contact(inputs), dim=-1)
        if self.crashed is not None:
            crashed = route_rows(inputs, self.race_unit, True)[:, None] == CRASHED_ROUTE
            outcomes = torch.where(crashed, torch.softmax(self.crashed(inputs), dim=-1), outcomes)
        if self.race is not None:
            race = inputs[:, self.race_unit : self.race_unit + 1] > 0.5
            outcomes = torch.where(race, torch.softmax(self.race(inputs), dim=-1), outcomes)
        probabilities = exclusive_to_gnubg(outcomes)
        return outcomes, probabilities, cubeless_equity(probabilities)


@dataclass(frozen=True)
class OnnxExport:
    """What :func:`export_onnx` wrote.

    Attributes:
        path: the ONNX file.
        checkpoint: the checkpoint exported.
        checkpoint_sha256: SHA-256 of the checkpoint file's bytes (hex).
        encoder: the encoder's ``"name@version"``.
        input_size: units per encoded board.
        phase_nets: the nets in the file (:func:`phase_nets`).
        metadata: the model's ``metadata_props`` (:data:`METADATA_KEYS`).
        max_check_error: the largest absolute difference between onnxruntime's and torch's
            outputs in the export's own check.
    """

    path: Path
    checkpoint: Path
    checkpoint_sha256: str
    encoder: str
    input_size: int
    phase_nets: tuple[str, ...]
    metadata: dict[str, str]
    max_check_error: float


def _require_onnx() -> None:
    missing = []
    for name in REQUIRED_MODULES:
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise ImportError(
            f"ONNX export needs the packages {', '.join(REQUIRED_MODULES)} (missing: {', '.join(missing)}); "
            "install them with: pip install 'nard_ai[onnx]'"
        )


@contextlib.contextmanager
def _quiet_exporter() -> Iterator[None]:
    # torch.onnx logs a warning per optional torchvision op it cannot register and warns about
    # deprecated pytree types: noise for a user of `nard export`, nothing about this graph
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


def _check_boards() -> np.ndarray:
    """Boards for the export's own check: the start, a contact, a race and a crashed position (side on roll's
    view; the crashed one: the side on roll has 5 checkers left, two of them on the opponent's 1-point,
    three on its own 1-point, where the opponent's 2 start checkers were: the opponent has 13)."""
    start = starting_board()
    contact = start.copy()
    contact[[24, 13, 8, 6]] = (1, 4, 3, 5)
    contact[[7, 5]] = (1, 1)
    contact[[1, 12]] = (-2, -5)
    race = np.zeros_like(start)
    race[[6, 5, 4, 3, 2, 1]] = (3, 3, 3, 2, 2, 2)
    race[[24, 23, 22, 19]] = (-4, -4, -4, -3)
    race[OPP_BAR] = 0
    crashed = np.minimum(start, 0)
    crashed[[24, 1]] = (2, 3)
    return np.stack([start, contact, race, crashed]).astype(np.int8)


def _temporary(path: Path) -> tuple[int, str]:
    """A temporary file beside ``path`` (``ValueError`` naming the path when it cannot be written)."""
    if path.is_dir():
        raise ValueError(f"cannot write the ONNX file {path}: it is a folder")
    parent = path.parent
    if not parent.is_dir():
        raise ValueError(f"cannot write the ONNX file {path}: no folder {parent}")
    try:
        return tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=parent)
    except OSError as exc:
        raise ValueError(f"cannot write the ONNX file {path}: {exc.strerror or exc}") from exc


def export_onnx(path: str | os.PathLike, checkpoint: str | os.PathLike | None = None) -> OnnxExport:
    """Write a checkpoint's network, every phase net, as one ONNX file (interface: module docstring).

    Args:
        path: the ONNX file to write (replaced atomically if it exists); its folder must exist.
        checkpoint: the checkpoint to export (a shipped network also by its file name alone,
            :func:`nard_ai.model.network.resolve_checkpoint`); ``None`` for the default network
            (:func:`nard_ai.model.network.default_checkpoint_path`, ``nard-expert.pt``).

    Returns:
        An :class:`OnnxExport` describing the file.

    Raises:
        ImportError: onnx, onnxscript or onnxruntime is not installed (the ``onnx`` extra).
        FileNotFoundError: no checkpoint file at ``checkpoint``.
        ValueError: the checkpoint is corrupt or does not match this code (as
            :func:`nard_ai.model.network.load_checkpoint` says), its encoder has no documented layout
            (:func:`input_layout`), the destination is a folder (or ends in ``/``) or the checkpoint
            itself, its folder does not exist or cannot be written, torch.onnx fails to export the
            network, or onnxruntime's outputs differ from torch's by more than
            :data:`CHECK_TOLERANCE` (nothing is written then).
    """
    _require_onnx()
    import onnx
    import onnxruntime

    text = os.fspath(path)
    path = Path(text)
    if isinstance(text, str) and text.endswith(("/", os.sep)) and not path.is_dir():
        # pathlib drops the trailing '/': without this, 'out/' would write a file named 'out'
        raise ValueError(f"cannot write the ONNX file {text}: a path ending in '/' names a folder")
    # a shipped network by its file name alone from any folder, as every command line takes it
    source = resolve_checkpoint(checkpoint) if checkpoint is not None else default_checkpoint_path()
    loaded = load_checkpoint(source)
    with contextlib.suppress(OSError):
        if path.exists() and os.path.samefile(path, source):  # the export would replace its own checkpoint
            raise ValueError(f"cannot write the ONNX file {path}: it is the checkpoint being exported")
    network = loaded.network
    encoder = network.encoder
    input_layout(encoder)  # a ValueError for an encoder whose inputs a frontend could not know
    digest = file_sha256(source)
    nets = phase_nets(network)
    metadata = {
        "format": FORMAT,
        "format_version": str(FORMAT_VERSION),
        "encoder": encoder.name,
        "encoder_version": str(encoder.version),
        "encoder_size": str(encoder.size),
        "race_unit": "none" if network.race_mlp is None else str(encoder.race_unit),
        "phase_nets": ",".join(nets),
        "board_layout_version": str(LAYOUT_VERSION),
        "outcomes": ",".join(OUTCOMES),
        "probabilities": ",".join(GNUBG_OUTPUTS),
        "network": json.dumps(config_dict(network.config)),
        "games_trained": str(loaded.games_trained),
        "checkpoint": source.name,
        "checkpoint_sha256": digest,
    }
    fd, tmp = _temporary(path)
    try:
        graph = _Graph(network).eval()
        example = torch.from_numpy(encoder.encode(_check_boards()))
        try:
            with _quiet_exporter(), torch.no_grad():
                program = torch.onnx.export(
                    graph,
                    (example,),
                    None,
                    input_names=[INPUT_NAME],
                    output_names=list(OUTPUT_NAMES),
                    opset_version=OPSET,
                    dynamic_shapes={"inputs": {0: torch.export.Dim("batch")}},
                    dynamo=True,
                    verbose=False,
                )
        except Exception as exc:  # the exporter's own error kinds vary between torch releases
            raise ValueError(
                f"torch.onnx could not export {source.name}: {type(exc).__name__}: {exc}"
            ) from exc
        model = program.model_proto
        model.doc_string = (
            f"nard_ai network {source.name} ({', '.join(nets)}): {INPUT_NAME} (N, {encoder.size}) float32 "
            f"encoded by {encoder.key} -> outcomes (N, 6), probabilities (N, 5), equity (N,) for the side on roll"
        )
        del model.metadata_props[:]
        for key in METADATA_KEYS:
            entry = model.metadata_props.add()
            entry.key, entry.value = key, metadata[key]
        onnx.checker.check_model(model)
        data = model.SerializeToString()
        max_error = _check_against_torch(onnxruntime, data, graph, example)
        with os.fdopen(fd, "wb") as f:
            fd = -1
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it private; give it a normal file's mode
        os.replace(tmp, path)
    except OSError as exc:
        raise ValueError(f"cannot write the ONNX file {path}: {exc.strerror or exc}") from exc
    finally:
        if fd >= 0:
            os.close(fd)
        if os.path.exists(tmp):
            os.unlink(tmp)
    return OnnxExport(
        path=path,
        checkpoint=source,
        checkpoint_sha256=digest,
        encoder=encoder.key,
        input_size=encoder.size,
        phase_nets=nets,
        metadata=metadata,
        max_check_error=max_error,
    )


def _check_against_torch(onnxruntime, data: bytes, graph: _Graph, inputs: torch.Tensor) -> float:
    """Run the serialized model in onnxruntime and compare with torch; the largest difference."""
    session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    got = session.run(list(OUTPUT_NAMES), {INPUT_NAME: inputs.numpy()})
    with torch.no_grad():
        want = [t.numpy() for t in graph(inputs)]
    error = max(float(np.max(np.abs(g - w))) for g, w in zip(got, want, strict=True))
    if not error <= CHECK_TOLERANCE:
        raise ValueError(
            f"the exported graph differs from torch by {error:.3g} (more than {CHECK_TOLERANCE:g}) in onnxruntime"
        )
    return error


def read_metadata(path: str | os.PathLike) -> dict[str, str]:
    """The ``metadata_props`` of an ONNX file as a dict (all keys, not only :data:`METADATA_KEYS`).

    Raises:
        ImportError: onnx is not installed.
        FileNotFoundError: no file at ``path``.
        ValueError: the file is not a readable ONNX model.
    """
    import onnx

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no ONNX file at {path}")
    try:
        model = onnx.load_model(str(path), load_external_data=False)
    except Exception as exc:  # protobuf's DecodeError and others on damaged bytes
        raise ValueError(f"{path}: not a readable ONNX model ({type(exc).__name__})") from exc
    return {entry.key: entry.value for entry in model.metadata_props}
