"""Chapter 4 (Huang & Li): the transformer baseline of App. B.1.4 (section "Claim 6").

The sum ``x1 + x2 + … + xm =`` as a token sequence (:func:`addition_sequences`) read by the book's
decoder (:class:`lengthgen.nn.decoder.Decoder`, one layer, one head, learned absolute positions)
at the last position (:class:`LastTokenDecoder`), with the B.1.4 initialisation.
"""

from __future__ import annotations

import torch

from lengthgen.chapters.ch4.data import check_length, check_modulus, check_tokens
from lengthgen.chapters.ch4.paper import INIT_STD, TRANSFORMER_INIT_SEED_OFFSET
from lengthgen.config import check_finite, check_positive_int


def addition_sequences(tokens: torch.Tensor, p: int) -> torch.Tensor:
    """B.1.4 tokenisation: ``x1 + x2 + … + xm =`` with ``+`` = id p and ``=`` = id p+1; [n, 2m]."""
    tok = check_tokens(tokens, p)
    n, m = tok.shape
    seq = torch.full((n, 2 * m), p, dtype=torch.long)
    seq[:, 0::2] = tok
    seq[:, -1] = p + 1
    return seq


class LastTokenDecoder:
    """The chapter-3 :class:`~lengthgen.nn.decoder.Decoder` read out at the last position (the
    ``=``), initialised as in B.1.4 (weights N(0, 0.01²), biases 0, LayerNorm 1/0) from generator
    ``seeds[e] + TRANSFORMER_INIT_SEED_OFFSET``, then copied to ``device``.
    """

    def __init__(
        self, p: int, m: int, activation: str, d_model: int = 64, init_std: float = INIT_STD
    ):
        from lengthgen.nn.decoder import Decoder

        self.p, self.m = check_modulus(p), check_length(m)
        check_positive_int("d_model", d_model)
        self.dec = Decoder(
            "learned_abs",
            n_layers=1,
            n_heads=1,
            d_model=d_model,
            vocab=p + 2,
            activation=activation,
            L0=2 * m,
            n_out=p,
        )
        self.init_std = check_finite("init_std", init_std, nonnegative=True)

    def init(self, seeds, dtype=torch.float32, device=None):
        """Per-member parameters ``{name: [E, ...]}`` on ``device`` with the B.1.4 initialisation."""
        params = self.dec.init(seeds, dtype=dtype, device=device)
        for e, s in enumerate(seeds):
            g = torch.Generator().manual_seed(int(s) + TRANSFORMER_INIT_SEED_OFFSET)
            for name, t in params.items():
                leaf = name.split(".")[-1]
                if leaf.endswith("_g"):
                    continue
                if leaf.startswith("b") or leaf.endswith("_b"):
                    t[e].zero_()
                else:
                    t[e].copy_(torch.randn(t[e].shape, generator=g) * self.init_std)
        return params

    def forward(self, params, x):
        """Logits at the last position: [E, B, p]."""
        return self.dec.forward(params, x.long())[:, :, -1]
