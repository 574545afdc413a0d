"""Model pieces used by more than one chapter: attention with log-length scaling, the five
positional encodings, the causal decoder (chapters 3, 4) and the binary-string tasks (1, 2)."""
