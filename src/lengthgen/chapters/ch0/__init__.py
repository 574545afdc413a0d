"""Chapter 0 (background): softmax attention dilution and log-length scaling. :mod:`.dilution`:
closed forms of the favoured weight and the log-length scaling (§0.1–0.3); :mod:`.experiments`: the
stored run (the dilution grid) for ``reproduce ch0``; :mod:`.claims`: self-checks."""
