import math

import pytest
import torch

from lengthgen.nn import attention
from lengthgen.nn import tasks


def test_labels_exhaustive_small():
    for n in range(1, 11):
        s = tasks.all_strings(n)
        assert s.shape == (2**n, n)
        assert torch.equal(tasks.label("first", s), s[:, 0])
        assert torch.equal(tasks.label("parity", s), torch.tensor([sum(r) % 2 for r in s.tolist()]))
        if n % 2:
            assert torch.equal(
                tasks.label("majority", s),
                torch.tensor([int(sum(r) > n / 2) for r in s.tolist()]),
            )
        for k in range(1, n + 1):
            assert torch.equal(tasks.label("index", s, k), s[:, k - 1])


def test_task_bad_input():
    with pytest.raises(ValueError, match="'sort'.*first"):
        tasks.label("sort", [[0, 1]])
    with pytest.raises(ValueError, match="non-empty"):
        tasks.label("first", torch.zeros(3, 0))
    with pytest.raises(ValueError, match="binary.*2"):
        tasks.label("first", [[0, 2]])
    with pytest.raises(ValueError, match="odd"):
        tasks.label("majority", [[0, 1]])
    with pytest.raises(ValueError, match=r"\[1, 2\].*3"):
        tasks.label("index", [[0, 1]], k=3)
    with pytest.raises(ValueError, match="query"):
        tasks.label("index", [[0, 1]])
    with pytest.raises(ValueError, match="n must be"):
        tasks.random_strings(3, 0)


def test_attention_hand_case_and_mask():
    q = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    k = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], dtype=torch.float64)
    v = torch.tensor([[1.0], [2.0], [3.0]], dtype=torch.float64)
    e = math.e

    def weights(q, k, **kw):  # the attention weights: attend to the identity
        return attention.attend(q, k, torch.eye(k.shape[-2], dtype=k.dtype), **kw)

    out, w = attention.attend(q, k, v), weights(q, k)
    assert w[0].tolist() == pytest.approx([e / (e + 2), 1 / (e + 2), 1 / (e + 2)])
    assert out.item() == pytest.approx((e + 2 + 3) / (e + 2))
    w3 = weights(q, k, scale=math.log(3))
    assert w3[0, 0].item() == pytest.approx(3 / 5)
    m = attention.causal_mask(3)
    ww = weights(k, k, mask=m)
    assert torch.all(ww[m.logical_not()] == 0) and torch.allclose(
        ww.sum(-1), torch.ones(3, dtype=torch.float64)
    )
    assert attention.log_length_scale(3) == math.log(3)
    with pytest.raises(ValueError):
        attention.log_length_scale(0)
