"""Loading ServeGen client pools: the raw released files (parsed once, cached as a verified ``.npz`` under
``$WORKBENCH_CACHE/servegen``, keyed by the files' content) or the embedded summary."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ... import cache as _cache
from ... import data
from ..._contracts import accepts
from ..._validate import one_of
from .pmf import PmfTable, mixture, parse_pmf_literal
from .pool import FIELDS, LENGTH_WINDOW_S, MODELS, WINDOW_S, ClientPool

__all__ = ["load_pool", "raw_model_dir", "summary_path"]

_PATTERN_CODE = {"": 0, "Gamma": 1, "Weibull": 2}
#: Parser version of the raw files: part of every cache and memo key.
_CACHE_VERSION = 2


@accepts()
def raw_model_dir(model: str) -> Path | None:
    """Directory of ``model``'s released files on the data search path, or ``None``."""
    category = _check_model(model)
    return data.find(f"servegen/data/{category}/{model}")


def _check_model(model: str) -> str:
    if not isinstance(model, str):
        raise TypeError(f"model must be a str, got {type(model).__name__}")
    one_of("model", model, MODELS)
    return MODELS[model][0]


_CHUNK = re.compile(r"chunk-(\d+)-trace\.csv$")


def _client_files(directory: Path) -> list[tuple[int, Path, Path]]:
    out = []
    for p in directory.iterdir():
        m = _CHUNK.match(p.name)
        if m:
            cid = int(m.group(1))
            out.append((cid, p, directory / f"chunk-{cid}-dataset.json"))
    if not out:
        raise FileNotFoundError(f"no chunk-*-trace.csv files in {directory}")
    return sorted(out)


def _sources(files: list[tuple[int, Path, Path]]) -> list[Path]:
    """Every released file a pool is built from: each client's trace and, where it exists, its dataset.json (so a
    length file added or removed changes the cache key as surely as an edited one)."""
    return [p for _, t, d in files for p in (t, d) if p.exists()]


def _read_trace(path: Path) -> np.ndarray:
    """Parse one trace CSV into a structured view: (timestamp, rate, cv, pattern code)."""
    try:
        frame = pd.read_csv(
            path,
            header=None,
            names=["t", "rate", "cv", "pattern", "shape", "scale"],
            keep_default_na=False,
            dtype={"pattern": str},
        )
    except Exception as exc:  # pandas parser errors carry the line
        raise ValueError(f"{path}: malformed trace CSV: {exc}") from None
    for col in ("t", "rate", "cv"):
        vals = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(vals) | (vals < 0)
        if bad.any():
            line = int(np.argmax(bad)) + 1
            got = frame[col].iloc[line - 1]
            raise ValueError(f"{path}:{line}: column {col!r} must be a finite number >= 0, got {got!r}")
        frame[col] = vals
    codes = frame["pattern"].map(_PATTERN_CODE)
    if codes.isna().any():
        line = int(np.argmax(codes.isna().to_numpy())) + 1
        got = frame["pattern"].iloc[line - 1]
        raise ValueError(f"{path}:{line}: pattern must be 'Gamma', 'Weibull' or empty, got {got!r}")
    t = frame["t"].to_numpy()
    bad_t = (np.abs(t / WINDOW_S - np.round(t / WINDOW_S)) > 1e-6) | np.r_[False, np.diff(t) <= 0]
    if bad_t.any():
        line = int(np.argmax(bad_t)) + 1
        raise ValueError(f"{path}:{line}: timestamps must be increasing multiples of {WINDOW_S:g} s")
    active_bad = (frame["rate"].to_numpy() > 0) & ((codes.to_numpy() == 0) | (frame["cv"].to_numpy() <= 0))
    if active_bad.any():
        line = int(np.argmax(active_bad)) + 1
        raise ValueError(f"{path}:{line}: a window with rate > 0 needs a pattern and a cv > 0")
    return np.stack([t, frame["rate"].to_numpy(), frame["cv"].to_numpy(), codes.to_numpy(dtype=float)])


def _line_of(text: str, needle: str) -> int:
    pos = text.find(needle)
    return text.count("\n", 0, pos) + 1 if pos >= 0 else 1


