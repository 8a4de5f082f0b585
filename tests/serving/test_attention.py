"""Attention as measured: the profiled engine on the profiled shape reproduces the profile; other shapes, GPUs and
kernel generations follow by mechanism (bytes for decode, thread blocks and keys for prefill, the families' share of
the peak); the committed curves are what the script derives from Vidur's profile."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.data import find
from workbench.serving import Deployment
from workbench.serving.attention import (
    PAGED_V1_REREAD,
    REFERENCE,
    UTILIZATION,
    attention_curves,
    decode_read_factor,
    family_factor,
)

PROJECT_ROOT = Path(__file__).resolve().parents[2]

PROFILE = "vidur-profiles/attention/a100/prerelease-70b-geometry-tp2.csv"
LAYERS = 80


def profile_ms(kind: str, a: int, b: int) -> float:
    """The committed curve's value (ms per layer): decode (batch, tokens) or prefill (chunk, prefix)."""
    t = pd.read_csv(PROJECT_ROOT / "datasets" / "serving_specs" / "attention_curves.csv")
    col = "batch" if kind == "decode" else "chunk"
    return float(t[(t["kind"] == kind) & (t[col] == a) & (t["tokens"] == b)]["value"].iloc[0])


def attn(dep, op, *work, **kw):
    return max(dep.resources(*work, **kw)[op])


def test_the_profiled_engine_on_the_profiled_shape_is_the_profile():
    # Llama-2-70B at TP 2 is the profile's geometry (32 query and 4 KV heads of 128 per GPU) on its GPU, and
    # Sarathi-Serve's engine runs the profiled kernel
    d = Deployment("Llama-2-70B", "A100-80GB", tp=2, engine="sarathi-serve")
    for b, L in ((1, 1024), (16, 1024), (128, 4032), (32, 2048)):
        got = attn(d, "attn_decode", 0, 0, b, b * L) / LAYERS
        assert got == pytest.approx(profile_ms("decode", b, L) * 1e-3, rel=1e-6), (b, L)
    for c, p in ((1024, 0), (512, 2048), (2048, 2048), (4096, 0)):
        pairs = c * p + c * (c + 1) / 2
        got = attn(d, "attn_prefill", c, pairs, 0, 0, sampled=1) / LAYERS
        assert got == pytest.approx(profile_ms("prefill", c, p) * 1e-3, rel=1e-6), (c, p)


def test_decode_carries_over_by_the_bytes_it_reads_and_the_bandwidth():
    cur = attention_curves()
    a2 = Deployment("Llama-2-70B", "A100-80GB", tp=2)
    a4 = Deployment("Llama-2-70B", "A100-80GB", tp=4)  # 2 KV heads per GPU: a request reads half the bytes
    h4 = Deployment("Llama-2-70B", "H100-SXM", tp=4)
    for b, L in ((8, 1024), (64, 2048)):
        ref = attn(a2, "attn_decode", 0, 0, b, b * L)
        assert attn(a4, "attn_decode", 0, 0, 2 * b, 2 * b * L) == pytest.approx(ref, rel=1e-6)
        # on H100 the part above the launch floor moves at the HBM ratio, the floor does not
        f = cur.floor * LAYERS
        expect = f + (ref - f) * REFERENCE["hbm_bytes_s"] / h4.gpu.hbm_bytes_per_s
        assert attn(h4, "attn_decode", 0, 0, 2 * b, 2 * b * L) == pytest.approx(expect, rel=1e-6)
    # beyond the measured batches: the same bytes at full occupancy; beyond the lengths: bandwidth-bound
    assert attn(a2, "attn_decode", 0, 0, 256, 256 * 1000) == pytest.approx(
        attn(a2, "attn_decode", 0, 0, 128, 128 * 2000), rel=1e-6
    )
    per_token = [attn(a2, "attn_decode", 0, 0, 64, 64 * L) / (64 * L) for L in (16_000, 64_000)]
    assert per_token[1] == pytest.approx(per_token[0], rel=0.05)


