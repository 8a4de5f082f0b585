"""Where data comes from: the data search path, the dataset registry and ``fetch``.

Data files are looked up, in order, in

1. ``$WORKBENCH_DATA`` (one or more directories separated by ``os.pathsep``),
2. the project's ``datasets/`` folder (dataset cards, small generated samples, derived parameter files),
3. ``../shared/data`` beside the project checkout (real public traces for development and CI).

Upstream traces are never committed to the repository; they are read in place from the search path.

The module is longer than ~500 lines only because of the registry's entries (data, not logic); the HTTP transfer
behind :func:`fetch` is in :mod:`workbench._download` and the caches in :mod:`workbench.cache`.

Examples
--------
>>> from workbench import data
>>> [p.name for p in data.search_path()][:1]  # doctest: +SKIP
['datasets']
>>> data.find("no/such/file.csv") is None
True
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import _deps
from . import _validate as V
from . import cache as _cache
from ._contracts import accepts, output
from ._download import ChecksumError, DownloadError, check_complete, download, say

__all__ = [
    "PROJECT_ROOT",
    "search_path",
    "find",
    "stale",
    "require",
    "cache_dir",
    "DatasetFile",
    "Dataset",
    "REGISTRY",
    "datasets",
    "dataset",
    "fetch",
    "data_home",
    "sha256_file",
    "sidecar_path",
    "recorded_sha256",
    "registry_file",
    "verify_file",
    "checksum_status",
    "ChecksumError",
    "DownloadError",
]

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@accepts()
def search_path() -> list[Path]:
    """The directories searched for data, in order (only those that exist)."""
    dirs: list[Path] = []
    env = _deps.data_env()
    dirs += [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    dirs.append(PROJECT_ROOT / "datasets")
    dirs.append(PROJECT_ROOT.parent / "shared" / "data")
    seen: list[Path] = []
    for d in dirs:
        try:
            d = d.resolve()
            usable = d.is_dir()
        except (RuntimeError, OSError) as exc:  # a symlink loop (RuntimeError before Python 3.13), a bad mount
            _warn_unusable(d, exc)
            continue
        if usable and d not in seen:
            seen.append(d)
    return seen


_warned_dirs: set[str] = set()


def _warn_unusable(d: Path, exc: Exception) -> None:
    """Warn once per directory that a search-path entry is skipped (a symlink loop, an unreadable mount)."""
    import warnings

    from . import WorkbenchWarning

    if str(d) not in _warned_dirs:
        _warned_dirs.add(str(d))
        why = "a symbolic link loop" if isinstance(exc, RuntimeError) or "loop" in str(exc).lower() else str(exc)
        warnings.warn(f"data search path entry {d} is skipped: {why}", WorkbenchWarning, stacklevel=3)


@accepts()
def find(relpath: str | os.PathLike) -> Path | None:
    """Return the first ``<dir>/<relpath>`` that exists on the search path, or ``None``.

    Inside a dependency recording (:mod:`workbench._deps`: a sweep point, a paper run) the name and what it resolved
    to are noted, so the cached result is checked against this file's content (or its absence) when read back.
    """
    found = _resolve(relpath)
    if _deps.active():
        _deps.note_path(_dep_key(relpath), found)
    return found


def _resolve(relpath: str | os.PathLike) -> Path | None:
    rel = Path(relpath)
    if rel.is_absolute():
        return rel if rel.exists() else None
    for d in search_path():
        candidate = d / rel
        if candidate.exists():
            return candidate
    return None


def _dep_key(relpath: str | os.PathLike) -> str:
    rel = Path(relpath)
    return str(rel) if rel.is_absolute() else rel.as_posix()


@accepts()
def stale(deps: _deps.Deps) -> list[str]:
    """What changed since a cached result recorded ``deps``: one line per data file that now resolves to other
    content (shadowed through ``$WORKBENCH_DATA``, edited, added or removed) and per module whose code changed;
    empty when the result is current.

    Examples
    --------
    >>> with _deps.recording() as rec:
    ...     _ = find("no/such/file.csv")
    >>> stale(rec.deps())
    []
    """
    out = []
    for key, digest in deps.data.items():
        now = _cache.path_digest(_resolve(key))
        if now != digest:
            what = "appeared" if digest == "missing" else "disappeared" if now == "missing" else "changed"
            out.append(f"data file {key} {what}")
    for name, digest in deps.code.items():
        if _deps.code_fingerprint(name) != digest:
            out.append(f"the code of {name} (or of a module it imports) changed")
    return out


_DEPS_META = b"workbench.deps"


@accepts()
def recorded_frame(path: str | os.PathLike, build_fn: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """``build_fn()`` stored as parquet at ``path`` (under :func:`workbench.cache.locked`) with the data files and code
    it read (:mod:`workbench._deps`), and read back until one of them changes (:func:`stale`): the store of a computed
    study whose key (the path) already names its code (the fidelity points, the studies several papers share). A
    read-back replays its dependencies into any active recording; an unreadable entry is recomputed; an unwritable
    cache returns the result without keeping it.

    Examples
    --------
    >>> import pandas as pd, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "study.parquet"
    >>> recorded_frame(p, lambda: pd.DataFrame({"x": [1, 2]}))["x"].tolist()
    [1, 2]
    >>> recorded_frame(p, lambda: pd.DataFrame({"x": [9]}))["x"].tolist()  # read back
    [1, 2]
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    entry = Path(path)
    with _cache.locked(entry):
        if entry.is_file():
            try:
                table = pq.read_table(entry)
                deps = _deps.Deps.from_json(json.loads((table.schema.metadata or {})[_DEPS_META]))
                if not stale(deps):
                    _deps.replay(deps)
                    return table.to_pandas()
            except Exception:  # unreadable or without its dependencies: recomputed
                pass
        with _deps.recording() as rec:
            frame = build_fn()
        table = pa.Table.from_pandas(frame, preserve_index=False)
        meta = {**(table.schema.metadata or {}), _DEPS_META: json.dumps(rec.deps().to_json()).encode()}
        try:
            with _cache.atomic_path(entry) as tmp:
                pq.write_table(table.replace_schema_metadata(meta), tmp)
        except OSError:  # a read-only or full cache: the result is still returned, just not kept
            pass
        _deps.replay(rec.deps())
        return frame