def _read_lengths(path: Path, fields: tuple[str, ...]) -> dict[int, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """Parse one dataset.json: {window index: {field: (values, probs)}}; inactive windows are omitted."""
    text = path.read_text()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: malformed JSON: {exc.msg}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path}:1: expected a JSON object keyed by window timestamp")
    out: dict[int, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
    for ts, entry in doc.items():
        try:
            t = float(ts)
        except ValueError:
            raise ValueError(f"{path}:{_line_of(text, json.dumps(ts))}: window key {ts!r} is not a timestamp") from None
        if isinstance(entry, str) and entry.strip() in ("{}", ""):
            continue
        if not isinstance(entry, dict):
            raise ValueError(f"{path}:{_line_of(text, json.dumps(ts))}: window {ts} must map fields to PMF literals")
        parsed = {}
        for f in fields:
            lit = entry.get(f, "{}")
            try:
                parsed[f] = parse_pmf_literal(lit)
            except (ValueError, TypeError) as exc:
                line = _line_of(text, json.dumps(ts))
                raise ValueError(f"{path}:{line}: window {ts}, field {f}: {exc}") from None
        if all(v.size == 0 for v, _ in parsed.values()):
            continue
        if any(v.size == 0 for v, _ in parsed.values()):
            missing = [f for f, (v, _) in parsed.items() if v.size == 0]
            raise ValueError(f"{path}:{_line_of(text, json.dumps(ts))}: window {ts} lacks PMFs for {missing}")
        out[int(round(t / LENGTH_WINDOW_S))] = parsed
    return out


def _build_from_raw(model: str, files: list[tuple[int, Path, Path]]) -> dict[str, np.ndarray]:
    category, days = MODELS[model]
    fields = FIELDS[category]
    n_w = int(round(days * 86400 / WINDOW_S))
    n_lw = int(round(days * 86400 / LENGTH_WINDOW_S))
    n_c = len(files)
    rate = np.zeros((n_c, n_w))
    cv = np.zeros((n_c, n_w))
    fam = np.zeros((n_c, n_w), dtype=np.int8)
    own = -np.ones((n_c, n_lw), dtype=np.int64)
    has = np.zeros(n_c, dtype=bool)
    pmfs: dict[str, list] = {f: [] for f in fields}
    for i, (_cid, tpath, dpath) in enumerate(files):
        t, r, c, code = _read_trace(tpath)
        w = np.round(t / WINDOW_S).astype(np.int64)
        if w.size and w.max() >= n_w:
            raise ValueError(f"{tpath}:{int(np.argmax(w >= n_w)) + 1}: timestamp beyond the {days}-day span")
        rate[i, w], cv[i, w], fam[i, w] = r, c, code.astype(np.int8)
        if dpath.exists():
            has[i] = True
            for lw, entry in sorted(_read_lengths(dpath, fields).items()):
                if not 0 <= lw < n_lw:
                    raise ValueError(f"{dpath}: length window {lw * LENGTH_WINDOW_S:g} s beyond the {days}-day span")
                own[i, lw] = len(pmfs[fields[0]])
                for f in fields:
                    pmfs[f].append(entry[f])
    return _finish_arrays(model, np.array([f[0] for f in files], dtype=np.int64), rate, cv, fam, own, has, pmfs)


def _finish_arrays(model, client_ids, rate, cv, fam, own, has, pmfs) -> dict[str, np.ndarray]:
    """Append pooled fallback PMFs per 6 h window and flatten everything into npz-ready arrays."""
    category = MODELS[model][0]
    fields = FIELDS[category]
    n_own = len(pmfs[fields[0]])
    tables = {f: PmfTable.from_pmfs(pmfs[f]) for f in fields}
    n_lw = own.shape[1]
    per_lw = int(round(LENGTH_WINDOW_S / WINDOW_S))
    req = (rate * WINDOW_S).reshape(rate.shape[0], n_lw, per_lw).sum(axis=2)
    fallback = np.empty(n_lw, dtype=np.int64)
    for lw in range(n_lw):  # a loop over 6 h windows (<= 56), once at load time
        sel = own[:, lw] >= 0
        w = req[sel, lw] if req[sel, lw].sum() > 0 else np.ones(sel.sum())
        if not sel.any():  # no client has lengths in this window: pool over all windows
            sel2 = own >= 0
            idx, w = own[sel2], np.maximum(req[sel2], 1e-9)
        else:
            idx = own[sel, lw]
        fallback[lw] = n_own + lw
        for f in fields:
            pmfs[f].append(mixture(tables[f], idx, w))
    index = np.where(own >= 0, own, fallback[None, :])
    out = {
        "model": np.array(model),
        "client_ids": client_ids,
        "rate_rps": rate,
        "cv": cv,
        "family": fam,
        "length_index": index,
        "own_lengths": own >= 0,
        "has_lengths": has,
    }
    for f in fields:
        t = PmfTable.from_pmfs(pmfs[f])
        out[f"{f}__values"], out[f"{f}__cdf"], out[f"{f}__offsets"] = t.values, t.cdf, t.offsets
    return out


def _pool_from_arrays(arrays: Any, source: str) -> ClientPool:
    model = str(arrays["model"])
    category = MODELS[model][0]
    fields = FIELDS[category]
    tables = {
        f: PmfTable(
            np.asarray(arrays[f"{f}__values"], dtype=np.float64),
            np.asarray(arrays[f"{f}__cdf"], dtype=np.float64),
            np.asarray(arrays[f"{f}__offsets"], dtype=np.int64),
        )
        for f in fields
    }
    return ClientPool(
        model=model,
        category=category,
        source=source,
        client_ids=np.asarray(arrays["client_ids"], dtype=np.int64),
        start_s=0.0,
        rate_rps=np.asarray(arrays["rate_rps"], dtype=np.float64),
        cv=np.asarray(arrays["cv"], dtype=np.float64),
        family=np.asarray(arrays["family"], dtype=np.int8),
        fields=fields,
        tables=tables,
        length_index=np.asarray(arrays["length_index"], dtype=np.int64),
        own_lengths=np.asarray(arrays["own_lengths"], dtype=bool),
        has_lengths=np.asarray(arrays["has_lengths"], dtype=bool),
    )


@accepts()
def summary_path(model: str) -> Path | None:
    """The embedded compact summary of ``model`` (``datasets/servegen/<model>.npz``) if present.

    Examples
    --------
    >>> summary_path("m-small").name
    'm-small.npz'
    """
    _check_model(model)
    return data.find(f"servegen/summary/{model}.npz")


def _load_summary(model: str, path: Path) -> ClientPool:
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, EOFError, ValueError, zipfile.BadZipFile) as exc:
        raise ValueError(
            f"{path}: the ServeGen summary of {model} is damaged or truncated ({type(exc).__name__}: {exc}); "
            "restore it from the repository (git checkout datasets/servegen/summary)"
        ) from None
    fields = FIELDS[MODELS[model][0]]
    missing = [k for k in ("rate_rps", "cv", *(f"{f}__atoms" for f in fields)) if k not in arrays]
    if missing:
        raise ValueError(f"{path}: the ServeGen summary of {model} lacks the array(s) {', '.join(missing)}")
    for f in fields:  # the summary stores K equally likely quantile atoms per PMF
        atoms = arrays.pop(f"{f}__atoms").astype(np.float64)
        n, k = atoms.shape
        arrays[f"{f}__values"] = atoms.ravel()
        arrays[f"{f}__cdf"] = np.tile(np.arange(1, k + 1) / k, n)
        arrays[f"{f}__offsets"] = np.arange(n + 1, dtype=np.int64) * k
    arrays["rate_rps"] = arrays["rate_rps"].astype(np.float64)
    arrays["cv"] = arrays["cv"].astype(np.float64)
    return _pool_from_arrays(arrays, "summary")


