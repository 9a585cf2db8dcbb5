"""Arena ratings: battles, Elo, Bradley-Terry and style control with bootstrap and rank
intervals, pairing, win matrices and imported votes."""
