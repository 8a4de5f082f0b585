"""Generation's long tail and RLHFuse's inter-stage fusion: hand-computed cases on the serving cost model."""

import numpy as np
import pytest

from workbench import experiments as ex
from workbench.serving import Deployment
from workbench.training import generation_tail as gt


@pytest.fixture(scope="module")
def dep():
    return Deployment("Llama-3.1-8B", "H100-SXM")


def test_decode_cost_is_the_serving_iteration(dep):
    b = np.array([1, 7, 33, 100, 257])
    kv = np.array([500, 9000, 40_000, 150_000, 300_000])
    got = gt.decode_cost(dep, b, kv)
    want = [dep.iteration_s(decode_seqs=int(x), kv_tokens=float(k)) for x, k in zip(b, kv)]
    np.testing.assert_allclose(got, want, rtol=2e-3)
    assert gt.decode_cost(dep, [0], [0])[0] == 0.0


def test_one_instance_timeline_by_hand(dep):
    # two samples, prompts 100: steps at batch 2 (kv 200), then batch 1 (kv 101, 102: P + t - 1 at step t)
    done, ends = gt.decode_timeline(dep, [100, 100], [3, 1], prefill=False)
    c = [dep.iteration_s(decode_seqs=2, kv_tokens=200), dep.iteration_s(decode_seqs=1, kv_tokens=101),
         dep.iteration_s(decode_seqs=1, kv_tokens=102)]  # fmt: skip
    np.testing.assert_allclose(done, [sum(c), c[0]], rtol=2e-3)
    np.testing.assert_allclose(ends, np.cumsum(c), rtol=2e-3)


def test_baseline_waits_for_the_longest_sample(dep):
    p = np.full(8, 200)
    o = np.array([10, 10, 10, 10, 10, 10, 10, 500])
    r = gt.generation_stage(dep, p, o, instances=4, threshold=0.0)
    assert r.generation_s == pytest.approx(r.completion.max())
    assert r.completion.argmax() == 7
    w = gt.inference_seconds(dep, p, o)
    assert r.baseline_s == pytest.approx(r.completion.max() + w.sum() / 4)
    assert r.gain == 1.0


def test_fusion_hides_inference_behind_the_tail(dep):
    p = np.full(64, 300)
    o = np.full(64, 50)
    o[0] = 2000  # one long sample
    r = gt.generation_stage(dep, p, o, instances=8, tail_instances=1, threshold=0.02)
    assert r.migrated == 1
    # the cap: fusion cannot beat the tail itself, nor exceed 1 + inference / generation
    assert r.fused_s >= r.fused_generation_s
    assert 1.0 < r.gain <= 1 + r.inference_s / r.generation_s + 1e-9
    # the early samples' inference (7 freed instances) is done long before the tail: fused ~ tail + its inference
    w = gt.inference_seconds(dep, p, o)
    assert r.fused_s == pytest.approx(r.fused_generation_s + w[0] / 8, rel=1e-6)


def test_fluid_server_by_hand():
    # 6 s of work at t=0 on 2 instances from t=1, 3 from t=2: done at 1 + 2 = 3 s of capacity 2 ... -> 2 + (6-2)/3
    t = gt._fluid_finish(np.array([0.0, 0.0]), np.array([3.0, 3.0]), np.array([1.0, 2.0]), np.array([2.0, 3.0]))
    assert t == pytest.approx(2 + 4 / 3)
    # late work arrives after the backlog is done
    t = gt._fluid_finish(np.array([0.0, 10.0]), np.array([1.0, 3.0]), np.array([0.0]), np.array([3.0]))
    assert t == pytest.approx(11.0)


def test_lengths_and_errors(dep):
    p, o = gt.sample_lengths("burstgpt", 500, sigma=1.0, max_tokens=1000, seed=1)
    assert o.max() <= 1000 and p.min() >= 1 and o.dtype == np.int64
    with pytest.raises(ValueError, match="source"):
        gt.sample_lengths("nope", 10)
    with pytest.raises(ValueError, match="tail_instances"):
        gt.generation_stage(dep, p[:10], o[:10], instances=2, tail_instances=2)
    with pytest.raises(ValueError, match="threshold"):
        gt.generation_stage(dep, p[:10], o[:10], instances=2, threshold=1.0)


def test_heavier_tail_raises_generation_more_than_inference(dep):
    rows = {}
    for s in (0.4, 1.2):
        p, o = gt.sample_lengths("burstgpt", 256, sigma=s, seed=0)
        rows[s] = gt.generation_stage(dep, p, o, instances=4, threshold=0.0)
    share = {s: r.inference_s / r.generation_s for s, r in rows.items()}
    assert share[1.2] < share[0.4]


def test_experiment_small_grid():
    df = ex.sweep("rlhf-generation-tail", ex.get("rlhf-generation-tail").small, client=False, progress=False)
    assert set(df.threshold) == {0.0, 0.02, 0.1}
    assert (df[df.threshold == 0.0].gain == 1.0).all()
    assert (df.fused_s <= df.baseline_s * 1.5).all()


def test_panel_number_is_the_experiment_number():
    from workbench.widgets.rlhf import generation_tail_panel, tail_model

    v = {"threshold": 0.05, "samples": 128, "instances": 4, "sigma": 1.2}
    row = ex.run_point("rlhf-generation-tail", v).iloc[0]
    r = tail_model(**v).iloc[0]
    assert r.gain == pytest.approx(float(row.gain), rel=1e-12)
    assert r.fused_s == pytest.approx(float(row.fused_s), rel=1e-12)
    import ipywidgets as W

    assert isinstance(generation_tail_panel(), W.Box)


def test_panel_cannot_reach_more_instances_than_samples():
    """Samples dropped below the instances (the sweep of every control found it: ``instances must not exceed
    samples``): the instances slider follows the samples, the tail-instances slider the instances, and it redraws."""
    from workbench.testing import find_widget
    from workbench.widgets.rlhf import generation_tail_panel

    root = generation_tail_panel()
    samples, instances = find_widget(root, description="samples"), find_widget(root, description="instances")
    tail = find_widget(root, description="tail instances")
    samples.value = 2
    assert instances.value <= 2 and instances.max == 2 and tail.value < instances.value
    samples.value = 512
    instances.value = instances.max
    assert instances.value == 512 and tail.max == 511
