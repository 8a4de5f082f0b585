"""Recovery from interruptions vs job size: checkpoint-restart against live migration (issue 36: the study of
:mod:`workbench.reproductions.trainmover` as an experiment).

* ``training-recovery-vs-gpus`` -- a job of ``gpus`` GPUs (``gpus_per_host`` per host) failing at Llama 3's
  per-component rates scaled to its size (:func:`workbench.training.failures.job_rates_per_s`) and interrupted for
  planned events at Llama 3's rate per host (:func:`~workbench.training.failures.planned_rate_per_s`), recovered by
  ``mode``: a cold restart from a checkpoint written every Young/Daly interval (``checkpoint_s`` per write), or
  TrainMover's live migration (:class:`~workbench.training.failures.Recovery` for the phase durations). Detection
  (``detect_s``) and isolation (``isolate_s``) are common to both. Reported: the closed-form ETTR (fraction),
  the GPU-hours lost per day (``(1 - ETTR) x gpus x 24``), the job's MTBF (hours) and the checkpoint interval (s).

Nothing is random here (closed form); ``mode`` is a treatment.
"""

from __future__ import annotations

from ..training import failures as tf
from ._space import Param, experiment

__all__ = ["training_recovery_vs_gpus"]


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
