"""Collectives: structure of each algorithm's steps, placement, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.fabric import COLLECTIVES, Step, collective_steps, leaf_spine, place_ranks, random_destinations


def test_ring():
    (st,) = collective_steps("ring", 8, 800)
    assert st.repeat == 14 and st.dst.tolist() == [1, 2, 3, 4, 5, 6, 7, 0]
    assert np.all(st.size_bytes == 100)


def test_halving_doubling_pairs_and_sizes():
    steps = collective_steps("halving_doubling", 16, 2**20)
    assert len(steps) == 8
    dists = [int(s.dst[0] ^ s.src[0]) for s in steps]
    assert dists == [8, 4, 2, 1, 1, 2, 4, 8]
    sizes = [float(s.size_bytes[0]) for s in steps]
    assert sizes == [2**19, 2**18, 2**17, 2**16, 2**16, 2**17, 2**18, 2**19]
    for s in steps:  # a perfect matching: every rank sends once and receives once, from its partner
        assert np.array_equal(np.sort(s.dst), np.arange(16)) and np.array_equal(s.dst[s.dst], s.src)
    # reduce-scatter moves (n-1)/n of the message per rank, like any bandwidth-optimal all-reduce half
    assert sum(sizes[:4]) == 2**20 * 15 / 16


def test_double_binary_tree_is_complementary():
    n = 15
    up, down = collective_steps("double_binary_tree", n, 1000)
    assert up.n_flows == 2 * (n - 1) and np.all(up.size_bytes == 500)
    assert np.array_equal(up.src, down.dst) and np.array_equal(up.dst, down.src)
    a_parents = set(up.dst[: n - 1].tolist())
    b_parents = set(up.dst[n - 1 :].tolist())
    # no rank is interior in both trees
    assert not (a_parents & b_parents)


def test_all_to_all_and_permutation():
    (a2a,) = collective_steps("all_to_all", 6, 600)
    pairs = set(zip(a2a.src.tolist(), a2a.dst.tolist()))
    assert len(pairs) == 30 and all(s != d for s, d in pairs)
    (perm,) = collective_steps("permutation", 50, 10, seed=1)
    assert np.array_equal(np.sort(perm.dst), np.arange(50)) and np.all(perm.dst != perm.src)
    seen, r = {0}, int(perm.dst[0])  # one single cycle
    while r != 0:
        seen.add(r)
        r = int(perm.dst[r])
    assert len(seen) == 50
    again = collective_steps("permutation", 50, 10, seed=1)[0]
    assert np.array_equal(perm.dst, again.dst)


def test_placements():
    topo = leaf_spine(4, 2, 3)
    assert place_ranks(topo, 5).tolist() == [0, 1, 2, 3, 4]
    strided = place_ranks(topo, 12, "strided")
    assert sorted(strided.tolist()) == list(range(12))
    assert topo.host_leaf(strided[:4]).tolist() == [0, 1, 2, 3]
    rnd = place_ranks(topo, 12, "random", seed=0)
    assert sorted(rnd.tolist()) == list(range(12))
    step = collective_steps("ring", 4, 100)[0].on_hosts(strided)
    assert step.src.tolist() == strided[:4].tolist()


@pytest.mark.parametrize(
    "args, exc, match",
    [
        (("halving_doubling", 12, 100), ValueError, "power of two"),
        (("ring", 1, 100), ValueError, "n_ranks"),
        (("ring", 4, 10.5), TypeError, "size_bytes"),
        (("ring", 4, 0), ValueError, "size_bytes"),
        (("butterfly", 4, 10), ValueError, "name"),
        (("ring", 4.5, 10), TypeError, "n_ranks"),
    ],
)
def test_bad_collectives(args, exc, match):
    with pytest.raises(exc, match=match):
        collective_steps(*args)


def test_more_ranks_than_hosts():
    with pytest.raises(ValueError, match="n_ranks"):
        place_ranks(leaf_spine(2, 2, 2), 5)
    with pytest.raises(ValueError, match="placement"):
        place_ranks(leaf_spine(2, 2, 2), 4, "diagonal")


def test_every_collective_builds():
    for name in COLLECTIVES:
        steps = collective_steps(name, 8, 1024, seed=0)
        assert steps and all(isinstance(s, Step) and s.n_flows > 0 for s in steps)


def test_random_destinations_are_uniform_over_the_other_hosts():
    n = 8
    src = np.repeat(np.arange(n), 20_000)
    dst = random_destinations(src, n, seed=3)
    assert (dst != src).all() and dst.min() >= 0 and dst.max() < n
    counts = np.bincount(src * n + dst, minlength=n * n).reshape(n, n)
    off = counts[~np.eye(n, dtype=bool)]
    # each of the n-1 other hosts gets 1/(n-1) of a source's flows: 20000/7 = 2857 +- 4 sigma (about 190)
    assert np.abs(off - 20_000 / (n - 1)).max() < 4 * np.sqrt(20_000 / (n - 1))
    assert np.array_equal(dst, random_destinations(src, n, seed=3))


@pytest.mark.parametrize(
    "src, n_hosts, err, match",
    [
        ([0, 1], 1, ValueError, "n_hosts"),
        ([0, 4], 4, ValueError, r"host ids in \[0, 3\]"),
        ([-1], 4, ValueError, r"src must be >= 0.*integers >= 0"),
        ([0.5], 4, ValueError, r"src must hold integers"),
        ([[0, 1]], 4, ValueError, "1-D"),
    ],
)
def test_random_destinations_bad_input(src, n_hosts, err, match):
    with pytest.raises(err, match=match):
        random_destinations(np.asarray(src), n_hosts)
