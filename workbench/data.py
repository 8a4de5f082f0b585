"""Where data comes from: the data search path, the dataset registry and ``fetch``.

Data files are looked up, in order, in

1. ``$WORKBENCH_DATA`` (one or more directories separated by ``os.pathsep``),
2. the project's ``datasets/`` folder (dataset cards, small generated samples, derived parameter files),
3. ``../shared/data`` beside the project checkout (real public traces for development and CI).

Upstream traces are never committed to the repository; they are read in place from the search path.

Examples
--------
>>> from workbench import data
>>> [p.name for p in data.search_path()][:1]  # doctest: +SKIP
['datasets']
>>> data.find("no/such/file.csv") is None
True
"""

from __future__ import annotations

import hashlib
import os
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "PROJECT_ROOT",
    "search_path",
    "find",
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
    "ChecksumError",
]

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def search_path() -> list[Path]:
    """The directories searched for data, in order (only those that exist)."""
    dirs: list[Path] = []
    env = os.environ.get("WORKBENCH_DATA", "")
    dirs += [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    dirs.append(PROJECT_ROOT / "datasets")
    dirs.append(PROJECT_ROOT.parent / "shared" / "data")
    seen: list[Path] = []
    for d in dirs:
        d = d.resolve()
        if d.is_dir() and d not in seen:
            seen.append(d)
    return seen


def find(relpath: str | os.PathLike) -> Path | None:
    """Return the first ``<dir>/<relpath>`` that exists on the search path, or ``None``."""
    rel = Path(relpath)
    if rel.is_absolute():
        return rel if rel.exists() else None
    for d in search_path():
        candidate = d / rel
        if candidate.exists():
            return candidate
    return None


def require(relpath: str | os.PathLike, *, hint: str = "") -> Path:
    """Like :func:`find` but raise :class:`FileNotFoundError` naming the places searched (and ``hint``)."""
    found = find(relpath)
    if found is None:
        where = ", ".join(str(d) for d in search_path()) or "(no search-path directory exists)"
        msg = f"data file {str(relpath)!r} not found on the data search path: {where}. Set WORKBENCH_DATA to add one."
        raise FileNotFoundError(msg + (f" {hint}" if hint else ""))
    return found


def cache_dir() -> Path:
    """Directory for derived caches (parquet copies of parsed traces, ...): ``$WORKBENCH_CACHE`` or
    ``~/.cache/workbench``. Created on first use."""
    d = Path(os.environ.get("WORKBENCH_CACHE", Path.home() / ".cache" / "workbench")).expanduser()
    d.mkdir(parents=True, exist_ok=True)
    return d


# ----------------------------------------------------------------------------------------------------------------------
# Dataset registry
# ----------------------------------------------------------------------------------------------------------------------
#
# Each entry names the files of one public dataset, where upstream serves them, their sha256 where it is published (or
# recorded from the copy in ../shared/data, see its PROVENANCE files), the license and the citation. ``fetch`` downloads
# them; loaders in ``workbench.workloads.traces`` read them from the search path under ``<directory>/<file>``.

@dataclass(frozen=True)
class DatasetFile:
    """One file of a dataset: its name, upstream URL and, where known, sha256, size and row count."""

    name: str
    url: str
    sha256: str | None = None
    size_bytes: int | None = None
    rows: int | None = None
    note: str = ""


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

    def file(self, name: str) -> DatasetFile:
        for f in self.files:
            if f.name == name:
                return f
        raise ValueError(f"file must be one of {', '.join(f.name for f in self.files)}; got {name!r}")

    def relpath(self, name: str) -> str:
        """Path of ``name`` relative to a search-path directory."""
        return f"{self.directory}/{self.file(name).name}"

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
                    "BurstGPT_without_fails_3.csv", _BGPT_V12 + "BurstGPT_without_fails_3.csv", note="no published checksum"
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
            license="CC-BY-4.0",
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
            ),
            notes="htsim connection-matrix text: 'Nodes N', 'Connections C', then 'SRC->DST id ID start PS size BYTES' "
            "(start in picoseconds). Read with workbench.aqm.replay.read_connection_matrix; the network below is what "
            "`workbench aqm replay` runs them on by default. Card: datasets/cards/fabric-websearch-128.md.",
            extra={"network": {"leaves": 16, "spines": 8, "hosts_per_leaf": 8, "link_gbps": 10.0,
                               "link_delay_s": 1e-6, "buffer_pkts": 100, "packet_bytes": 1500, "ecn_step_pkts": 15,
                               "routing": "ecmp"}},
        ),
    ]
}


def datasets() -> list[Dataset]:
    """All registry entries, in registry order.

    Examples
    --------
    >>> [d.name for d in datasets()][:2]
    ['burstgpt', 'burstgpt-v3']
    """
    return list(REGISTRY.values())


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


class ChecksumError(ValueError):
    """A downloaded file does not match its registered sha256 (the partial file has been deleted)."""


