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
    monkeypatch.chdir(tmp_path)
    assert main(["dashboard", "--dir", str(tmp_path / "apps"), "--build-only"]) == 0
    index = (tmp_path / "apps" / "index.ipynb").read_text()
    assert "scoreboard.json" in index  # the default scoreboard was found and passed to the landing page