def _load_raw(model: str, directory: Path, *, cache: bool) -> ClientPool:
    """Parse the released files; with ``cache``, through a verified ``.npz`` under ``$WORKBENCH_CACHE/servegen``
    keyed by the content of every source file (:func:`workbench.cache.cached_arrays`)."""
    files = _client_files(directory)
    if not cache:
        return _pool_from_arrays(_build_from_raw(model, files), "raw")
    arrays = _cache.cached_arrays(
        _sources(files), _CACHE_VERSION, lambda: _build_from_raw(model, files), kind=model, namespace="servegen"
    )
    return _pool_from_arrays(arrays, "raw")


@accepts()
def load_pool(model: str, *, source: str = "auto", cache: bool = True) -> ClientPool:
    """Load one released model's client pool.

    Parameters
    ----------
    model : {"m-large", "m-mid", "m-small", "mm-image", "deepseek-r1"}
    source : {"auto", "raw", "summary"}
        ``"raw"`` parses the released files on the data search path (``servegen/data/...``), cached as a verified
        ``.npz`` under ``$WORKBENCH_CACHE/servegen`` (:mod:`workbench.cache`); ``"summary"`` reads the embedded
        compact summary (``datasets/servegen/summary/<model>.npz``); ``"auto"`` prefers the raw files when present.
    cache : bool
        Use (and fill) the on-disk cache and the in-memory memo (:func:`workbench.cache.memo`, keyed by the content
        of the source files: an edited file is re-parsed, never served stale); ``False`` always re-parses.

    Returns
    -------
    ClientPool
        Every client in the release, including those without a length file. In the released data 15 m-large
        clients have no ``dataset.json`` (``has_lengths == False``); they carry 74% of m-large's requests at 14:00.
        The workbench keeps them and draws their lengths from the pooled PMF of the other clients in the same 6 h
        window; ServeGen's reference generator drops them. ``pool.filter(has_lengths=True)`` gives the reference's
        client set.

    Examples
    --------
    >>> pool = load_pool("m-large")
    >>> pool.n_clients, int((~pool.has_lengths).sum())
    (162, 15)
    >>> pool.filter(has_lengths=True).n_clients  # the reference generator's clients
    147
    """
    _check_model(model)
    one_of("source", source, ("auto", "raw", "summary"))
    directory = raw_model_dir(model) if source != "summary" else None
    if source == "raw" and directory is None:
        raise FileNotFoundError(
            f"ServeGen raw data servegen/data/{MODELS[model][0]}/{model} is not on the data search path "
            f"({', '.join(map(str, data.search_path()))})"
        )
    if directory is not None:
        if not cache:
            return _load_raw(model, directory, cache=False)
        sources = _sources(_client_files(directory))
        return _cache.memo(
            sources, _CACHE_VERSION, lambda: _load_raw(model, directory, cache=True), kind=f"{model}-raw"
        )
    path = summary_path(model)
    if path is None:
        raise FileNotFoundError(
            f"neither the ServeGen raw data (servegen/data/...) nor the embedded summary servegen/summary/{model}.npz "
            "is on the data search path"
        )
    if not cache:
        return _load_summary(model, path)
    return _cache.memo(path, _CACHE_VERSION, lambda: _load_summary(model, path), kind=f"{model}-summary")