@accepts()
def require(relpath: str | os.PathLike, *, hint: str = "") -> Path:
    """Like :func:`find` but raise :class:`FileNotFoundError` naming the places searched (and ``hint``)."""
    found = find(relpath)
    if found is None:
        where = ", ".join(str(d) for d in search_path()) or "(no search-path directory exists)"
        msg = f"data file {str(relpath)!r} not found on the data search path: {where}. Set WORKBENCH_DATA to add one."
        raise FileNotFoundError(msg + (f" {hint}" if hint else ""))
    return found


@accepts()
def cache_dir() -> Path:
    """Directory for derived caches: ``$WORKBENCH_CACHE`` or ``~/.cache/workbench`` (:func:`workbench.cache.cache_dir`,
    where every cache lives). Created on first use."""
    return _cache.cache_dir()


# ----------------------------------------------------------------------------------------------------------------------
# Dataset registry
# ----------------------------------------------------------------------------------------------------------------------
#
# Each entry names the files of one public dataset, where upstream serves them, their sha256 where it is published (or
# recorded from the copy in ../shared/data, see its PROVENANCE files), the license and the citation. ``fetch`` downloads
# them; loaders in ``workbench.workloads.traces`` read them from the search path under ``<directory>/<file>``.


@output
@dataclass(frozen=True)
class DatasetFile:
    """One file of a dataset: its name, upstream URL and, where known, sha256, size and row count."""

    name: str
    url: str
    sha256: str | None = None
    size_bytes: int | None = None
    rows: int | None = None
    note: str = ""


