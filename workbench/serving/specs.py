"""GPU and model specifications as data, with a source per row: the workbench's one :class:`GPU` and one
:class:`Model` record type, used by serving and by :mod:`workbench.training` (which imports them from here).

The tables live in ``datasets/serving_specs/`` (``gpus.csv``, ``models.csv``; the README there says what each column
means and where the numbers come from). :func:`gpu` and :func:`model` look a row up by name and return a frozen
record (training's short names ``"A100"`` and ``"H100"`` are aliases of ``"A100-80GB"`` and ``"H100-SXM"``,
:data:`GPU_ALIASES`); :func:`register_gpu` and :func:`register_model` add a user's own (from a dict, or every row of
a CSV of the same columns with :func:`load_specs`). Unknown names raise a ``ValueError`` that lists the known ones.
A :class:`GPU` holds hardware facts only; what fraction of the peak a workload's kernels reach is stated per GPU
``generation`` by the package that models the workload.

Mixture-of-experts models are described by their total and active parameter counts and their expert counts: with
``E`` routed experts of which ``k`` are active per token, one expert's parameters (all layers) are
``e = (total - active) / (E - k)`` and the always-active part (attention, shared experts, dense layers, embeddings) is
``total - E * e``. That is all a roofline needs: FLOPs follow the active parameters, weight reads follow the experts a
batch touches.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import pandas as pd

from .._contracts import Real, accepts
from .._deps import remember
from .._validate import integer, positive
from ..data import PROJECT_ROOT, require
from ..tables import frame

__all__ = [
    "GPU",
    "GPU_ALIASES",
    "Model",
    "gpu",
    "model",
    "gpus",
    "models",
    "register_gpu",
    "register_model",
    "load_specs",
]

SPECS_DIR = PROJECT_ROOT / "datasets" / "serving_specs"


@accepts(
    fp8_tflops=Real(gt=0.0, allow_nan=True),
    pcie_gbps=Real(gt=0.0, allow_nan=True),
    nic_gbps=Real(gt=0.0, allow_nan=True),
)
@dataclass(frozen=True)
class GPU:
    """One accelerator: dense peak FLOP/s, HBM, scale-up (NVLink) and host (PCIe) bandwidth, and the NIC per GPU of
    its usual server (units in the field names; link figures bidirectional, as datasheets state them). The one
    hardware record type and table of the workbench: :mod:`workbench.training` uses these records too. Hardware
    facts only: how much of the peak a workload's kernels reach is each model package's statement per
    ``generation`` (:data:`workbench.serving.roofline.EFFICIENCY`, :data:`workbench.training.specs.EFFICIENCY`).

    Examples
    --------
    >>> g = gpu("H100-SXM")
    >>> g.hbm_gb, g.peak_flops("bf16") / 1e12
    (80.0, 989.0)
    """

    gpu: str
    generation: str
    bf16_tflops: float
    fp8_tflops: float
    hbm_gb: float
    hbm_tbps: float
    scaleup_gbps: float
    pcie_gbps: float = math.nan
    nic_gbps: float = math.nan
    gpus_per_node: int = 8
    source: str = ""

    def __post_init__(self) -> None:
        for name in ("bf16_tflops", "hbm_gb", "hbm_tbps", "scaleup_gbps"):
            object.__setattr__(self, name, positive(f"{self.gpu}.{name}", getattr(self, name)))
        for name in ("fp8_tflops", "pcie_gbps", "nic_gbps"):
            object.__setattr__(self, name, float(getattr(self, name)))
        object.__setattr__(self, "gpus_per_node", integer(f"{self.gpu}.gpus_per_node", self.gpus_per_node, minimum=1))

    @accepts()
    def peak_flops(self, dtype: str = "bf16") -> float:
        """Dense FLOP/s for ``"bf16"`` or ``"fp8"`` (GPUs without FP8 fall back to BF16)."""
        if dtype == "fp8" and self.fp8_tflops and not math.isnan(self.fp8_tflops):
            return self.fp8_tflops * 1e12
        if dtype not in ("bf16", "fp8"):
            raise ValueError(f"dtype must be 'bf16' or 'fp8', got {dtype!r}")
        return self.bf16_tflops * 1e12

    @property
    def name(self) -> str:
        """The record's key in the table (``gpu``)."""
        return self.gpu

    @property
    def hbm_bytes(self) -> float:
        return self.hbm_gb * 1e9

    @property
    def hbm_bytes_per_s(self) -> float:
        """HBM bandwidth in whole bytes per second, as the datasheets state it."""
        return float(round(self.hbm_tbps * 1e12))

    @property
    def pcie_bytes_per_s(self) -> float:
        """One direction of the host link (half the bidirectional PCIe figure; NaN when the spec lacks it)."""
        return self.pcie_gbps * 1e9 / 2

    @property
    def scaleup_bytes_per_s(self) -> float:
        """One direction of the scale-up link (half the bidirectional figure of the datasheet)."""
        return float(round(self.scaleup_gbps * 1e9 / 2))


