"""Train a network: TD(lambda) self-play (TD-Gammon style), or supervised on labelled positions. Logic: nard_ai.interfaces.train.

python train.py                                 # a new network, 200,000 games, into checkpoints/nard-rich__1.pt
python train.py --resume --games 400000         # continue that network up to 400,000 games
python train.py --resume --checkpoint checkpoints/nard-rich.pt --games N   # continue the TD network
tensorboard --logdir runs                       #   (N above its games_trained)
cp checkpoints/nard-rich.pt runs/gen1.pt && python train.py --supervised LABEL_DIR --resume --checkpoint runs/gen1.pt
                                                # fit it to labelled positions (nard_ai.training.supervised)
"""

from nard_ai.interfaces.cli import given_fields, parse_dataclass_args
from nard_ai.interfaces.train import LIMITS, Args, check_given, main  # noqa: F401  (the script's names)

if __name__ == "__main__":
    main(parse_dataclass_args(Args), given_fields(Args))