@output
@dataclass(frozen=True)
class Dataset:
    """A registry entry: files (or, for ``kind="directory"``, an upstream folder), license, citation and upstream.

    ``directory`` is the folder the files live in on the data search path (``find(f"{directory}/{file}")``).
    """

    name: str
    title: str
    directory: str
    license: str
    citation: str
    upstream: str
    files: tuple[DatasetFile, ...] = ()
    kind: str = "files"
    notes: str = ""
    extra: dict = field(default_factory=dict)

    @accepts()
    def file(self, name: str) -> DatasetFile:
        for f in self.files:
            if f.name == name:
                return f
        raise ValueError(f"file must be one of {', '.join(f.name for f in self.files)}; got {name!r}")

    @accepts()
    def relpath(self, name: str) -> str:
        """Path of ``name`` relative to a search-path directory."""
        return f"{self.directory}/{self.file(name).name}"

    @accepts()
    def locate(self) -> Path | None:
        """Where a directory dataset's raw data is on the search path (its ``extra["subdirectory"]`` must exist,
        so a derived summary under ``datasets/<directory>/`` is not mistaken for the raw data), or ``None``."""
        sub = self.extra.get("subdirectory", "")
        found = find(f"{self.directory}/{sub}" if sub else self.directory)
        return found.parent if (found is not None and sub) else found


_BURSTGPT_CITE = (
    "Yuxin Wang, Yuhan Chen, Zeyu Li, Xueze Kang, Yuchu Fang, Yeju Zhou, Yang Zheng, Zhenheng Tang, Xin He, Rui Guo, "
    "Xin Wang, Qiang Wang, Amelie Chi Zhou, Xiaowen Chu. BurstGPT: A Real-World Workload Dataset to Optimize LLM "
    "Serving Systems. KDD 2025, arXiv:2401.17644."
)
_BGPT_V11 = "https://github.com/HPMLL/BurstGPT/releases/download/v1.1/"
_BGPT_V12 = "https://github.com/HPMLL/BurstGPT/releases/download/v1.2/"
_AZ23 = "https://raw.githubusercontent.com/Azure/AzurePublicDataset/790921015d50dd6aae7f7e47f39ba0e235ad6b08/data/"
_AZ24 = "https://azurepublicdatasettraces.blob.core.windows.net/azurellminfererencetrace/"
_MC = "https://raw.githubusercontent.com/kvcache-ai/Mooncake/3cca71daccf2a7afb8fe3f0295358f70e3a69fdb/FAST25-release/traces/"

