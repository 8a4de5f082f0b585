"""Training-cluster models: iteration time on the fabric, effective training time under failures, and finding the
faulty machine or the irregular iteration (:mod:`workbench.training.diagnosis`).

Like every model package it imports nothing from ``viz``, ``experiments``, ``reproductions`` or ``widgets``.
"""