@accepts()
@dataclass(frozen=True)
class Model:
    """One LLM's architecture (fields of its ``config.json``) and parameter counts: the one model record type of the
    workbench, used by serving (rows of ``models.csv``, whose ``params_b`` columns are in billions) and by training
    (:data:`workbench.training.MODELS`).

    ``experts``/``active_experts`` describe a mixture of experts (1 and 1: dense). ``seq_len`` is the sequence
    length the model is trained at (its pre-training context; 0 when not stated, as for the serving table's rows):
    training's iteration model reads it, serving's never does.

    Examples
    --------
    >>> m = model("Llama-2-70B")
    >>> m.kv_bytes_per_token / 1024  # 80 layers x 8 KV heads x 128 x 2 (K and V) x 2 bytes
    320.0
    >>> round(model("Mixtral-8x7B").expert_params / 1e9, 2)
    5.63
    """

    model: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    qk_head_dim: int
    v_head_dim: int
    kv_elements_per_layer: int
    ffn: int
    vocab: int
    params: float
    active_params: float
    experts: int = 1
    active_experts: int = 1
    bytes_per_param: float = 2.0
    bytes_per_kv: float = 2.0
    seq_len: int = 0
    source: str = ""

    def __post_init__(self) -> None:
        for name in (
            "layers",
            "hidden",
            "heads",
            "kv_heads",
            "qk_head_dim",
            "v_head_dim",
            "kv_elements_per_layer",
            "ffn",
            "vocab",
            "experts",
            "active_experts",
        ):
            object.__setattr__(self, name, integer(f"{self.model}.{name}", getattr(self, name), minimum=1))
        object.__setattr__(self, "seq_len", integer(f"{self.model}.seq_len", self.seq_len, minimum=0))
        for name in ("params", "active_params", "bytes_per_param", "bytes_per_kv"):
            object.__setattr__(self, name, positive(f"{self.model}.{name}", getattr(self, name)))
        if self.active_params > self.params:
            raise ValueError(f"{self.model}: active_params {self.active_params:g} > params {self.params:g}")
        if self.active_experts > self.experts:
            raise ValueError(f"{self.model}: active_experts {self.active_experts} > experts {self.experts}")
        if self.experts > 1 and self.active_experts == self.experts:
            raise ValueError(f"{self.model}: an MoE model needs active_experts < experts")

    @property
    def name(self) -> str:
        """The record's key (``model``)."""
        return self.model

    @property
    def params_b(self) -> float:
        return self.params / 1e9

    @property
    def active_params_b(self) -> float:
        return self.active_params / 1e9

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def expert_params(self) -> float:
        """Parameters of one routed expert over all layers (0 for a dense model)."""
        if self.experts == 1:
            return 0.0
        return (self.params - self.active_params) / (self.experts - self.active_experts)

    @property
    def routed_params(self) -> float:
        """Parameters of all routed experts (0 for a dense model)."""
        return self.experts * self.expert_params if self.experts > 1 else 0.0

    @property
    def shared_params(self) -> float:
        """Parameters every token uses (all of a dense model)."""
        return self.params - self.experts * self.expert_params if self.experts > 1 else self.params

    @property
    def weight_bytes(self) -> float:
        return self.params * self.bytes_per_param

    @property
    def kv_bytes_per_token(self) -> float:
        """KV-cache bytes one token occupies (all layers)."""
        return self.layers * self.kv_elements_per_layer * self.bytes_per_kv

    @property
    def attn_flops_per_pair(self) -> float:
        """FLOPs of attention for one (query token, context token) pair over all layers: ``QK^T`` and ``AV``."""
        return 2.0 * self.layers * self.heads * (self.qk_head_dim + self.v_head_dim)

    @property
    def flops_per_token(self) -> float:
        """Training FLOPs per token at ``seq_len``: ``6 * active params + 12 * layers * hidden * seq_len`` (the
        attention scores; Narayanan et al., SC'21, eq. 3)."""
        if not self.seq_len:
            raise ValueError(
                f"{self.model}: training FLOPs need seq_len >= 1 (use dataclasses.replace(m, seq_len=...))"
            )
        return 6.0 * self.active_params + 12.0 * self.layers * self.hidden * self.seq_len


#: Other names of rows of the GPU table (the short names training papers use).
GPU_ALIASES: dict[str, str] = {"A100": "A100-80GB", "H100": "H100-SXM"}

#: Columns of ``models.csv`` in billions, and the :class:`Model` fields they fill.
_BILLIONS = {"params_b": "params", "active_params_b": "active_params"}

