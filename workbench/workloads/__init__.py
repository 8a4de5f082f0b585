"""LLM serving workloads: trace loaders, characterization, generators and exporters.

Submodules (import them directly):

* trace half (BurstGPT, Azure, Mooncake): loaders into one request schema (:mod:`.traces`), characterization
  (:mod:`.characterize`), a BurstGPT-style generator (:mod:`.burstgpt`), the BurstGPT analysis of one trace against
  its regeneration (:mod:`.trace_analysis`) and exporters (:mod:`.export`);
* ServeGen half (:mod:`.servegen`): per-client pools of released statistics and a composer of per-client workloads.

Every request table is a pandas DataFrame sorted by ``arrival_s`` (seconds from the trace start) with at least
``input_tokens`` and ``output_tokens`` (int64); sources add ``model``, ``log_type``, ``session_id``, ``failed``,
``client_id``, ``hash_ids`` where they have them.
"""
