"""Conversations (turns per session, gaps between turns) and failure rates of a request trace."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ... import _validate as V
from ..._contracts import accepts, output
from ..schema import validate_requests
from .profiles import _clock


@output
@dataclass(frozen=True, eq=False)
class ConversationStats:
    """The conversations of a trace (:func:`conversation_stats`).

    Attributes
    ----------
    sessions : int
        Number of distinct sessions (0 when the trace records none).
    turns : ndarray of int
        Requests per session, one entry per session in order of first appearance.
    gaps_s : ndarray of float
        Gaps between consecutive turns of the same session, session by session.
    mean_turns : float
        Mean of ``turns`` (NaN without sessions).
    """

    sessions: int
    turns: np.ndarray
    gaps_s: np.ndarray
    mean_turns: float


@accepts()
def conversation_stats(df: pd.DataFrame) -> ConversationStats:
    """Turns per conversation and gaps between consecutive turns, for traces with ``session_id`` (BurstGPT v3);
    empty arrays when the trace has no sessions.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"arrival_s": [0.0, 1.0, 5.0, 9.0], "input_tokens": 1, "output_tokens": 1,
    ...                    "session_id": pd.array(["a", "b", "a", None], dtype="string")})
    >>> s = conversation_stats(df)
    >>> s.sessions, s.turns.tolist(), s.gaps_s.tolist()
    (2, [2, 1], [5.0])
    """
    validate_requests(df)
    if "session_id" not in df or df["session_id"].isna().all():
        return ConversationStats(sessions=0, turns=np.array([], int), gaps_s=np.array([]), mean_turns=float("nan"))
    sub = df.loc[df["session_id"].notna(), ["session_id", "arrival_s"]]
    codes, uniques = pd.factorize(sub["session_id"])
    t = sub["arrival_s"].to_numpy(dtype=float)
    order = np.lexsort((t, codes))
    c, ts = codes[order], t[order]
    same = c[1:] == c[:-1]
    turns = np.bincount(codes)
    return ConversationStats(
        sessions=int(len(uniques)), turns=turns, gaps_s=np.diff(ts)[same], mean_turns=float(turns.mean())
    )


@accepts()
def failure_rates(df: pd.DataFrame, by: str = "model") -> pd.DataFrame:
    """Failure rate (share of requests flagged ``failed``) grouped by ``model``, ``log_type`` or ``hour`` of day.

    Rows whose ``failed`` is NA (sources without failure information) are not counted; ``known`` says how many were.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"arrival_s": [0.0, 1, 2], "input_tokens": 1, "output_tokens": [0, 1, 1],
    ...                    "model": ["A", "A", "B"], "failed": pd.array([True, False, False], dtype="boolean")})
    >>> failure_rates(df)["failure_rate"].tolist()
    [0.5, 0.0]
    """
    validate_requests(df)
    V.one_of("by", by, ("model", "log_type", "hour"))
    if "failed" not in df:
        raise ValueError("df has no 'failed' column")
    if by == "hour":
        clock, _ = _clock(df, None)
        key = pd.Series((np.floor(clock / 3600) % 24).astype(int), name="hour")
    else:
        key = df[by].astype("string").fillna("(unknown)").rename(by)
    failed = df["failed"]
    known = failed.notna()
    g = pd.DataFrame(
        {by: key.to_numpy(), "failed": failed.fillna(False).astype(bool).to_numpy(), "known": known.to_numpy()}
    )
    agg = g.groupby(by, observed=True).agg(requests=("known", "size"), known=("known", "sum"), failed=("failed", "sum"))
    agg["failure_rate"] = agg["failed"] / agg["known"].where(agg["known"] > 0)
    return agg.reset_index()