REGISTRY: dict[str, Dataset] = {
    d.name: d
    for d in [
        Dataset(
            name="burstgpt",
            title="BurstGPT v1 (six-column files): ChatGPT and GPT-4 requests in Azure OpenAI, 1-second timestamps",
            directory="burstgpt",
            license="CC-BY-4.0",
            citation=_BURSTGPT_CITE,
            upstream="https://github.com/HPMLL/BurstGPT (release v1.1); Hugging Face dataset lzzmm/BurstGPT",
            files=(
                DatasetFile(
                    "BurstGPT_1.csv",
                    _BGPT_V11 + "BurstGPT_1.csv",
                    sha256="4bb3783693d0a435686fbfc885615d2349bd067239079fa4b749f2e679e12122",
                    size_bytes=52_283_111,
                    rows=1_429_737,
                    note="release asset, CRLF line endings",
                ),
                DatasetFile("BurstGPT_2.csv", _BGPT_V11 + "BurstGPT_2.csv", note="no published checksum"),
                DatasetFile(
                    "BurstGPT_without_fails_1.csv",
                    _BGPT_V11 + "BurstGPT_without_fails_1.csv",
                    note="no published checksum",
                ),
                DatasetFile(
                    "BurstGPT_without_fails_2.csv",
                    _BGPT_V11 + "BurstGPT_without_fails_2.csv",
                    sha256="56193aa9b2bb26128ded43d2d29a960df6bf5af062bcfc9b005f3fcaa4e6e501",
                    size_bytes=142_376_815,
                ),
            ),
            notes="Header Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type. A copy of BurstGPT_1.csv "
            "with LF line endings is reported as 50,853,373 bytes, sha256 "
            "46fc9480ef0b748ecb2b51d512ff08c196b031782cbe6f78e28044d768e86d5a (fetch verifies the release asset).",
        ),
        Dataset(
            name="burstgpt-v3",
            title="BurstGPT v3 (eight-column files, with Session ID and Elapsed time)",
            directory="burstgpt",
            license="CC-BY-4.0",
            citation=_BURSTGPT_CITE,
            upstream="https://github.com/HPMLL/BurstGPT (releases v1.2/v2.0); Hugging Face dataset lzzmm/BurstGPT",
            files=(
                DatasetFile("BurstGPT_3.csv", _BGPT_V12 + "BurstGPT_3.csv", note="no published checksum"),
                DatasetFile(
                    "BurstGPT_without_fails_3.csv",
                    _BGPT_V12 + "BurstGPT_without_fails_3.csv",
                    note="no published checksum",
                ),
            ),
            notes="Header Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type. "
            "The release tag of the _3 files is taken to be v1.2 (the files are also in v2.0); if the URL moves, pass "
            "the new one with `fetch(..., base_url=...)`.",
        ),
        Dataset(
            name="azure-llm-2023",
            title="Azure LLM inference trace 2023 (Splitwise): code and conversation, one hour each",
            directory="azure-llm-2023",
            license="CC-BY-4.0",
            citation="Pratyush Patel, Esha Choukse, Chaojie Zhang, Aashaka Shah, Íñigo Goiri, Saeed Maleki, Ricardo "
            "Bianchini. Splitwise: Efficient generative LLM inference using phase splitting. ISCA 2024.",
            upstream="https://github.com/Azure/AzurePublicDataset (data/, commit 790921015d50dd6aae7f7e47f39ba0e235ad6b08)",
            files=(
                DatasetFile(
                    "AzureLLMInferenceTrace_code.csv",
                    _AZ23 + "AzureLLMInferenceTrace_code.csv",
                    sha256="54e9a6d2a4bd06ba1e060304b900abbc74cbea53de96506e60fe5bb4f2277fb6",
                    size_bytes=320_117,
                    rows=8_819,
                ),
                DatasetFile(
                    "AzureLLMInferenceTrace_conv.csv",
                    _AZ23 + "AzureLLMInferenceTrace_conv.csv",
                    sha256="2f1e5b666d4e3055fdbba98598ce2ec307767b9064e03e2fa46676dbcc7d0bf8",
                    size_bytes=719_188,
                    rows=19_366,
                ),
            ),
            notes="Header TIMESTAMP,ContextTokens,GeneratedTokens; wall-clock timestamps with 7 fractional digits.",
        ),
        Dataset(
            name="azure-llm-2024",
            title="Azure LLM inference trace 2024 (DynamoLLM): code and conversation, one week each",
            directory="azure-llm-2024",
            license="CC-BY-4.0",
            citation="Jovan Stojkovic, Chaojie Zhang, Íñigo Goiri, Josep Torrellas, Esha Choukse. DynamoLLM: Designing "
            "LLM Inference Clusters for Performance and Energy Efficiency. HPCA 2025.",
            upstream="https://github.com/Azure/AzurePublicDataset (AzureLLMInferenceDataset2024.md); files on Azure blob "
            "storage",
            files=(
                DatasetFile(
                    "AzureLLMInferenceTrace_code_1week.csv",
                    _AZ24 + "AzureLLMInferenceTrace_code_1week.csv",
                    note="no published checksum",
                ),
                DatasetFile(
                    "AzureLLMInferenceTrace_conv_1week.csv",
                    _AZ24 + "AzureLLMInferenceTrace_conv_1week.csv",
                    note="no published checksum",
                ),
            ),
            notes="Same header as 2023; timestamps carry a UTC offset (+00:00), May 10-19 2024.",
        ),
        Dataset(
            name="mooncake-fast25",
            title="Mooncake FAST'25 traces (Kimi): conversation (one hour of real traffic) and synthetic, with hash_ids",
            directory="mooncake-fast25",
            license="Apache-2.0",
            citation="Ruoyu Qin, Zheming Li, Weiran He, Jialei Cui, Feng Ren, Mingxing Zhang, Yongwei Wu, Weimin Zheng, "
            "Xinran Xu. Mooncake: Trading More Storage for Less Computation - A KVCache-centric Architecture for "
            "Serving LLM Chatbot. USENIX FAST 2025.",
            upstream="https://github.com/kvcache-ai/Mooncake (FAST25-release/traces, commit "
            "3cca71daccf2a7afb8fe3f0295358f70e3a69fdb)",
            files=(
                DatasetFile(
                    "conversation_trace.jsonl",
                    _MC + "conversation_trace.jsonl",
                    sha256="b8cbb061a85206d729d91cdc2981f43c9e0d99209dce588d3af5f7934408b9df",
                    size_bytes=3_029_533,
                    rows=12_031,
                ),
                DatasetFile(
                    "synthetic_trace.jsonl",
                    _MC + "synthetic_trace.jsonl",
                    sha256="bd070915a98fc0ed264d7cfef2ce746002eb3076a695ec31ba2674c0111ec131",
                    size_bytes=1_136_313,
                    rows=3_993,
                ),
            ),
            notes="JSONL {timestamp (ms), input_length, output_length, hash_ids (512-token prefix blocks)}.",
        ),
        Dataset(
            name="servegen",
            title="ServeGen per-client workload statistics (Alibaba Cloud Model Studio)",
            directory="servegen",
            license="Apache-2.0",
            citation="ServeGen: Workload Characterization of Large Language Model Serving in Production. "
            "arXiv:2505.09999.",
            upstream="https://github.com/alibaba/ServeGen (folder data/, commit f891d1189eb32b3868dfc443800c4150548c282a)",
            kind="directory",
            notes="791 files under data/<category>/<model>/chunk-<client>-{trace.csv,dataset.json}; see "
            "servegen/PROVENANCE.md. Fetch by cloning: git clone https://github.com/alibaba/ServeGen && git -C ServeGen "
            "checkout f891d1189eb32b3868dfc443800c4150548c282a, then add ServeGen/data's parent to WORKBENCH_DATA as "
            "servegen/.",
            extra={"subdirectory": "data", "commit": "f891d1189eb32b3868dfc443800c4150548c282a"},
        ),
        Dataset(
            name="fabric-websearch-128",
            title="Fixed web-search flow workloads (connection matrices) on a 128-host leaf-spine at 90% load",
            directory="fabric-websearch-128",
            license="free to use (generated for this project; see the shared data README)",
            citation="Generated for the workbench's packet-level validation (issue 16); flow sizes from the DCTCP "
            "web-search CDF (Alizadeh et al., Data Center TCP, SIGCOMM 2010).",
            upstream="none: generated (Poisson arrivals per host, uniform destinations, seed 1); see the card",
            files=(
                DatasetFile(
                    "ws_128_10g_90_25ms.cm",
                    "",
                    sha256="e1178e780acb76ed5e030a684b8bb1c947816f7ecb57f44cc09c625e8c55c54c",
                    size_bytes=92_980,
                    rows=2_119,
                    note="25 ms of arrivals",
                ),
                DatasetFile(
                    "ws_128_10g_90_50ms.cm",
                    "",
                    sha256="6569ab0340170f82a493c2aed10bcb03cea34ea60345a4e165d940ec152abb3b",
                    size_bytes=188_703,
                    rows=4_248,
                    note="50 ms of arrivals",
                ),
                DatasetFile(
                    "ws_128_10g_90_25ms.spines",
                    "",
                    sha256="64dbd9eb132dd754b5f4fac129a9cf70af2a7a6161b9ad8addacdfff36f2230c",
                    size_bytes=13_834,
                    rows=2_119,
                    note="the reference run's spine per flow of the 25 ms file ('ID SPINE', -1: same leaf)",
                ),
                DatasetFile(
                    "ws_128_10g_90_50ms.spines",
                    "",
                    sha256="24e9c9953e12a49c402a4172c3fe7f16581a1dc2e3b7a9fddb7c749f2c2fbcd9",
                    size_bytes=28_873,
                    rows=4_248,
                    note="the reference run's spine per flow of the 50 ms file",
                ),
            ),
            notes="htsim connection-matrix text: 'Nodes N', 'Connections C', then 'SRC->DST id ID start PS size BYTES' "
            "(start in picoseconds). Read with workbench.aqm.replay.read_connection_matrix; the network below is what "
            "`workbench aqm replay` runs them on by default (the README's: byte-counted 100 x 1500 B switch buffers, "
            "marking on departure above 15 x 1500 B, NewReno DCTCP with ssthresh 100, alpha from 0 and a cut every "
            "window while alpha > 0, RTO 3 s initial, 250 ms floor, 10 ms timer), each flow on the spine of the "
            ".spines file beside its .cm. "
            "Card: datasets/cards/fabric-websearch-128.md.",
            extra={
                "network": {
                    "leaves": 16,
                    "spines": 8,
                    "hosts_per_leaf": 8,
                    "link_gbps": 10.0,
                    "link_delay_s": 1e-6,
                    "buffer_pkts": 100,
                    "buffer_bytes": 150_000,
                    "packet_bytes": 1500,
                    "ack_bytes": 40,
                    "ecn_step_pkts": 15,
                    "mark_on": "departure",
                    "nic_buffer_pkts": 1000,
                    "init_cwnd_pkts": 10,
                    "init_ssthresh_pkts": 100.0,
                    "dctcp_alpha0": 0.0,
                    "dctcp_g": 1.0 / 16.0,
                    "dctcp_cut": "every-window",
                    "loss_recovery": "newreno",
                    "init_rto_s": 3.0,
                    "min_rto_s": 0.25,
                    "rto_tick_s": 0.01,
                    "routing": "ecmp",
                }
            },
        ),
    ]
}


