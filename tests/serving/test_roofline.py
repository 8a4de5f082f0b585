"""Spec tables and the roofline iteration cost: sources, user rows, hand-computed costs, MoE weights, the fit to
the linear model, and what does not fit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.serving import specs
from workbench.serving.roofline import EFFICIENCY, Deployment, fit_linear


def test_tables_have_a_source_per_row_and_user_rows_register(tmp_path):
    g, m = specs.gpus(), specs.models()
    shipped = [pd.read_csv(specs.SPECS_DIR / f) for f in ("gpus.csv", "models.csv", "published.csv")]
    assert all((t["source"].str.len() > 20).all() for t in shipped)  # a source per number's row
    assert {"A100-40GB", "A100-80GB", "H100-SXM", "H100-PCIe", "H200", "B200", "L40S", "MI300X"} <= set(g["gpu"])
    assert {"Llama-2-70B", "Llama-3.1-405B", "Mixtral-8x7B", "Qwen2-72B", "DeepSeek-R1"} <= set(m["model"])
    mix = specs.model("Mixtral-8x7B")
    assert mix.shared_params + 8 * mix.expert_params == pytest.approx(mix.params)
    assert mix.shared_params + 2 * mix.expert_params == pytest.approx(mix.active_params)
    assert specs.model("DeepSeek-V3").kv_bytes_per_token == 61 * 576 * 2
    path = tmp_path / "mine.csv"
    path.write_text(
        "gpu,generation,bf16_tflops,fp8_tflops,hbm_gb,hbm_tbps,scaleup_gbps,source\nX1,hopper,100,,24,1.0,64,my bench\n"
    )
    assert specs.load_specs(path) == 1 and np.isnan(specs.gpu("X1").fp8_tflops)
    assert specs.gpu("X1").peak_flops("fp8") == 100e12  # no FP8: falls back to BF16
    with pytest.raises(ValueError, match=r"unknown GPU 'V100'.*H100-SXM"):
        specs.gpu("V100")
    with pytest.raises(ValueError, match="unknown model"):
        specs.model("GPT-5")
    with pytest.raises(ValueError, match="unknown Model field"):
        specs.register_model({"model": "m", "layer": 3})


def test_decode_of_one_request_reads_the_weights_and_prefill_is_compute_bound():
    d = Deployment("Llama-2-7B", "A100-80GB")
    eff = EFFICIENCY["ampere"]
    m = specs.model("Llama-2-7B")
    weights = (m.params - 2 * m.vocab * m.hidden) * 2
    bw = 2.039e12 * eff.memory
    b = d.breakdown(decode_seqs=1, kv_tokens=0)
    assert b.set_index("operator").loc["linear", "memory_s"] == pytest.approx(weights / bw)
    assert b.set_index("operator").loc["linear", "bound"] == "memory"
    p = d.breakdown(prefill_tokens=4096, prefill_pairs=4096 * 4097 / 2).set_index("operator")
    assert p.loc["linear", "bound"] == "compute"
    assert p.loc["linear", "compute_s"] == pytest.approx(
        2 * (m.params - 2 * m.vocab * m.hidden) * 4096 / 312e12 / eff.compute
    )
    args = (512, 512 * 300.0, 64, 64 * 900, 65)
    assert d.sequential_cost()(*args) == pytest.approx(d.iteration_s(*args))
    ovl = Deployment("Llama-2-7B", "A100-80GB", overlap=True)
    assert ovl.iteration_s(*args) < d.iteration_s(*args)
    a, s, _lim = ovl.decode_line(64, 64 * 900)
    assert a + s * 64 * 900 == pytest.approx(ovl.iteration_s(0, 0, 64, 64 * 900))


def test_tp_adds_allreduce_and_moe_reads_more_experts_with_batch():
    d1 = Deployment("Llama-3.1-8B", "H100-SXM")
    d4 = Deployment("Llama-3.1-8B", "H100-SXM", tp=4)
    assert d4.breakdown(decode_seqs=8).set_index("operator").loc["allreduce", "bound"] == "network"
    assert d4.kv_capacity_tokens > 4 * d1.kv_capacity_tokens  # the weights are split, the HBM adds up
    mix = Deployment("Mixtral-8x7B", "H100-SXM", tp=2)
    one = mix.breakdown(decode_seqs=1).set_index("operator").loc["linear", "memory_s"]
    many = mix.breakdown(decode_seqs=64).set_index("operator").loc["linear", "memory_s"]
    assert many / one == pytest.approx(46.7 / 12.9, rel=0.15)  # all experts touched vs two


def test_fit_linear_tracks_the_roofline_and_misfits_are_named():
    d = Deployment("Llama-2-13B", "A100-80GB")
    cfg = fit_linear(d)
    for p, b, kv in ((2048, 0, 0), (0, 128, 60_000), (512, 64, 30_000)):
        lin = cfg.iteration_s(p, b, kv)
        assert lin == pytest.approx(d.iteration_s(p, p * 257, b, kv, b + p / 512), rel=0.35)
    with pytest.raises(ValueError, match=r"Llama-3.1-405B .* does not fit on 4 x H100-SXM .*short by"):
        Deployment("Llama-3.1-405B", "H100-SXM", tp=4)
    with pytest.raises(ValueError, match="dtype"):
        Deployment("Llama-2-7B", "A100-80GB", dtype="int4")
