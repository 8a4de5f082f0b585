"""Validation helpers, seeds and the data search path."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench import _rng, data
from workbench import _validate as V


def test_validators_accept_and_convert():
    assert V.positive("x", 2) == 2.0 and isinstance(V.positive("x", 2), float)
    assert V.positive("x", math.inf, allow_inf=True) == math.inf
    assert V.integer("n", 3.0) == 3
    assert V.probability("p", 1) == 1.0
    np.testing.assert_array_equal(V.array_1d("a", [1, 2]), [1.0, 2.0])


@pytest.mark.parametrize(
    "call, err, match",
    [
        (lambda: V.positive("rate_rps", 0), ValueError, r"rate_rps must satisfy 0 < value < inf, got 0.0"),
        (lambda: V.positive("rate_rps", math.inf), ValueError, "rate_rps"),
        (lambda: V.positive("rate_rps", "3"), TypeError, "rate_rps must be a real number, got str"),
        (lambda: V.positive("rate_rps", True), TypeError, "got bool"),
        (lambda: V.finite("x", float("nan")), ValueError, "x must be a number, got NaN"),
        (lambda: V.in_range("u", 1.0, 0, 1, high_inclusive=False), ValueError, r"u must be in \[0, 1\), got 1.0"),
        (lambda: V.integer("n", 2.5), TypeError, "n must be an integer"),
        (lambda: V.integer("n", 0, minimum=1), ValueError, "n must be >= 1, got 0"),
        (lambda: V.one_of("scheme", "x", ["ecmp", "spray"]), ValueError, "scheme must be one of 'ecmp', 'spray'"),
        (lambda: V.array_1d("a", [1.0, np.nan]), ValueError, "a must be finite; element 1 is nan"),
        (lambda: V.array_1d("a", [[1.0]]), ValueError, "a must be 1-D"),
        (lambda: V.array_1d("a", [], min_size=1), ValueError, "at least 1 element"),
        (lambda: V.array_1d("a", [1.0, -1.0], low=0.0), ValueError, "a must be >= 0.0; element 1 is -1.0"),
    ],
)
def test_validators_name_parameter_and_range(call, err, match):
    with pytest.raises(err, match=match):
        call()


def test_generator_and_spawn_are_deterministic():
    assert _rng.generator(5).random(3).tobytes() == _rng.generator(5).random(3).tobytes()
    g = np.random.default_rng(1)
    assert _rng.generator(g) is g
    a = [r.random() for r in _rng.spawn(7, 3)]
    b = [r.random() for r in _rng.spawn(7, 3)]
    assert a == b and len(set(a)) == 3
    # point i of a sweep gets the same stream whatever the sweep's length
    assert _rng.spawn(7, 5)[1].random() == _rng.spawn(7, 2)[1].random()


def test_keyed_is_the_seed_sequence_child_and_the_same_in_another_process():
    """``keyed(seed, *keys)``: int keys are spawn-key words, other keys four SHA-256 words of their JSON; the
    stream is the same in a fresh interpreter (no salted ``hash()``)."""
    import hashlib
    import json
    import subprocess
    import sys

    own = _rng.keyed(7, 3, 1).random(4)
    assert np.array_equal(own, np.random.default_rng(np.random.SeedSequence(7, spawn_key=(3, 1))).random(4))
    params = {"model": "m-large", "hour": 14}
    words = np.frombuffer(
        hashlib.sha256(json.dumps(params, sort_keys=True, separators=(",", ":")).encode()).digest()[:16], "<u4"
    )
    want = np.random.SeedSequence(0, spawn_key=(*(int(w) for w in words), 2)).generate_state(1, np.uint64)[0]
    assert _rng.keyed_int(0, params, 2) == int(want)  # the sweep's point seed, unchanged by the helper
    assert _rng.keyed(7, "a").random() != _rng.keyed(7, "b").random() != _rng.keyed(8, "a").random()
    code = "from workbench import _rng; print(repr(_rng.keyed(7, 'm-large', 3).random()))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert float(other) == _rng.keyed(7, "m-large", 3).random()
    base = _rng.root(None)  # fresh entropy, drawn once: the keyed children of one root agree
    assert _rng.keyed(base, 1).random() == _rng.keyed(base, 1).random()
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    assert _rng.keyed(g1, 0).random() == _rng.keyed(g2, 0).random()  # a seeded Generator: deterministic
    assert _rng.keyed(g1, 0).random() != _rng.keyed(np.random.default_rng(5), 0).random()  # and its next child differs
    with pytest.raises(ValueError, match="non-negative"):
        _rng.keyed(7, -1)
    with pytest.raises(TypeError, match="keys"):
        _rng.keyed(7, object())


def test_no_seed_offsets_in_the_package():
    """Streams are keyed (``_rng.keyed``), never ``seed + k``: neighbouring seeds would share streams."""
    import re
    from pathlib import Path

    import workbench

    offset = re.compile(r"seed\s*\+\s*\w|\w\s*\+\s*\w*seed\b")
    found = [
        f"{path.name}:{n}: {line.strip()}"
        for path in Path(workbench.__file__).parent.rglob("*.py")
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if offset.search(line.split("#")[0]) and path.name != "_rng.py"
    ]
    assert not found, found


def test_search_path_order_and_require(tmp_path, monkeypatch):
    (tmp_path / "mine.csv").write_text("x\n")
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    assert data.search_path()[0] == tmp_path.resolve()
    assert data.find("mine.csv") == tmp_path.resolve() / "mine.csv"
    with pytest.raises(FileNotFoundError, match="not found on the data search path"):
        data.require("definitely/missing.csv")


def test_cache_dir_respects_env(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    assert data.cache_dir() == tmp_path / "cache" and (tmp_path / "cache").is_dir()


def test_dashboard_landing_shows_measured_verdicts_with_their_date(tmp_path, monkeypatch):
    """The landing page showed the registry's expected verdicts although a measured out/scoreboard.json existed."""
    import json as _json

    from workbench import dashboards
    from workbench.cli import main

    out = tmp_path / "out"
    out.mkdir()
    (out / "scoreboard.json").write_text(_json.dumps([{"paper": "arrivals", "verdict": "partial"}]))
    html = dashboards.landing_html(out / "scoreboard.json")
    assert "measured (scoreboard.json, 20" in html and "registry" not in html
    # a paper the scoreboard does not hold is not shown as zero verdicts of each kind
    assert html.count("not in this scoreboard") == len(dashboards.dashboards()) - 1
    assert html.count(">reproduced 0<") == 1  # arrivals: 0 reproduced, 1 partial
    monkeypatch.chdir(tmp_path)
    assert main(["dashboard", "--dir", str(tmp_path / "apps"), "--build-only"]) == 0
    index = _json.loads((tmp_path / "apps" / "index.ipynb").read_text())
    code = "".join(c["source"] for c in index["cells"] if c["cell_type"] == "code")
    assert "scoreboard.json" in code  # the default scoreboard was found and passed to the landing page
    # and the page's cell runs with it (it crashed whenever out/scoreboard.json existed: the path reached
    # landing_html as a string): its last expression is the HTML the landing page shows
    *body, last = code.strip().splitlines()
    namespace: dict = {}
    exec("\n".join(body), namespace)
    shown = eval(last, namespace)
    assert "measured (scoreboard.json" in shown.data and "partial 1" in shown.data
