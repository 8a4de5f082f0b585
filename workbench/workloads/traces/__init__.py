"""Trace loaders: BurstGPT, Azure LLM inference (2023, 2024) and Mooncake into one request schema.

Every loader returns the table of :mod:`workbench.workloads.schema` (``arrival_s``, ``input_tokens``,
``output_tokens``, ``model``, ``log_type``, ``session_id``, ``failed`` and source-specific extras), reading columns by
name, never by position:

* **BurstGPT** (Wang et al., KDD 2025). v1 files (``BurstGPT_1.csv``, ``_2``) have the header
  ``Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type``; v3 files (``_3``) add ``Session ID`` and
  ``Elapsed time``. The layout is detected from the header. ``Timestamp`` is whole seconds from 00:00 of day 1, so
  ``arrival_s`` keeps it as is (origin = midnight of day 1) and ``time_resolution_s`` is 1. A failed request has zero
  response tokens: it is kept and flagged ``failed=True``, never dropped (about 3% of rows are exact duplicates at
  1-second resolution; they are legitimate and kept too). ``Log Type`` becomes ``conversation`` or ``api``.
* **Azure LLM inference traces** (Splitwise 2023, DynamoLLM 2024): ``TIMESTAMP,ContextTokens,GeneratedTokens`` with
  wall-clock timestamps (7 fractional digits in 2023, a ``+00:00`` offset in 2024). ``arrival_s`` counts from the
  first request; the wall-clock origin is kept in ``df.attrs`` for hour-of-day profiles. ``log_type`` is ``code`` or
  ``conversation`` from the file name (or the ``log_type`` argument).
* **Mooncake** FAST'25 JSONL: ``{"timestamp": ms, "input_length", "output_length", "hash_ids": [...]}``. ``hash_ids``
  (512-token prefix blocks; equal ids mean a reusable KV block) are kept as a list column for cache studies.

Large files are streamed in blocks with pyarrow (memory bounded by the block size plus the compact result). Every
load first checks the source against its registry sha256 (or the one recorded on its first download,
:func:`workbench.data.verify_file`); the parsed table is then cached through :mod:`workbench.cache`: verified parquet
under ``$WORKBENCH_CACHE/traces`` (never beside the data), keyed by the source's content, :data:`LOADER_VERSION`
and the options that change the result.

A malformed file raises :class:`TraceFormatError` (a ValueError) naming the file and line: wrong or missing columns,
an empty or non-numeric field, a byte that is not UTF-8, a truncated ``.gz`` (or a ``.gz`` that is not gzip), a JSON
``NaN``, a date-time outside what nanoseconds can hold (before 1677 or after 2262), negative tokens, timestamps that
go backwards, an empty file. Negative timestamps and token counts above :data:`MAX_TOKENS` (10 million) are errors
too unless ``allow_extreme=True``. JSON is parsed with a JSON parser and nothing is ever ``eval``-ed.

The shared file handling is in :mod:`~workbench.workloads.traces.files`, the loaders in
:mod:`~workbench.workloads.traces.formats`; :func:`detect_format` and :func:`load_trace` are the format registry's
(:mod:`workbench.workloads.formats`, which sits above the loaders), imported on first use. Every public name is
importable from ``workbench.workloads.traces``.

Examples
--------
>>> from workbench.workloads import traces
>>> df = traces.load_trace("azure-llm-2023/AzureLLMInferenceTrace_code.csv")  # doctest: +SKIP
>>> df[["arrival_s", "input_tokens", "output_tokens"]].head(2)  # doctest: +SKIP
"""

from .files import (
    AZURE_COLUMNS,
    BURSTGPT_V1_COLUMNS,
    BURSTGPT_V3_COLUMNS,
    LOADER_VERSION,
    MAX_TOKENS,
    MOONCAKE_FIELDS,
    TraceFormatError,
    TruncationWarning,
    check_last_line,
    check_unique_columns,
)
from .formats import load_azure, load_burstgpt, load_mooncake

__all__ = [
    "TraceFormatError",
    "TruncationWarning",
    "check_last_line",
    "check_unique_columns",
    "BURSTGPT_V1_COLUMNS",
    "BURSTGPT_V3_COLUMNS",
    "AZURE_COLUMNS",
    "MOONCAKE_FIELDS",
    "MAX_TOKENS",
    "LOADER_VERSION",
    "detect_format",
    "load_trace",
    "load_burstgpt",
    "load_azure",
    "load_mooncake",
]


def __getattr__(name: str):
    """``detect_format`` and ``load_trace`` from the format registry, on first use (it imports the loaders above)."""
    if name in ("detect_format", "load_trace"):
        from .. import formats

        return getattr(formats, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
