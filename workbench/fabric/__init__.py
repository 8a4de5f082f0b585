"""Datacenter fabric models: leaf-spine topology, collectives, routing schemes, link loads and congestion.

See :mod:`workbench.fabric.topology` for the link numbering that every fast-path computation uses.
"""

from .topology import LINK_KINDS, LeafSpine, leaf_spine, path_links

__all__ = ["LINK_KINDS", "LeafSpine", "leaf_spine", "path_links"]
