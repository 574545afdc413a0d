"""Model pieces used by more than one chapter.

* :mod:`lengthgen.nn.attention`  -- softmax attention with log-length scaling (chapters 0, 1, 3)
* :mod:`lengthgen.nn.positional` -- the five positional encodings and their kernel families (chapters 3, 4)
* :mod:`lengthgen.nn.decoder`    -- the causal decoder of chapter 3's study, reused as chapter 4's
  transformer baseline
* :mod:`lengthgen.nn.tasks`      -- the binary-string tasks FIRST, PARITY, MAJORITY, INDEX (chapters 1, 2)
"""