def test_prefill_attention_by_software_era():
    # a 2023 vLLM (xformers, FA1 class) against a current one (FA3 on Hopper) on the same deployment: the ratio of the
    # families' share of the H100's peak
    old = Deployment("Llama-2-70B", "H100-SXM", tp=8, engine="vllm-v0")
    new = Deployment("Llama-2-70B", "H100-SXM", tp=8, engine="vllm")
    n = 8192
    work = (n, n * (n + 1) / 2, 0, 0)
    f = attention_curves().floor * LAYERS
    ratio = (attn(old, "attn_prefill", *work, sampled=1) - f) / (attn(new, "attn_prefill", *work, sampled=1) - f)
    assert ratio == pytest.approx(UTILIZATION[("flash3", "hopper")] / UTILIZATION[("xformers", "hopper")], rel=1e-6)
    # the 2023 engine pays far more at 4-8k tokens: its prefill is the longer by what attention adds
    assert old.iteration_s(*work, sampled=1) > 1.2 * new.iteration_s(*work, sampled=1)
    # FA3 runs on Hopper only: on an A100 a current vLLM runs FA2 (the reference rate)
    assert family_factor("flash3", "ampere", 312e12) == (True, pytest.approx(1.0))
    # the profiled kernel computes the causally masked blocks: at a zero prefix it pays about twice FA2's varlen
    paged = Deployment("Llama-2-70B", "A100-80GB", tp=2, engine="sarathi-serve")
    fa2 = Deployment("Llama-2-70B", "A100-80GB", tp=2, engine="vllm")
    n = 4096
    work = (n, n * (n + 1) / 2, 0, 0)
    assert attn(paged, "attn_prefill", *work, sampled=1) / attn(fa2, "attn_prefill", *work, sampled=1) == pytest.approx(
        2.0, rel=0.01
    )
    with pytest.raises(ValueError, match="attention kernel"):
        family_factor("flash9", "hopper", 989e12)


def test_a_card_measured_itself_prefills_at_its_own_attention_rate():
    # the RTX PRO 6000's FA2 rate measured on it (54% of its 500 TFLOP/s): 1.19 x the reference A100's FA2 rate;
    # its generation has no measured rate of its own, so another Blackwell card with curves would be refused
    skip, factor = family_factor("flash3", "blackwell", 500e12, "RTX-PRO-6000")  # no FA3 off Hopper: FA2
    assert skip and factor == pytest.approx(0.54 * 500 / (0.73 * 312))
    with pytest.raises(ValueError, match="no measured attention utilisation for 'flash2' on generation 'blackwell'"):
        family_factor("flash2", "blackwell", 2250e12, "B200")
    # a prompt's attention (above the launch floor) on the card against an A100 running the same FA2: their rates
    pro, a100 = (Deployment("Llama-3.1-8B", g, engine="vllm") for g in ("RTX-PRO-6000", "A100-80GB"))
    n = 8192
    work = (n, n * (n + 1) / 2, 0, 0)
    f = attention_curves().floor * 32
    ratio = (attn(a100, "attn_prefill", *work, sampled=1) - f) / (attn(pro, "attn_prefill", *work, sampled=1) - f)
    assert ratio == pytest.approx(factor, rel=1e-6)


def test_one_launch_serves_the_sequences_of_an_iteration():
    # 64 prompts of 128 tokens in one iteration run as one kernel with 64 x as many thread blocks: far less than 64
    # single-prompt iterations' attention
    d = Deployment("Llama-3.1-8B", "H100-SXM")
    one = attn(d, "attn_prefill", 128, 128 * 129 / 2, 0, 0, sampled=1)
    many = attn(d, "attn_prefill", 64 * 128, 64 * 128 * 129 / 2, 0, 0, sampled=64, prefill_seqs=64)
    assert many < 0.5 * 64 * one