@accepts()
def datasets() -> list[Dataset]:
    """All registry entries, in registry order.

    Examples
    --------
    >>> [d.name for d in datasets()][:2]
    ['burstgpt', 'burstgpt-v3']
    """
    return list(REGISTRY.values())


@accepts()
def dataset(name: str) -> Dataset:
    """The registry entry called ``name`` (ValueError listing the names otherwise).

    Examples
    --------
    >>> dataset("azure-llm-2023").license
    'CC-BY-4.0'
    """
    if name not in REGISTRY:
        raise ValueError(f"dataset name must be one of {', '.join(REGISTRY)}; got {name!r}")
    return REGISTRY[name]


@accepts()
def data_home() -> Path:
    """Where :func:`fetch` writes by default: the first ``$WORKBENCH_DATA`` directory, else
    ``cache_dir()/"data"`` (add that to ``WORKBENCH_DATA`` to put it on the search path)."""
    env = [p for p in os.environ.get("WORKBENCH_DATA", "").split(os.pathsep) if p]
    d = Path(env[0]).expanduser() if env else cache_dir() / "data"
    d.mkdir(parents=True, exist_ok=True)
    return d


@accepts()
def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file (remembered while the file is unchanged: :func:`workbench.cache.fingerprint`)."""
    return _cache.fingerprint(path)


# ----------------------------------------------------------------------------------------------------------------------
# Trust on first use: a sha256 sidecar for files whose upstream publishes no checksum
# ----------------------------------------------------------------------------------------------------------------------


@accepts()
def sidecar_path(path: str | os.PathLike) -> Path:
    """The trust-on-first-use record of ``path``: ``<path>.sha256`` in ``sha256sum`` format."""
    p = Path(path)
    return p.with_name(p.name + ".sha256")


@accepts()
def recorded_sha256(path: str | os.PathLike) -> str | None:
    """The sha256 recorded for ``path`` on its first download (``None`` when there is no record)."""
    try:
        words = sidecar_path(path).read_text().split()
    except OSError:
        return None
    return words[0].lower() if words and len(words[0]) == 64 else None


def _record_sha256(path: Path, digest: str) -> None:
    with _cache.atomic_path(sidecar_path(path)) as tmp:
        tmp.write_text(f"{digest}  {path.name}\n")


@accepts()
def registry_file(path: str | os.PathLike) -> DatasetFile | None:
    """The registry entry of a file found as ``<search dir>/<dataset directory>/<name>``, or ``None``."""
    p = Path(path)
    for ds in REGISTRY.values():
        if ds.kind == "files" and p.parent.name == Path(ds.directory).name:
            for f in ds.files:
                if f.name == p.name:
                    return f
    return None


@accepts()
def verify_file(path: str | os.PathLike) -> str:
    """Check ``path`` against its registry sha256, or else against the sha256 recorded on its first download;
    return its sha256. Raises :class:`ChecksumError` naming the file on a mismatch.

    Made for loaders to call on every use, so that a file that changed after it was fetched is an error rather than
    silently different data. The hash is :func:`workbench.cache.fingerprint` (computed once per process for an
    unchanged file; the cache key needs it anyway).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.csv"
    >>> _ = p.write_bytes(b"a")
    >>> verify_file(p)[:12]
    'ca978112ca1b'
    """
    p = Path(path)
    digest = _cache.fingerprint(p)
    f = registry_file(p)
    if f is not None and f.sha256 is not None:
        if digest != f.sha256:
            raise ChecksumError(f"{p} does not match the registry: sha256 {digest}, expected {f.sha256}")
        return digest
    recorded = recorded_sha256(p)
    if recorded is not None and recorded != digest:
        raise ChecksumError(
            f"{p} changed since it was downloaded: sha256 {digest}, recorded {recorded} in {sidecar_path(p)} "
            "(trust on first use); fetch it again with --force, or delete the record to accept the new contents"
        )
    return digest


@accepts()
def checksum_status(f: DatasetFile, where: Path | None) -> str:
    """How ``f`` is verified, for ``workbench data list``: published sha256, recorded on first use, or neither yet."""
    if f.sha256:
        return f"published sha256 {f.sha256[:12]}..."
    recorded = recorded_sha256(where) if where is not None else None
    if recorded is None:
        return "no published checksum, none recorded yet: fetch records one, trust on first use"
    return f"no published checksum; sha256 {recorded[:12]}... recorded on first fetch, trust on first use"


# ----------------------------------------------------------------------------------------------------------------------
# Fetch
# ----------------------------------------------------------------------------------------------------------------------


@accepts()
def fetch(
    name: str | Dataset,
    files: list[str] | None = None,
    *,
    dest: str | os.PathLike | None = None,
    base_url: str | None = None,
    progress: bool = True,
    force: bool = False,
    timeout_s: float = 60.0,
    retries: int = 5,
    backoff_s: float = 1.0,
    quiet: bool = False,
) -> list[Path]:
    """Download a registered dataset from its upstream location, verify it, and record what it was.

    Each file is written to ``<dest>/<directory>/<file>.part`` and renamed into place only when complete and
    verified, so an existing file is never replaced by a worse one. Verification: the byte count against the
    server's ``Content-Length`` and the registry's ``size_bytes``, then the registry's sha256. A connection that
    drops or stalls (no data for ``timeout_s``) keeps the ``.part`` and resumes it with an HTTP Range request, with
    bounded retries and exponential backoff; a server that ignores Range restarts it from zero. Wrong bytes (size or
    checksum mismatch once complete) delete the ``.part`` and raise :class:`ChecksumError`.

    Files whose upstream publishes no checksum get a *trust on first use* record: the sha256 of the first download
    is written to ``<file>.sha256`` and every later ``fetch`` (and :func:`verify_file`, which loaders call) checks
    the file against it. ``workbench data list`` shows which files are verified which way.

    Parameters
    ----------
    name : str or Dataset
        A registry name (see :func:`datasets`) or a :class:`Dataset` (e.g. a mirror).
    files : list of str, optional
        Only these files of the dataset (default: all).
    dest : path, optional
        Root directory; default :func:`data_home`. Files go to ``dest/<dataset.directory>/``.
    base_url : str, optional
        Replace each file's URL directory with this one (a mirror), keeping the file name.
    progress : bool
        Show a progress bar (tqdm, on stderr).
    force : bool
        Download even if a verified copy exists (the copy is replaced only once the new one is verified).
    timeout_s : float
        Longest wait for the server to answer or send the next block, in seconds.
    retries : int
        Consecutive attempts without progress allowed after a drop, stall or HTTP 5xx before giving up.
    backoff_s : float
        Wait before the first retry; doubled for each further one (at most 30 s).
    quiet : bool
        Do not print status lines.

    Returns
    -------
    list of Path
        The verified files.

    Examples
    --------
    >>> fetch("azure-llm-2023", dest="/tmp/wb-data")  # doctest: +SKIP
    [PosixPath('/tmp/wb-data/azure-llm-2023/AzureLLMInferenceTrace_code.csv'), ...]
    """
    ds = name if isinstance(name, Dataset) else dataset(name)
    if ds.kind == "directory":
        raise ValueError(
            f"dataset {ds.name!r} is a directory of {ds.upstream} and is not fetched file by file: {ds.notes}"
        )
    wanted = list(ds.files) if files is None else [ds.file(f) for f in files]
    local = [f.name for f in wanted if not f.url]
    if local and base_url is None:
        raise ValueError(
            f"dataset {ds.name!r} has no download location for {', '.join(local)} (upstream: {ds.upstream}); "
            "it is read from the data search path only (`workbench data path`), or pass a mirror with base_url"
        )
    timeout_s = V.positive("timeout_s", timeout_s)
    retries = V.integer("retries", retries, minimum=0)
    backoff_s = V.nonnegative("backoff_s", backoff_s)
    root = Path(dest).expanduser() if dest is not None else data_home()
    folder = root / ds.directory
    folder.mkdir(parents=True, exist_ok=True)
    out: list[Path] = []
    for f in wanted:
        url = f.url if base_url is None else base_url.rstrip("/") + "/" + f.name
        target = folder / f.name
        part = folder / (f.name + ".part")
        if target.exists() and not force:
            out.append(_already_present(target, f, quiet))
            continue
        total, log = download(
            url,
            part,
            label=f.name,
            expected_size=f.size_bytes,
            timeout_s=timeout_s,
            retries=retries,
            backoff_s=backoff_s,
            progress=progress,
            quiet=quiet,
        )
        for how in ("resumed", "restarted"):
            if how in log:
                say(f"{f.name}: {how} the partial download {part}", quiet)
        got = check_complete(part, url, total, size_bytes=f.size_bytes, sha256=f.sha256)
        recorded = recorded_sha256(target) if f.sha256 is None else None
        if recorded is not None and recorded != got:
            part.unlink()
            raise ChecksumError(
                f"{f.name} from {url} changed upstream since its first download: sha256 {got}, recorded {recorded} "
                f"in {sidecar_path(target)}; kept {target} as it was and deleted the new download. Delete the record "
                "to accept the new contents."
            )
        with open(part, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(part, target)
        if f.sha256 is None:
            _record_sha256(target, got)
            say(
                f"{target}: downloaded ({target.stat().st_size} bytes), sha256 {got} recorded in "
                f"{sidecar_path(target).name} (no published checksum: trust on first use)",
                quiet,
            )
        else:
            say(f"{target}: downloaded and verified (sha256 {got[:12]}...)", quiet)
        out.append(target)
    if dest is None and not any(root.resolve() == d for d in search_path()):
        say(f"note: {root} is not on the data search path; export WORKBENCH_DATA={root}", quiet)
    return out


def _already_present(target: Path, f: DatasetFile, quiet: bool) -> Path:
    """Verify a file already at ``target`` (published sha256 and size, else the first-use record, which is written
    now if missing) without downloading it again."""
    got = _cache.fingerprint(target)
    if f.sha256 is not None:
        if got != f.sha256 or (f.size_bytes is not None and target.stat().st_size != f.size_bytes):
            raise ChecksumError(
                f"{target} exists but does not match the registry (sha256 {f.sha256}); "
                "delete it or fetch with force=True (`workbench data fetch --force`)"
            )
        say(f"{target}: already present and verified", quiet)
        return target
    recorded = recorded_sha256(target)
    if recorded is None:
        _record_sha256(target, got)
        say(f"{target}: already present; sha256 {got} recorded (no published checksum: trust on first use)", quiet)
    elif recorded != got:
        raise ChecksumError(
            f"{target} changed since its first download: sha256 {got}, recorded {recorded} in {sidecar_path(target)}; "
            "fetch with force=True to download it again, or delete the record to accept the new contents"
        )
    else:
        say(f"{target}: already present (sha256 matches the record from its first download)", quiet)
    return target