def data_home() -> Path:
    """Where :func:`fetch` writes by default: the first ``$WORKBENCH_DATA`` directory, else
    ``cache_dir()/"data"`` (add that to ``WORKBENCH_DATA`` to put it on the search path)."""
    env = [p for p in os.environ.get("WORKBENCH_DATA", "").split(os.pathsep) if p]
    d = Path(env[0]).expanduser() if env else cache_dir() / "data"
    d.mkdir(parents=True, exist_ok=True)
    return d


def sha256_file(path: str | os.PathLike, chunk_bytes: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk_bytes):
            h.update(block)
    return h.hexdigest()


def _say(msg: str, quiet: bool) -> None:
    if not quiet:
        print(msg, file=sys.stderr)


def _download(url: str, part: Path, *, expected_size: int | None, progress: bool, timeout_s: float, label: str) -> str:
    """Download ``url`` into ``part``, resuming from its current size with an HTTP Range request when the server
    honours it (206) and restarting from zero when it does not (200). Returns ``"resumed"`` or ``"restarted"`` or
    ``"complete"`` (the server said the range is past the end: the partial file is already whole)."""
    from tqdm.auto import tqdm

    have = part.stat().st_size if part.exists() else 0
    req = urllib.request.Request(url, headers={"User-Agent": "workbench-data-fetch"})
    if have:
        req.add_header("Range", f"bytes={have}-")
    try:
        resp = urllib.request.urlopen(req, timeout=timeout_s)  # noqa: S310 - URLs come from the registry or the user
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:
            return "complete"
        raise ConnectionError(f"download of {url} failed: HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise ConnectionError(f"download of {url} failed: {exc.reason}") from None
    with resp:
        status = getattr(resp, "status", 200)
        if status == 206 and have:
            mode, how = "ab", "resumed"
        else:
            mode, how, have = "wb", "restarted" if have else "new", 0
        length = resp.headers.get("Content-Length")
        total = have + int(length) if length is not None else expected_size
        with (
            open(part, mode) as out,
            tqdm(
                total=total,
                initial=have,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                desc=label,
                disable=not progress,
                file=sys.stderr,
            ) as bar,
        ):
            while block := resp.read(1 << 16):
                out.write(block)
                bar.update(len(block))
    return how


def fetch(
    name: str | Dataset,
    files: list[str] | None = None,
    *,
    dest: str | os.PathLike | None = None,
    base_url: str | None = None,
    progress: bool = True,
    force: bool = False,
    timeout_s: float = 60.0,
    quiet: bool = False,
) -> list[Path]:
    """Download a registered dataset from its upstream location and verify each file's sha256.

    Each file is written to ``<dest>/<directory>/<file>.part`` and renamed when complete and verified. An interrupted
    download resumes from the partial file (HTTP Range) when the server allows it and restarts cleanly when it does
    not. A checksum mismatch deletes the partial file, says so, and raises :class:`ChecksumError`; running ``fetch``
    again starts over. A file already present and verified is not downloaded again (``force=True`` does).
    Files whose upstream publishes no checksum are downloaded and their sha256 is printed, marked unverified.

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
        Download even if a verified copy exists.
    timeout_s : float
        Socket timeout in seconds.
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
    root = Path(dest).expanduser() if dest is not None else data_home()
    folder = root / ds.directory
    folder.mkdir(parents=True, exist_ok=True)
    out: list[Path] = []
    for f in wanted:
        url = f.url if base_url is None else base_url.rstrip("/") + "/" + f.name
        target = folder / f.name
        part = folder / (f.name + ".part")
        if target.exists() and not force:
            if f.sha256 is None or sha256_file(target) == f.sha256:
                _say(f"{target}: already present" + ("" if f.sha256 else " (no published checksum)"), quiet)
                out.append(target)
                continue
            raise ChecksumError(
                f"{target} exists but its sha256 does not match the registry ({f.sha256}); "
                "delete it or fetch with force=True (`workbench data fetch --force`)"
            )
        if force and target.exists():
            target.unlink()
        how = _download(url, part, expected_size=f.size_bytes, progress=progress, timeout_s=timeout_s, label=f.name)
        if how in ("resumed", "restarted"):
            _say(f"{f.name}: {how} the partial download {part}", quiet)
        got = sha256_file(part)
        if f.sha256 is not None and got != f.sha256:
            size = part.stat().st_size
            part.unlink()
            msg = (
                f"sha256 mismatch for {f.name} from {url}: expected {f.sha256}, got {got} ({size} bytes); "
                f"deleted the partial file {part}. Run fetch again to restart the download."
            )
            _say(msg, quiet)
            raise ChecksumError(msg)
        part.replace(target)
        if f.sha256 is None:
            _say(f"{target}: downloaded, sha256 {got} (unverified: upstream publishes no checksum)", quiet)
        else:
            _say(f"{target}: downloaded and verified (sha256 {got[:12]}...)", quiet)
        out.append(target)
    if dest is None and not any(root.resolve() == d for d in search_path()):
        _say(f"note: {root} is not on the data search path; export WORKBENCH_DATA={root}", quiet)
    return out