@pytest.mark.skipif(find(PROFILE) is None, reason="vidur-profiles' attention profile not on the data search path")
def test_committed_attention_curves_are_what_the_script_derives():
    path = PROJECT_ROOT / "scripts" / "derive_attention_curves.py"
    spec = importlib.util.spec_from_file_location("derive_attention_curves", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--check"]) == 0
    t = mod.derive()
    dec = t[t["kind"] == "decode"].pivot_table(index="batch", columns="tokens", values="value")
    assert (np.diff(dec.to_numpy(), axis=0) >= 0).all() and (np.diff(dec.to_numpy(), axis=1) >= 0).all()


def test_vllm_2023_decode_kernel_rereads_a_kv_head_for_each_query_head():
    # vLLM's 2023 PagedAttention kernel (issue #1880): one thread block per query head, so a GQA model's decode reads
    # its KV heads q_per_kv times, the repeats at the L2-missing share measured in PR #2744 (A100-40GB-PCIe, 64 query
    # and 8 KV heads, context 1,024: 37.541 us at batch 1, 68.585 us at batch 4)
    slope_bytes = (68.585 - 37.541) / 3 * 1e-6 * 1.555e12
    assert pytest.approx((slope_bytes / (1024 * 8 * 128 * 2 * 2) - 1) / 7, rel=1e-9) == PAGED_V1_REREAD
    assert 0.3 < PAGED_V1_REREAD < 0.5  # about 3.8 of the 8 reads reach HBM
    assert decode_read_factor("gqa", 8) == 1.0 and decode_read_factor("paged-v1", 1) == 1.0
    assert decode_read_factor("paged-v1", 8) == pytest.approx(1 + 7 * PAGED_V1_REREAD)
    with pytest.raises(ValueError, match="decode attention kernel"):
        decode_read_factor("paged-v9", 8)
    # Llama-2-70B (64 query, 8 KV heads) at TP 2: the 2023 engine's decode is the measured GQA kernel moving
    # decode_read_factor x the bytes, i.e. as the GQA kernel at that many more requests
    old = Deployment("Llama-2-70B", "A100-80GB", tp=2, engine="vllm-2023")
    gqa = Deployment("Llama-2-70B", "A100-80GB", tp=2, engine="sarathi-serve")
    k = decode_read_factor("paged-v1", 8)
    for b, L in ((4, 1024), (32, 2048)):
        # the kernel's cost (the cost table interpolates it over whole batches)
        assert float(old._decode_attention(b, L)[1]) == pytest.approx(
            float(gqa._decode_attention(b * k, L)[1]), rel=1e-9
        )
        assert attn(old, "attn_decode", 0, 0, b, b * L) == pytest.approx(
            float(old._decode_attention(b, L)[1]), rel=1e-6
        )
        assert attn(old, "attn_decode", 0, 0, b, b * L) > 1.5 * attn(gqa, "attn_decode", 0, 0, b, b * L)
    # multi-head attention (Llama-2-7B: a KV head per query head) reads no more: the two kernels agree
    mha_old = Deployment("Llama-2-7B", "A100-80GB", engine="vllm-2023")
    mha_new = Deployment("Llama-2-7B", "A100-80GB", engine="sarathi-serve")
    assert attn(mha_old, "attn_decode", 0, 0, 16, 16 * 1024) == pytest.approx(
        attn(mha_new, "attn_decode", 0, 0, 16, 16 * 1024), rel=1e-9
    )
    # stated costs carry the same read factor
    s_old = Deployment("Llama-2-70B", "A100-80GB", tp=2, engine="vllm-2023", costs="stated")
    s_new = Deployment("Llama-2-70B", "A100-80GB", tp=2, engine="sarathi-serve", costs="stated")
    assert attn(s_old, "attn_decode", 0, 0, 8, 8 * 1024) == pytest.approx(
        k * attn(s_new, "attn_decode", 0, 0, 8, 8 * 1024), rel=1e-6
    )
