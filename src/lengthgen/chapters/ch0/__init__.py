"""Chapter 0 (background): softmax attention dilution and log-length scaling. :mod:`.experiments`:
the closed forms (§0.1–0.3) and the stored run (the dilution grid); :mod:`.claims`: self-checks."""
