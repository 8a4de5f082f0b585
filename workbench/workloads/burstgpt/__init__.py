"""A BurstGPT-style workload generator: "modeled scaling" of a real trace.

BurstGPT (Wang et al., KDD 2025) describes its traces with a few models and scales them up by re-sampling from those
models instead of replaying the trace faster. This package does the same with three parts, each fitted from a trace by
:func:`fit_model` (or set by hand with :func:`from_params`; the paper's starting point is Gamma shape 0.5 and Zipf
exponent 1.1):

* **Arrivals**: a piecewise Gamma renewal process whose (shape, rate) change from window to window (20 minutes by
  default). Each window's parameters are the maximum-likelihood fit of that window in the source trace
  (:func:`workbench.workloads.characterize.window_gamma_fits`); generation draws window ``k`` (arrivals, lengths,
  failures) from its own stream ``keyed(seed, k)`` (:func:`generate_plan`, the block stream
  ``workbench workload generate burstgpt`` writes), with :func:`workbench.arrivals.piecewise_arrivals` at
  CV = 1/sqrt(shape).
* **Token lengths**: request lengths from a truncated Zipf law fitted by maximum likelihood; the response is drawn
  conditional on the request, ``log(response) = a + b log(request) + sigma * N(0, 1)`` (least squares on the log-log
  cloud of successful requests), so the response grows with the request when ``b > 0``, with the spread the trace has.
* **Failures**: Bernoulli per window with that window's failure share; a failed request has zero response tokens,
  as in BurstGPT.

**Rate scaling** divides the time axis by ``rate_scale``: the same sequence of windows, compressed, so every window's
rate is multiplied and its CV (burstiness) is kept. A round trip (fit, generate, re-fit) recovers the parameters
within sampling error (:func:`round_trip`; :func:`round_trip_summary` gives the share of parameters within two
standard errors), which the tests and the notebook check.

:func:`stand_in` builds the clearly labelled stand-in the notebook uses when the BurstGPT files are not on the data
search path: the paper's Gamma shape 0.5 and Zipf 1.1, with the other ingredients (rates, diurnal profile, response
model, failure share, model mix) set to stated assumptions, not measured values.

One module per part, every public name importable from ``workbench.workloads.burstgpt``:
:mod:`.model` (:class:`BurstGPTModel`, :func:`from_params`, :func:`fit_model`, :func:`sample_requests`,
:func:`generate`, :func:`generate_plan`), :mod:`.params` (:func:`save_params`, :func:`load_params`, the JSON parameter files),
:mod:`.round_trip` (:class:`RoundTrip`, :func:`round_trip`, :func:`round_trip_summary`) and :mod:`.stand_in` (:func:`stand_in`,
:data:`STAND_IN_ASSUMPTIONS`).

Examples
--------
>>> m = from_params(duration_s=7200.0, rate_rps=1.0, shape=0.5, zipf_alpha=1.1)
>>> df = generate(m, seed=0)
>>> len(df) > 0, list(df.columns)[:3]
(True, ['arrival_s', 'input_tokens', 'output_tokens'])
"""

from .model import BurstGPTModel, fit_model, from_params, generate, generate_plan, sample_requests
from .params import load_params, save_params
from .round_trip import RoundTrip, round_trip, round_trip_summary
from .stand_in import STAND_IN_ASSUMPTIONS, stand_in

__all__ = [
    "BurstGPTModel",
    "from_params",
    "fit_model",
    "generate",
    "generate_plan",
    "sample_requests",
    "save_params",
    "load_params",
    "RoundTrip",
    "round_trip",
    "round_trip_summary",
    "stand_in",
    "STAND_IN_ASSUMPTIONS",
]
