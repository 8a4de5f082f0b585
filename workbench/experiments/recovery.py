"""Recovery from interruptions vs job size: checkpoint-restart against live migration (issue 36: the study of
:mod:`workbench.reproductions.trainmover` as an experiment).

* ``training-recovery-vs-gpus`` -- a job of ``gpus`` GPUs (``gpus_per_host`` per host) failing at Llama 3's
  per-component rates scaled to its size (:func:`workbench.training.failures.job_rates_per_s`) and interrupted for
  planned events at Llama 3's rate per host (:func:`~workbench.training.failures.planned_rate_per_s`), recovered by
  ``mode``: a cold restart from a checkpoint written every Young/Daly interval (``checkpoint_s`` per write), or
  TrainMover's live migration (:class:`~workbench.training.failures.Recovery` for the phase durations). Detection
  (``detect_s``) and isolation (``isolate_s``) are common to both. Reported: the closed-form ETTR (fraction),
  the GPU-hours lost per day (``(1 - ETTR) x gpus x 24``), the job's MTBF (hours) and the checkpoint interval (s).

* ``training-ettr-vs-interval`` -- the same job model (``gpus``, Llama 3's rates times ``rate_scale``, planned
  interruptions) with every recovery phase a parameter (detection, isolation, restart, checkpoint write),
  checkpointing every ``interval_s`` (0: the Young/Daly interval of its MTBF): the closed-form ETTR, its Monte-Carlo
  estimate over ``replicas`` months (:func:`workbench.training.failures.simulate`, with its standard error), and
  the GPU-hours lost per day by category (``lost_<category>`` for each of
  :data:`~workbench.training.failures.LOSS_PARTS`). The study of notebook 08's failures panel: swept over
  ``interval_s`` it is the ETTR-vs-interval curve.

``training-recovery-vs-gpus`` is closed form (nothing random); ``training-ettr-vs-interval``'s Monte-Carlo is seeded
(by the sweep, or by ``job_seed`` where a study states its seed).
``mode`` is a treatment in both.
"""

from __future__ import annotations

from ..training import failures as tf
from ._space import Param, experiment

__all__ = ["training_recovery_vs_gpus", "training_ettr_vs_interval"]


@experiment(
    "training-recovery-vs-gpus",
    small={"gpus": [1024, 100_000], "mode": ["checkpoint", "live"]},
    params=[
        Param("gpus", 1024, "", low=1, high=10_000_000, log=True, doc="GPUs of the job"),
        Param("gpus_per_host", 8, "", low=1, high=64, doc="GPUs per host (host and software failures scale by host)"),
        Param("mode", "checkpoint", choices=("checkpoint", "live"), seeded=False, doc="restart or live migration"),
        Param("detect_s", 5.0, "s", low=0.0, high=1e6, doc="time to detect a failure (automated: C4D/Minder-style)"),
        Param("isolate_s", 60.0, "s", low=0.0, high=1e6, doc="time to isolate the faulty machine"),
        Param("checkpoint_s", 60.0, "s", low=0.0, high=1e5, low_inclusive=False, doc="time to write a checkpoint"),
    ],
)
def training_recovery_vs_gpus(*, gpus, gpus_per_host, mode, detect_s, isolate_s, checkpoint_s, seed):
    """ETTR, GPU-hours lost per day and MTBF of one job size under one recovery mode."""
    del seed  # deterministic
    rate = sum(tf.job_rates_per_s(gpus, gpus_per_host).values())
    planned = tf.planned_rate_per_s(gpus, gpus_per_host)
    interval = tf.young_daly_s(checkpoint_s, 1 / rate)
    rec = tf.Recovery(mode=mode, detect_s=detect_s, isolate_s=isolate_s, checkpoint_s=checkpoint_s, interval_s=interval)
    e = tf.ettr(rate, rec, planned)["ettr"]
    return {"ettr": e, "gpu_hours_lost_per_day": (1 - e) * gpus * 24, "mtbf_h": 1 / rate / 3600, "interval_s": interval}


@experiment(
    "training-ettr-vs-interval",
    version="1",
    small={"gpus": [1024, 100_000], "mode": ["checkpoint", "live"], "replicas": 20},
    params=[
        Param("gpus", 16384, "", low=8, high=100_000, log=True, label="GPUs",
              doc="GPUs of the job (one host to beyond Llama 3's 16,384)"),
        Param("gpus_per_host", 8, "", low=1, high=64, doc="GPUs per host (host and software failures scale by host)"),
        Param("rate_scale", 1.0, "", low=0.1, high=10.0, log=True, label="rate x Llama 3",
              doc="failure and planned-interruption rates as a multiple of Llama 3's"),
        Param("detect_s", 600.0, "s", low=1.0, high=1e4, log=True, label="detection",
              doc="time to detect a failure (600 s: the NCCL watchdog's timeout; C4D-style: seconds)"),
        Param("isolate_s", 1800.0, "s", low=1.0, high=1e4, log=True, label="isolation",
              doc="time to isolate the faulty machine (1,800 s: manual)"),
        Param("restart_s", 270.0, "s", low=30.0, high=3600.0, label="restart",
              doc="restart from a checkpoint (re-schedule, launch, communicator init, load, warm-up)"),
        Param("checkpoint_s", 60.0, "s", low=5.0, high=600.0, label="checkpoint write", doc="time to write a checkpoint"),
        Param("interval_s", 0.0, "s", low=0.0, high=1e8, doc="work between checkpoints (0: the Young/Daly interval)"),
        Param("mode", "checkpoint", choices=("checkpoint", "live"), seeded=False, doc="restart or live migration"),
        Param("replicas", 100, "", low=2, high=100_000, doc="Monte-Carlo replicas of 30 days (>= 2: a standard error)"),
        # not seeded: it replaces the sweep's seed when set, and leaves it as it was when not
        Param("job_seed", -1, "", low=-1, high=2**31 - 1, seeded=False,
              doc="-1: the sweep's seed; else the Monte-Carlo seed a stated study names (notebook 08: the GPU count)"),
    ],
)  # fmt: skip
def training_ettr_vs_interval(*, gpus, gpus_per_host, rate_scale, detect_s, isolate_s, restart_s, checkpoint_s,
                              interval_s, mode, replicas, job_seed, seed):  # fmt: skip
    """Closed-form and Monte-Carlo ETTR, and GPU-hours lost per day by category, of one job at one interval."""
    rate = sum(tf.job_rates_per_s(gpus, gpus_per_host, rate_scale=rate_scale).values())
    planned = tf.planned_rate_per_s(gpus, gpus_per_host, rate_scale=rate_scale)
    young_daly = tf.young_daly_s(checkpoint_s, 1 / rate)
    rec = tf.Recovery(mode=mode, detect_s=detect_s, isolate_s=isolate_s, restart_s=restart_s,
                      checkpoint_s=checkpoint_s, interval_s=interval_s or young_daly)  # fmt: skip
    closed = tf.ettr(rate, rec, planned)
    mc = tf.simulate(rate, rec, planned, replicas=replicas, seed=seed if job_seed < 0 else job_seed)
    return {
        "interval_used_s": rec.interval_s,
        "young_daly_s": young_daly,
        "mtbf_h": 1 / rate / 3600,
        "ettr": closed["ettr"],
        "mc_ettr": mc["ettr"],
        "mc_se": mc["ettr_se"],
        "gpu_hours_lost_per_day": (1 - closed["ettr"]) * gpus * 24,
        **{f"lost_{k}": closed[k] * gpus * 24 for k in tf.LOSS_PARTS},
    }
