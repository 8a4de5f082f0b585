"""Multi-turn conversations as request tables: each turn's prompt is the conversation so far plus the new input.

A conversation of ``k`` turns (``turns``: a :class:`~workbench.workloads.streaming.LengthDist` spec, 1 added so
that every conversation has at least one turn) starts at a Poisson arrival (``rate_per_s``); each turn adds a user
input (``input_len``) and an answer (``output_len``), both drawn from the project's length laws
(:class:`~workbench.workloads.streaming.LengthDist` specs). Turn ``j + 1`` arrives ``think`` seconds (exponential,
mean ``think_s``) after turn ``j`` finishes, so only the first turn's arrival is known in advance: the others'
arrivals are set by the simulation (``arrival_s`` is NaN for them). A conversation stops early when its next prompt
would exceed ``max_context`` tokens.

The defaults are of the order of ShareGPT conversations (the multi-turn chat workload FastSwitch, arXiv 2411.18424,
targets): a few turns, user inputs of about a hundred tokens, answers of a few hundred.
They are stated, not fitted; :func:`sessions_from_trace` takes the turns from a trace with ``session_id`` instead
(BurstGPT's v3 release has one, read by :mod:`workbench.workloads.traces`; the Azure and Mooncake traces under the
data path carry no session ids).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._contracts import accepts
from .._rng import Seed, generator
from .._validate import integer, positive
from ..workloads.streaming import LengthDist

__all__ = ["conversations", "sessions_from_trace"]


@accepts()
def conversations(
    n_conversations: int,
    rate_per_s: float,
    *,
    turns: str = "exponential:2.5",
    input_len: str = "lognormal:120,1.0",
    output_len: str = "lognormal:250,0.8",
    think_s: float = 5.0,
    max_context: int = 4096,
    seed: Seed = 0,
) -> pd.DataFrame:
    """One row per turn: ``conversation``, ``turn``, ``arrival_s`` (first turns only, NaN otherwise),
    ``input_tokens`` (the whole prompt: history plus the new input), ``new_tokens`` (the new input),
    ``output_tokens``, ``think_s`` (the pause after this turn) and ``next`` (row of the next turn, -1 for the last).

    Examples
    --------
    >>> df = conversations(50, 2.0, seed=1)
    >>> bool((df.groupby("conversation").turn.min() == 0).all())
    True
    >>> t = df[df.conversation == df.conversation[df.turn == 1].iloc[0]]
    >>> bool(t.input_tokens.iloc[1] == t.input_tokens.iloc[0] + t.output_tokens.iloc[0] + t.new_tokens.iloc[1])
    True
    """
    n = integer("n_conversations", n_conversations, minimum=1)
    rate = positive("rate_per_s", rate_per_s)
    think = positive("think_s", think_s)
    cap = integer("max_context", max_context, minimum=2)
    rng = generator(seed)
    k = 1 + LengthDist.parse(turns).sample(n, rng)
    starts = np.cumsum(rng.exponential(1.0 / rate, n))
    total = int(k.sum())
    new = np.maximum(1, LengthDist.parse(input_len).sample(total, rng))
    out = np.maximum(1, LengthDist.parse(output_len).sample(total, rng))
    pause = rng.exponential(think, total)
    return _assemble(k, starts, new, out, pause, cap)


@accepts()
def sessions_from_trace(trace: pd.DataFrame, *, think_s: float = 5.0, max_context: int = 4096, seed: Seed = 0):
    """Conversations from a trace with ``session_id``: one conversation per session, its turns the session's
    requests in arrival order (their ``input_tokens`` taken as the new input, ``output_tokens`` as the answer), the
    first turn arriving at the session's first arrival (times from the earliest session's start); pauses drawn as
    in :func:`conversations`.

    Examples
    --------
    >>> t = pd.DataFrame({"session_id": ["a", "b", "a"], "arrival_s": [0.0, 1.0, 5.0],
    ...                   "input_tokens": [10, 20, 30], "output_tokens": [5, 6, 7]})
    >>> c = sessions_from_trace(t)
    >>> c.conversation.tolist(), c.input_tokens.tolist(), c["next"].tolist()
    ([0, 0, 1], [10, 45, 20], [1, -1, -1])
    """
    if "session_id" not in trace:
        raise ValueError("the trace has no session_id column: it cannot be split into conversations")
    think = positive("think_s", think_s)
    cap = integer("max_context", max_context, minimum=2)
    df = trace.sort_values(["session_id", "arrival_s"], kind="mergesort")
    g = df.groupby("session_id", sort=False)
    k = g.size().to_numpy()
    starts = g.arrival_s.min().to_numpy(float)
    o = np.argsort(starts, kind="mergesort")
    new = np.maximum(1, df.input_tokens.to_numpy(np.int64))
    out = np.maximum(1, df.output_tokens.to_numpy(np.int64))
    first = np.cumsum(k) - k
    idx = np.concatenate([np.arange(first[c], first[c] + k[c]) for c in o]) if len(o) else np.zeros(0, np.int64)
    pause = generator(seed).exponential(think, int(k.sum()))
    return _assemble(k[o], starts[o] - starts.min(), new[idx], out[idx], pause, cap)


def _assemble(k, starts, new, out, pause, cap) -> pd.DataFrame:
    """Turn tables from per-conversation turn counts and per-turn draws (a turn whose prompt would exceed ``cap``
    ends its conversation)."""
    conv = np.repeat(np.arange(k.size), k)
    first = np.cumsum(k) - k
    turn = np.arange(conv.size) - first[conv]
    # prompt of turn j: sum over earlier turns of (new + out), plus this turn's new input
    step = new + out
    cum = np.cumsum(step)
    before = cum - step - (cum - step)[first][conv]
    prompt = before + new
    # a conversation stops at its first turn whose prompt and answer exceed the cap (a first turn always runs,
    # clipped to the cap)
    bad = np.where(prompt + out > cap, turn, np.iinfo(np.int64).max)
    stop = np.minimum.reduceat(bad, first) if conv.size else np.zeros(0, np.int64)
    keep = (turn < stop[conv]) | (turn == 0)
    prompt = np.where(turn == 0, np.minimum(prompt, cap - 1), prompt)
    out = np.where(turn == 0, np.minimum(out, cap - prompt), out)
    df = pd.DataFrame(
        {
            "conversation": conv,
            "turn": turn,
            "arrival_s": np.where(turn == 0, starts[conv], np.nan),
            "input_tokens": prompt.astype(np.int64),
            "new_tokens": new.astype(np.int64),
            "output_tokens": np.maximum(1, out).astype(np.int64),
            "think_s": pause,
        }
    )[keep].reset_index(drop=True)
    nxt = np.arange(1, len(df) + 1)
    last = np.r_[df.conversation.to_numpy()[1:] != df.conversation.to_numpy()[:-1], True]
    df["next"] = np.where(last, -1, nxt)
    return df
