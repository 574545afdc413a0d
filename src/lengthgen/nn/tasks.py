"""Binary-string tasks shared by chapters 1 and 2 (Zhu & Chiang 2026 §2.1): FIRST, PARITY,
MAJORITY and INDEX (:func:`label`), on integer tensors of 0/1 with the string as the last
dimension; the test banks of App. D.3."""

from __future__ import annotations

import itertools

import torch

from lengthgen.config import check_choice, check_positive_int

TASKS = ("first", "parity", "majority", "index")


def check_bits(bits: torch.Tensor) -> torch.Tensor:
    """Validate a 0/1 string tensor (non-empty last dimension, entries in {0, 1})."""
    bits = torch.as_tensor(bits)
    if bits.ndim == 0 or bits.shape[-1] == 0:
        raise ValueError(f"strings must be non-empty, got shape {tuple(bits.shape)}")
    if bits.dtype.is_floating_point or bits.dtype == torch.bool:
        bits = bits.long()
    bad = (bits != 0) & (bits != 1)
    if bool(bad.any()):
        raise ValueError(f"strings must be binary (0/1); found symbol {int(bits[bad][0])}")
    return bits.long()


def label(task: str, bits, k=None) -> torch.Tensor:
    """The task's label for each string: w₁, Σ w mod 2, 1[Σ w ≥ (n+1)/2] (n odd) or w_k (``index``,
    ``k`` the 1-based query position)."""
    check_choice("task", task, TASKS)
    bits = check_bits(bits)
    n = bits.shape[-1]
    if task == "first":
        return bits[..., 0]
    if task == "parity":
        return bits.sum(-1) % 2
    if task == "majority":
        if n % 2 == 0:
            raise ValueError(f"majority is defined for odd n only, got n = {n}")
        return (bits.sum(-1) >= (n + 1) // 2).long()
    if k is None:
        raise ValueError("index needs the query position k")
    k = torch.as_tensor(k, dtype=torch.long)
    if bool((bad := (k < 1) | (k > n)).any()):
        raise ValueError(f"index query k must lie in [1, {n}], got {int(k[bad].flatten()[0])}")
    k = k.expand(bits.shape[:-1])
    return torch.gather(bits, -1, (k - 1).unsqueeze(-1)).squeeze(-1)


def all_strings(n: int) -> torch.Tensor:
    """Every binary string of length n, shape [2**n, n], in lexicographic order."""
    n = check_positive_int("n", n)
    if n > 24:
        raise ValueError(f"all_strings(n) enumerates 2**n strings; n = {n} is too large (max 24)")
    return torch.tensor(list(itertools.product((0, 1), repeat=n)), dtype=torch.long)


def random_strings(batch: int, n: int, generator=None, device=None) -> torch.Tensor:
    """``batch`` independent uniformly random strings of length n, shape [batch, n]."""
    batch, n = check_positive_int("batch", batch), check_positive_int("n", n)
    return torch.randint(0, 2, (batch, n), generator=generator, device=device)


# --------------------------------------------------------------------------- Zhu & Chiang (2026) App. D.3 banks
def _check_bank_size(size: int) -> int:
    if (size := check_positive_int("bank size", size, minimum=2)) % 2:
        raise ValueError(f"bank size must be even (balanced halves or pairs), got {size}")
    return size


def first_bank(n: int, size: int = 1000, generator=None) -> torch.Tensor:
    """FIRST test bank of Zhu & Chiang (D.3): ``size/2`` strings with w₁ = 0, then w₁ = 1."""
    size = _check_bank_size(size)
    bits = random_strings(size, n, generator)
    bits[:, 0] = (torch.arange(size) >= size // 2).long()
    return bits


def majority_bank(n: int, size: int = 1000, generator=None) -> torch.Tensor:
    """MAJORITY test bank (D.3): ``size/2`` random strings followed by their complements (n odd)."""
    if n % 2 == 0:
        raise ValueError(f"majority is defined for odd n only, got n = {n}")
    half = random_strings(_check_bank_size(size) // 2, n, generator)
    return torch.cat([half, 1 - half])


def index_bank(n: int, size: int = 1000, generator=None) -> tuple[torch.Tensor, torch.Tensor]:
    """INDEX test bank (D.3): ``size/2`` random (string, query) pairs, then the complemented
    strings with the same queries. Returns ``(strings [size, n], k [size])`` with k ∈ [1, n]."""
    half = random_strings(_check_bank_size(size) // 2, n, generator)
    k = torch.randint(1, n + 1, (len(half),), generator=generator)
    return torch.cat([half, 1 - half]), torch.cat([k, k])
