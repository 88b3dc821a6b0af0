"""Rank 10, interfaces: the ``nard`` command line, the HTTP backend, gnubg's external-player protocol, the terminal game.

The top of the library: may import every lower rank; nothing in nard_ai imports it (README, "Architecture").
"""
