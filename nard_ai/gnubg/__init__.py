"""Rank 7, GNU Backgammon as an opponent and a referee (the optional ``gnubg`` package).

Never a teacher: nothing here feeds training. Imports only lower ranks (README, "Architecture").
"""