#: What a user registered in this process (:func:`register_gpu`, :func:`register_model`): looked up before the tables.
_GPUS: dict[str, GPU] = {}
_MODELS: dict[str, Model] = {}


def _coerce(cls, row: dict) -> dict:
    names = {f.name for f in fields(cls)}
    if cls is Model:  # the table states parameter counts in billions
        row = {_BILLIONS.get(k, k): v * 1e9 if k in _BILLIONS else v for k, v in row.items()}
    unknown = set(row) - names
    if unknown:
        raise ValueError(f"unknown {cls.__name__} field(s) {sorted(unknown)}; allowed: {sorted(names)}")
    # an empty CSV cell is NaN: the field's default then applies (a GPU without FP8 keeps NaN ``fp8_tflops``)
    return {k: v for k, v in row.items() if k == "fp8_tflops" or not (isinstance(v, float) and math.isnan(v))}


@accepts()
def register_gpu(spec: dict | GPU) -> GPU:
    """Add (or replace) a GPU from a :class:`GPU` or a dict of its fields; returns the record.

    Examples
    --------
    >>> register_gpu({"gpu": "my-gpu", "generation": "hopper", "bf16_tflops": 500, "fp8_tflops": 1000,
    ...               "hbm_gb": 96, "hbm_tbps": 4.0, "scaleup_gbps": 900, "source": "vendor sheet"}).hbm_gb
    96.0
    """
    rec = spec if isinstance(spec, GPU) else GPU(**_coerce(GPU, dict(spec)))
    _GPUS[rec.gpu] = rec
    return rec


@accepts()
def register_model(spec: dict | Model) -> Model:
    """Add (or replace) a model from a :class:`Model` or a dict of its fields (parameter counts as ``params`` and
    ``active_params``, or in billions as the table's ``params_b`` and ``active_params_b``); returns the record."""
    rec = spec if isinstance(spec, Model) else Model(**_coerce(Model, dict(spec)))
    _MODELS[rec.model] = rec
    return rec


def _read_specs(path: str | Path) -> tuple[list[GPU], list[Model]]:
    table = frame(path, what="spec table")
    if "gpu" in table.columns:
        return [GPU(**_coerce(GPU, r)) for r in table.to_dict("records")], []
    if "model" in table.columns:
        return [], [Model(**_coerce(Model, r)) for r in table.to_dict("records")]
    raise ValueError(f"{path}: a spec table needs a 'gpu' or a 'model' column, got {list(table.columns)}")


@accepts()
def load_specs(path: str | Path) -> int:
    """Register every row of a CSV of GPU or model columns (told apart by a ``gpu`` or ``model`` column)."""
    new_gpus, new_models = _read_specs(path)
    for g in new_gpus:
        register_gpu(g)
    for m in new_models:
        register_model(m)
    return len(new_gpus) + len(new_models)


@remember
def _tables() -> tuple[dict[str, GPU], dict[str, Model]]:
    """The shipped tables, ``serving_specs/{gpus,models}.csv`` as found on the data search path (the project's
    ``datasets/`` unless a ``$WORKBENCH_DATA`` directory shadows them)."""
    found = [_read_specs(require(f"serving_specs/{name}.csv")) for name in ("gpus", "models")]
    return {g.gpu: g for g in found[0][0]}, {m.model: m for m in found[1][1]}


def _all_gpus() -> dict[str, GPU]:
    return {**_tables()[0], **_GPUS}


def _all_models() -> dict[str, Model]:
    return {**_tables()[1], **_MODELS}


@accepts()
def gpu(name: str | GPU) -> GPU:
    """The GPU called ``name`` (a :class:`GPU` passes through)."""
    if isinstance(name, GPU):
        return name
    known = _all_gpus()
    name = GPU_ALIASES.get(name, name) if name not in known else name
    if name not in known:
        raise ValueError(
            f"unknown GPU {name!r}; known: {', '.join([*known, *GPU_ALIASES])} (add one with register_gpu)"
        )
    return known[name]


@accepts()
def model(name: str | Model) -> Model:
    """The model called ``name`` (a :class:`Model` passes through)."""
    if isinstance(name, Model):
        return name
    known = _all_models()
    if name not in known:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(known)} (add one with register_model)")
    return known[name]


@accepts()
def gpus() -> pd.DataFrame:
    """The GPU table (one row per GPU, with its source)."""
    return pd.DataFrame([asdict(g) for g in _all_gpus().values()])


@accepts()
def models() -> pd.DataFrame:
    """The model table (one row per model, with its source)."""
    table = pd.DataFrame([asdict(m) for m in _all_models().values()]).drop(columns="seq_len")
    for field in _BILLIONS.values():
        table[field] = table[field] / 1e9
    return table.rename(columns={v: k for k, v in _BILLIONS.items()})
