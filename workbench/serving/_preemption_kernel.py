"""The compiled iteration loop of :func:`workbench.serving.preemption.simulate_preemption` (see that module for the
model). One call runs a whole simulation; every per-request array is preallocated by the caller."""

from __future__ import annotations

import numpy as np
from numba import njit

# request states
NOT_ARRIVED, WAITING, RUNNING, SWAPPED, SWAPPING_IN, DONE = 0, 1, 2, 3, 4, 5


@njit(cache=True)
def _uniform(state):
    """A uniform draw in [0, 1) from a SplitMix64 stream (``state``: a uint64[1] advanced in place): the kernel's
    own seeded stream, no global random state."""
    state[0] += np.uint64(0x9E3779B97F4A7C15)
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def blocks_to_send(context, host_tokens, block_tokens, reuse):
    """Blocks a swap-out copies: the whole context's, or with reuse only those past the host copy's last full block
    (a partly filled block on the host is sent again)."""
    total = (context + block_tokens - 1) // block_tokens
    have = host_tokens // block_tokens if reuse else 0
    return total - have if have < total else 0


@njit(cache=True)
def copy_s(blocks, block_tokens, group_blocks, tensors, launch_s, token_s):
    """Seconds to copy ``blocks`` KV blocks one way: one copy per contiguous run of ``group_blocks`` blocks and per
    cache tensor (``tensors``: K and V of every layer), each paying ``launch_s``, plus the bytes over PCIe."""
    if blocks <= 0:
        return 0.0, 0
    copies = ((blocks + group_blocks - 1) // group_blocks) * tensors
    return copies * launch_s + blocks * block_tokens * token_s, copies


@njit(cache=True)
def _iter_cost(P, pairs, n_dec, kv, sampled, tok_tab, att_s, kv_s, head_tab, cpu_tab, overlap_cpu, dec_floor):
    """One iteration's seconds from the deployment's tabulated roofline (see ``_cost_tables``)."""
    t = P + n_dec
    if t >= tok_tab.size:
        t = tok_tab.size - 1
    s = sampled if sampled < head_tab.size else head_tab.size - 1
    gpu = tok_tab[t] + att_s * pairs + kv_s * kv + head_tab[s]
    if n_dec > 0:
        gpu += dec_floor
    c = n_dec if n_dec > sampled else sampled
    if c >= cpu_tab.size:
        c = cpu_tab.size - 1
    cpu = cpu_tab[c]
    if overlap_cpu:
        return gpu if gpu > cpu else cpu
    return gpu + cpu


@njit(cache=True)
def run(
    arrival,  # float64[n]: arrival of first turns; later turns' arrivals are set when the previous turn finishes
    prompt,  # int64[n]: prompt tokens of each request (a turn: the conversation so far plus the new input)
    out,  # int64[n]: output tokens
    conv,  # int64[n]: conversation of each request
    nxt,  # int64[n]: the next turn's request (-1 for a last turn)
    think,  # float64[n]: seconds between this turn's end and the next turn's arrival
    prio0,  # int64[n]: initial priority level
    gap_off,  # int64[n]: offset of each request's token gaps in the gap arrays
    n_conv,
    levels,
    kind,  # 0 reshuffle (all priorities redrawn at once), 1 markov (each request steps +-1)
    rate,
    seed,
    block_tokens,
    n_blocks,
    max_seqs,
    max_tokens,
    group_blocks,
    tensors,
    launch_s,
    token_s,
    async_swap,
    reuse,
    tok_tab,
    att_s,
    kv_s,
    head_tab,
    cpu_tab,
    overlap_cpu,
    dec_floor,  # float: the decode attention's fixed seconds per iteration that decodes anything
    max_iterations,
    # outputs
    first,
    finish,
    preempts,
    stall_ttft,
    gap_s,
    gap_stall,
    totals,  # float64[8]: stall_s, bytes, copies, swap_outs, swap_ins, iterations, compute_s, out_copy_s
):
    rs = np.full(1, seed, np.uint64)
    n = arrival.size
    B = block_tokens
    state = np.zeros(n, np.int64)
    prio = prio0.copy()
    gen = np.zeros(n, np.int64)
    ctx = np.zeros(n, np.int64)
    held = np.zeros(n, np.int64)  # GPU blocks held (running, swapping in)
    ready = np.zeros(n, np.float64)  # swapping in: when the copy completes
    last_tok = np.zeros(n, np.float64)
    last_stall = np.zeros(n, np.float64)  # cumulative stall at the last token (or arrival)
    host = np.zeros(n_conv, np.int64)  # tokens of each conversation's KV valid in host memory
    arr = arrival.copy()
    # async swap-outs in flight: their blocks return when the copy ends
    pend_t = np.empty(n, np.float64)
    pend_b = np.empty(n, np.int64)
    n_pend = 0
    active = np.empty(n, np.int64)  # arrived, not done: indices in arrival order of entry
    n_act = 0
    order = np.argsort(arr, kind="mergesort")
    q = 0  # next first-turn arrival (index into order)
    # later turns arrive as their predecessors finish: a small heap would do; a list scanned per iteration is fine
    late = np.empty(n, np.int64)
    n_late = 0
    free = n_blocks
    t = 0.0
    S = 0.0  # cumulative synchronous stall
    out_busy = 0.0
    in_busy = 0.0
    done = 0
    it = 0
    while done < n and it < max_iterations:
        # arrivals
        while q < n and arr[order[q]] <= t:
            i = order[q]
            if arr[i] >= 0 and state[i] == NOT_ARRIVED:
                state[i] = WAITING
                last_stall[i] = S
                active[n_act] = i
                n_act += 1
            q += 1
        k = 0
        while k < n_late:
            i = late[k]
            if arr[i] <= t:
                state[i] = WAITING
                last_stall[i] = S
                active[n_act] = i
                n_act += 1
                late[k] = late[n_late - 1]
                n_late -= 1
            else:
                k += 1
        # async completions
        k = 0
        while k < n_pend:
            if pend_t[k] <= t:
                free += pend_b[k]
                pend_t[k] = pend_t[n_pend - 1]
                pend_b[k] = pend_b[n_pend - 1]
                n_pend -= 1
            else:
                k += 1
        n_run = 0
        n_in = 0
        for a in range(n_act):
            i = active[a]
            if state[i] == SWAPPING_IN and ready[i] <= t:
                state[i] = RUNNING
            if state[i] == RUNNING:
                n_run += 1
            elif state[i] == SWAPPING_IN:
                n_in += 1
        # priorities change
        if rate > 0:
            if kind == 0:
                if _uniform(rs) < rate:
                    for a in range(n_act):
                        prio[active[a]] = int(_uniform(rs) * levels)
            else:
                for a in range(n_act):
                    i = active[a]
                    if _uniform(rs) < rate:
                        p = prio[i] + (1 if _uniform(rs) < 0.5 else -1)
                        if p < 0:
                            p = 1 if levels > 1 else 0
                        if p >= levels:
                            p = levels - 2 if levels > 1 else 0
                        prio[i] = p
        stall = 0.0
        # growth: every running request needs room for one more token; preempt the lowest priority until it fits
        while True:
            need = 0
            for a in range(n_act):
                i = active[a]
                if state[i] == RUNNING and ctx[i] % B == 0:
                    need += 1
            if need <= free or n_run == 0:
                break
            v = -1
            for a in range(n_act):  # lowest priority, latest arrival on ties (vLLM's LIFO)
                i = active[a]
                # asynchronous: the victim's blocks return only when its copy ends, so the victim is one of the
                # requests that need a block (each such preemption lowers the need by one)
                if (
                    state[i] == RUNNING
                    and (not async_swap or ctx[i] % B == 0)
                    and (v < 0 or prio[i] < prio[v] or (prio[i] == prio[v] and arr[i] >= arr[v]))
                ):
                    v = i
            stall += _swap_out(v, t, ctx, held, state, host, conv, preempts, pend_t, pend_b, n_pend, B,
                               group_blocks, tensors, launch_s, token_s, async_swap, reuse, totals, out_busy)  # fmt: skip
            if async_swap:
                out_busy = pend_t[n_pend]
                n_pend += 1
            else:
                free += held[v]
            held[v] = 0
            n_run -= 1
        reserve = 0  # blocks the running requests' next tokens take
        for a in range(n_act):
            i = active[a]
            if state[i] == RUNNING and ctx[i] % B == 0:
                reserve += 1
        pend_total = 0
        for k in range(n_pend):
            pend_total += pend_b[k]
        # admission: the highest-priority waiting (new or swapped) request, preempting lower-priority running ones
        P = 0
        pairs = 0.0
        n_new = 0
        while True:
            c = -1
            for a in range(n_act):
                i = active[a]
                s = state[i]
                if (s in (WAITING, SWAPPED)) and (
                    c < 0 or prio[i] > prio[c] or (prio[i] == prio[c] and arr[i] < arr[c])
                ):
                    c = i
            if c < 0:
                break
            if state[c] == WAITING:
                nb = (prompt[c] + 1 + B - 1) // B
                if n_new > 0 and P + prompt[c] > max_tokens:
                    break
            else:
                nb = (ctx[c] + B - 1) // B + (1 if ctx[c] % B == 0 else 0)
            if nb > n_blocks:
                nb = n_blocks
            room = nb <= free - reserve
            slot = n_run + n_in < max_seqs
            if not (room and slot):
                if slot and nb <= free - reserve + pend_total:
                    break  # asynchronous swap-outs in flight will make room: wait for them
                v = -1
                for a in range(n_act):
                    i = active[a]
                    if (
                        state[i] == RUNNING
                        and ctx[i] > 0
                        and (v < 0 or prio[i] < prio[v] or (prio[i] == prio[v] and arr[i] >= arr[v]))
                    ):
                        v = i
                if v < 0 or prio[v] >= prio[c]:
                    break
                if ctx[v] % B == 0:
                    reserve -= 1
                stall += _swap_out(v, t, ctx, held, state, host, conv, preempts, pend_t, pend_b, n_pend, B,
                                   group_blocks, tensors, launch_s, token_s, async_swap, reuse, totals, out_busy)  # fmt: skip
                if async_swap:
                    out_busy = pend_t[n_pend]
                    pend_total += held[v]
                    n_pend += 1
                else:
                    free += held[v]
                held[v] = 0
                n_run -= 1
                continue
            free -= nb
            held[c] = nb
            if state[c] == WAITING:
                state[c] = RUNNING
                ctx[c] = -prompt[c]  # marks a prefill in this iteration (set below)
                P += prompt[c]
                pairs += prompt[c] * (prompt[c] + 1) / 2.0
                n_new += 1
                n_run += 1
            else:  # swap in: the whole context comes back
                blocks = (ctx[c] + B - 1) // B
                dt, cp = copy_s(blocks, B, group_blocks, tensors, launch_s, token_s)
                totals[1] += blocks * B
                totals[2] += cp
                totals[4] += 1
                if not reuse:
                    host[conv[c]] = 0  # vLLM frees the host blocks on swap-in
                if async_swap:
                    st = in_busy if in_busy > t else t
                    in_busy = st + dt
                    ready[c] = in_busy
                    state[c] = SWAPPING_IN
                    n_in += 1
                else:
                    stall += dt
                    state[c] = RUNNING
                    n_run += 1
        # the iteration: decodes of the running requests plus the admitted prompts
        n_dec = 0
        kv = 0
        for a in range(n_act):
            i = active[a]
            if state[i] == RUNNING and ctx[i] > 0:
                n_dec += 1
                kv += ctx[i]
        if n_dec == 0 and n_new == 0:
            # nothing to run: jump to the next event (an arrival, an async copy ending)
            nt = np.inf
            if q < n:
                nt = arr[order[q]]
            for k in range(n_late):
                if arr[late[k]] < nt:
                    nt = arr[late[k]]
            for k in range(n_pend):
                if pend_t[k] < nt:
                    nt = pend_t[k]
            for a in range(n_act):
                i = active[a]
                if state[i] == SWAPPING_IN and ready[i] < nt:
                    nt = ready[i]
            t += stall
            S += stall
            totals[0] += stall
            if nt == np.inf:
                if stall == 0.0:
                    break
                continue
            if nt > t:
                t = nt
            continue
        dt = _iter_cost(
            P, pairs, n_dec, kv, n_dec + n_new, tok_tab, att_s, kv_s, head_tab, cpu_tab, overlap_cpu, dec_floor
        )
        S += stall
        totals[0] += stall
        totals[6] += dt
        t += stall + dt
        it += 1
        # tokens
        a = 0
        while a < n_act:
            i = active[a]
            if state[i] != RUNNING:
                a += 1
                continue
            if ctx[i] < 0:  # prefilled this iteration: its first token
                ctx[i] = -ctx[i] + 1
                gen[i] = 1
                first[i] = t
                stall_ttft[i] = S - last_stall[i]
            else:
                g = gen[i]
                gap_s[gap_off[i] + g - 1] = t - last_tok[i]
                gap_stall[gap_off[i] + g - 1] = S - last_stall[i]
                gen[i] = g + 1
                if ctx[i] % B == 0:
                    free -= 1
                    held[i] += 1
                ctx[i] += 1
            last_tok[i] = t
            last_stall[i] = S
            if gen[i] >= out[i]:
                state[i] = DONE
                finish[i] = t
                free += held[i]
                held[i] = 0
                done += 1
                j = nxt[i]
                if j >= 0:
                    arr[j] = t + think[i]
                    late[n_late] = j
                    n_late += 1
                active[a] = active[n_act - 1]
                n_act -= 1
                continue
            a += 1
    totals[5] = it
    return t


@njit(cache=True)
def _swap_out(v, t, ctx, held, state, host, conv, preempts, pend_t, pend_b, n_pend, B, group_blocks, tensors,
              launch_s, token_s, async_swap, reuse, totals, out_busy):  # fmt: skip
    """Swap request ``v`` out: copy the blocks not already valid in host memory; returns the synchronous stall (0 when
    asynchronous: the copy is queued on the outbound link and its blocks return at ``pend_t[n_pend]``)."""
    c = conv[v]
    blocks = blocks_to_send(ctx[v], host[c], B, reuse)
    dt, cp = copy_s(blocks, B, group_blocks, tensors, launch_s, token_s)
    totals[1] += blocks * B
    totals[2] += cp
    totals[3] += 1
    totals[7] += dt
    host[c] = ctx[v]
    preempts[v] += 1
    state[v] = SWAPPED
    if async_swap:
        st = out_busy if out_busy > t else t
        pend_t[n_pend] = st + dt
        pend_b[n_pend] = held[v]
        return 0.0
    return dt
