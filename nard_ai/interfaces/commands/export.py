"""``nard export``: write the network as ONNX, for engines and frontends in other languages.

The work is :func:`nard_ai.model.onnx_export.export_onnx` (its module docstring defines the graph's
inputs, outputs and metadata); this module reads the command line, reports what was written on
stdout, and turns every failure (a missing or corrupt checkpoint, a path that cannot be written,
the ``onnx`` extra not installed) into one ``nard export: error: ...`` line with exit status 2.
"""

from __future__ import annotations

import argparse

from nard_ai.interfaces.commands.common import add_checkpoint, checkpoint_missing

NAME = "export"
SUMMARY = "write the network as an ONNX file (every phase net) for other languages' runtimes"
DESCRIPTION = (
    "Write the network of a checkpoint (the shipped nard-expert.pt by default; a shipped network may be "
    "named by its file name alone, from any folder), every phase "
    "net (contact, crashed and race for the default network), as one ONNX file: input 'inputs' (N, S) float32, the boards encoded "
    "by the checkpoint's encoder (S = 312 for the default network's expert_race encoder, 221 for rich) from the side on roll's "
    "view; outputs 'outcomes' (N, 6), "
    "'probabilities' (N, 5, gnubg's win, win-gammon, win-backgammon, lose-gammon, lose-backgammon) "
    "and 'equity' (N,), all for the side on roll. The encoder, its version and the checkpoint's "
    "SHA-256 are in the file's metadata; the README's 'ONNX export' section has the input layout. "
    "The file is written atomically and checked in onnxruntime against torch. Needs the onnx extra "
    "(pip install 'nard_ai[onnx]')."
)
EXAMPLES = (
    "nard export --onnx nard-expert.onnx",
    "nard export --onnx td198.onnx --checkpoint nard-td198.pt",
)


def configure(parser: argparse.ArgumentParser) -> None:
    """``--onnx FILE`` (required) and ``--checkpoint PATH``."""
    parser.add_argument(
        "--onnx",
        required=True,
        metavar="FILE",
        help="the ONNX file to write (replaced if it exists; its folder must exist)",
    )
    add_checkpoint(parser, metavar="PATH")


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Export, print one line saying what was written; bad input or a failed export: status 2."""
    from nard_ai.model.onnx_export import export_onnx

    if not args.onnx:
        parser.error("--onnx needs a file name")
    try:
        result = export_onnx(args.onnx, args.checkpoint)
    except FileNotFoundError as exc:  # the checkpoint (export_onnx's one FileNotFoundError)
        checkpoint_missing(parser, exc)
    except (ImportError, ValueError) as exc:
        parser.error(str(exc))
    # "all": one network for every position (onnx_export.phase_nets); else the phase nets by name
    nets = "one net" if result.phase_nets == ("all",) else f"{', '.join(result.phase_nets)} nets"
    print(
        f"wrote {result.path}: {result.checkpoint.name} ({nets}), inputs (N, {result.input_size}) "
        f"encoded by {result.encoder}; checkpoint sha256 {result.checkpoint_sha256}"
    )
    return 0
