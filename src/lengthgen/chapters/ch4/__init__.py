"""Chapter 4: Huang & Li, *Provable Benefits of Sinusoidal Activation for Modular Addition*.

* :mod:`.modular`     -- data, the sine/ReLU MLPs, the exact constructions and their checks
* :mod:`.experiments` -- the chapter's training studies and the transformer baseline; ``reproduce ch4``
"""
