import json

import pytest

from lengthgen import claims
from lengthgen.claims import ClaimFailed, Ledger
from lengthgen.store import ResultFileError


def _ledger():
    return Ledger("ch0", paper="test paper", scale="smoke")


def test_statuses(tmp_path):
    led = _ledger()
    led.check("ch0.a", location="Fig 1", statement="s", paper_value=0.5, our_value=0.51,
              comparison="tolerance", tolerance=0.02)
    led.check("ch0.b", location="Tab 1", statement="s", paper_value=3, our_value=4, comparison="equal",
              known_deviation="we count differently")
    led.not_reproducible("ch0.c", location="§5", statement="BLEU", paper_value=1.0, reason="no data set")
    led.check("ch0.d", location="Fig 2", statement="s", paper_value=0.8, our_value=0.7, comparison="ci",
              interval=(0.75, 0.85))
    led.check("ch0.e", location="Fig 2", statement="s", paper_value="qualitative", our_value=[1, 2],
              comparison="predicate", holds=True)
    assert [c.status for c in led.claims] == ["reproduced", "deviates", "not-reproducible", "reproduced", "reproduced"]
    assert led.counts() == {"reproduced": 3, "deviates": 1, "not-reproducible": 1}
    assert led.claims[1].reason == "we count differently"


def test_failing_claim_raises():
    led = _ledger()
    with pytest.raises(ClaimFailed, match="ch0.x"):
        led.check("ch0.x", location="l", statement="s", paper_value=1.0, our_value=2.0,
                  comparison="tolerance", tolerance=0.1)
    with pytest.raises(ClaimFailed):
        led.check("ch0.y", location="l", statement="s", paper_value="q", our_value=0, comparison="predicate", holds=False)
    with pytest.raises(ClaimFailed):
        led.check("ch0.z", location="l", statement="s", paper_value=0.5, our_value=0.9, comparison="interval",
                  interval=(0.4, 0.6))
    assert led.claims == []


def test_declared_deviation_that_holds_is_reproduced():
    c = _ledger().check("ch0.a", location="l", statement="s", paper_value=1, our_value=1, comparison="equal",
                        known_deviation="expected to differ")
    assert c.status == "reproduced" and c.reason == ""


def test_bad_arguments():
    with pytest.raises(ValueError, match="ch9"):
        Ledger("ch9", paper="p")
    led = _ledger()
    with pytest.raises(ValueError, match="must start with 'ch0.'"):
        led.check("ch1.a", location="l", statement="s", paper_value=1, our_value=1, comparison="equal")
    with pytest.raises(ValueError, match="comparison"):
        led.check("ch0.a", location="l", statement="s", paper_value=1, our_value=1, comparison="roughly")
    with pytest.raises(ValueError, match="tolerance"):
        led.check("ch0.a", location="l", statement="s", paper_value=1, our_value=1, comparison="tolerance")
    with pytest.raises(TypeError, match="holds"):
        led.check("ch0.a", location="l", statement="s", paper_value=1, our_value=1, comparison="predicate")
    with pytest.raises(ValueError, match="source"):
        led.check("ch0.a", location="l", statement="s", paper_value=1, our_value=1, comparison="equal", source="web")
    with pytest.raises(ValueError, match="reason"):
        led.not_reproducible("ch0.a", location="l", statement="s", paper_value=1, reason="")


def test_json_round_trip(tmp_path):
    import numpy as np

    led = _ledger()
    led.check("ch0.a", location="l", statement="s", paper_value=[0.8, 0.4], our_value=np.array([0.8, 0.41]),
              comparison="tolerance", tolerance=0.02)
    path = led.save(tmp_path)
    rows = claims.load_ledger("ch0", tmp_path)
    assert rows == json.loads(path.read_text())
    r = rows[0]
    for key in ("id", "chapter", "status", "paper_value", "our_value", "scale", "source", "comparison", "tolerance"):
        assert key in r
    assert r["our_value"] == [0.8, 0.41] and r["chapter"] == "ch0" and r["source"] == "live"
    assert claims.load_all(tmp_path) == rows
    sc = claims.scorecard(tmp_path)
    assert sc.set_index("chapter").loc["ch0", "reproduced"] == 1
    assert len(led.table()) == 1


def test_corrupt_ledger_names_file(tmp_path):
    (tmp_path / "ch1.json").write_text("{not json")
    with pytest.raises(ResultFileError, match="ch1.json"):
        claims.load_ledger("ch1", tmp_path)
    (tmp_path / "ch2.json").write_text('{"a": 1}')
    with pytest.raises(ResultFileError, match="ch2.json"):
        claims.load_ledger("ch2", tmp_path)
