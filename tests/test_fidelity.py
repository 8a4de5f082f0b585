"""The fidelity scoreboard: every engine a panel shows is declared, the table holds real numbers, a control outside
the validated envelope gives a note naming it, and cached points follow the code and the data."""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench import experiments
from workbench import fidelity as F
from workbench import reproductions as rep
from workbench._deps import module_closure
from workbench.cli import main
from workbench.testing import requires_data

WIDGETS = Path(__file__).resolve().parents[1] / "workbench" / "widgets"


# ---------------------------------------------------------------------------------------------------------------------
# Declarations
# ---------------------------------------------------------------------------------------------------------------------


def test_every_panel_and_experiment_names_declared_engines():
    panels = {p.panel for p in rep.load_all().papers.values() if p.panel}
    assert panels - set(F.PANELS) == set(), "a paper's panel is not mapped to the engines it shows"
    assert set(F.PANELS) - panels == set(), "fidelity.PANELS names a panel no paper has"
    # the workbench's own experiments (a test or a doctest may register its own in this process)
    modules = {f"workbench.experiments.{p.stem}" for p in (WIDGETS.parent / "experiments").glob("[!_]*.py")}
    own = {n for n in experiments.names() if experiments.get(n).fn.__module__ in modules}
    assert own == set(F.EXPERIMENTS), "every registered experiment maps to its engines"
    for shows in [*F.PANELS.values(), *F.EXPERIMENTS.values()]:
        assert shows and set(shows) <= set(F.ENGINES)
    # every widget module that builds a panel is behind some paper (explore panels go through EXPERIMENTS)
    modules = {p.stem for p in WIDGETS.glob("*.py")} - {"__init__", "explore"}
    assert modules == {key.split(":")[0].rsplit(".", 1)[1] for key in F.PANELS}
    # and every declared engine is shown somewhere: by a panel or an experiment, or (the packet engine's NewReno
    # senders, which only replays of recorded networks run) by notebook 05's validation section and the scoreboard
    shown = {e for shows in [*F.PANELS.values(), *F.EXPERIMENTS.values()] for e in shows}
    assert shown | {F.PACKET_ENGINES["newreno"]} == set(F.ENGINES)


def test_declarations_are_complete_and_honest():
    for e in F.ENGINES.values():
        if e.validated:
            assert e.references and e.metrics and e.controls and not e.no_reference, e.name
            assert all(r.kind in F.REFERENCE_KINDS and r.citation for r in e.references), e.name
        else:
            assert not e.references and e.no_reference, e.name
    kinds = {e.name: {r.kind for r in e.references} for e in F.ENGINES.values() if e.validated}
    assert kinds == {
        "packets": {"simulator"},
        "packets-sack": {"simulator"},
        "serving": {"measurement"},
        "training": {"measurement"},
        "arrivals": {"theory"},
    }
    with pytest.raises(ValueError, match="either references"):
        F.Engine("x", "y", "workbench.arrivals")  # neither references nor a reason
    with pytest.raises(ValueError, match="kind"):
        F.Reference("s", "hearsay", "c")


def test_unknown_engine_and_control_are_clear_errors():
    with pytest.raises(ValueError, match="engine"):
        F.fidelity_table(["no-such-engine"])
    with pytest.raises(ValueError, match=r"no control 'nvlink'.*gpu"):
        F.region_note("training", nvlink=True)
    with pytest.raises(ValueError, match="scale"):
        F.points("arrivals", "huge")
    with pytest.raises(ValueError, match="no points: no independent reference"):
        F.points("carbon")


# ---------------------------------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------------------------------


def test_table_has_its_columns_and_real_numbers():
    t = F.fidelity_table(["arrivals", "training", "carbon"], "quick")
    assert list(t.columns) == list(F.TABLE_COLUMNS)
    arr = t[t.engine == "arrivals"].set_index("metric")
    assert arr["points"].tolist() == [15, 15] and set(arr.reference_kind) == {"theory"}
    # the simulation against exact GI/M/1: a median within a few percent, every error finite and signed
    assert arr["median_abs_error"].lt(0.1).all() and arr["worst_error"].abs().lt(1.0).all()
    assert "utilization 0.5-0.9" in arr["envelope"].iloc[0]
    tr = t[t.engine == "training"]
    assert tr["points"].sum() == len(F.points("training")) == 69
    assert set(tr.source) >= {"megascale2024", "narayanan2021", "lumos2025"}
    assert np.isfinite(tr[["median_error", "median_abs_error", "worst_error"]].to_numpy()).all()
    # the worst error is a signed error of largest magnitude among the group's points
    p = F.points("training")
    g = p[(p.source == "lumos2025") & (p.metric == "iteration_s")]
    assert tr.set_index("source").loc["lumos2025", "worst_error"] == pytest.approx(g.error.loc[g.error.abs().idxmax()])
    carbon = t[t.engine == "carbon"].iloc[0]
    assert carbon.points == 0 and carbon.source == "none" and "no independent reference" in carbon.envelope


def test_points_error_is_signed_relative_error():
    p = F.points("arrivals", "quick")
    assert list(p.columns[: len(F.POINT_COLUMNS)]) == list(F.POINT_COLUMNS)
    assert np.allclose(p.error, (p.model - p.reference) / p.reference)
    assert {"process", "cv", "utilization", "service"} <= set(p.columns)


@pytest.mark.slow
def test_serving_table_covers_the_published_points():
    t = F.fidelity_table(["serving"])
    assert t.points.sum() == len(F.points("serving")) >= 100
    assert {"sarathi-serve-osdi24", "trtllm-perf-overview"} <= set(t.source)


def test_a_card_profiled_itself_is_validated_on_its_own_curves():
    """The RTX PRO 6000 runs on its own measured curves (a Deployment's default), not its generation's stated
    constants: its points count for costs 'curves', and a panel at its controls finds them."""
    p = F.points("serving")
    pro = p[p.gpu == "RTX-PRO-6000"]
    assert len(pro) == 3 and set(pro.costs) == {"curves"} and set(p[p.gpu == "B200"].costs) <= {"stated"}
    n = F.region_note("serving", gpu="RTX-PRO-6000", model="Llama-3.1-8B", costs="curves", tp=1)
    assert n.region_points == 3 and n.in_envelope, n.text


@pytest.mark.slow
@requires_data("fabric-websearch-128/ws_128_10g_90_25ms.cm")
def test_packets_against_each_reference_and_their_span():
    t = F.fidelity_table(["packets"])
    assert set(t.source) == {"ns-3", "htsim", "ns-3 / htsim span"}
    assert (t.points == 10).all() and t.metric.nunique() == 9
    span = t[t.source == "ns-3 / htsim span"]
    assert (span.median_abs_error <= t[t.source == "ns-3"].median_abs_error.to_numpy() + 1e-12).all()
    # a panel's note counts the statistics inside the span and within 15% of it (issue 40's test), not a median
    # error that is 0 whenever half of them are inside
    from workbench.aqm.validation import validation_points

    p = validation_points()
    within = int(p.within.sum())
    note = F.region_note("packets", marking="static").summary
    assert f"inside the ns-3/htsim envelope, {within} within 15% of it" in note and "median" not in note


def test_packet_panels_show_the_senders_they_run():
    """The PRED scenarios and the mitigation check run the engine's SACK-like senders; their panels and experiments
    show that sender model's fidelity entry, not the NewReno engine's (which only replays of recorded networks run)."""
    from workbench.aqm.mitigation_check import CHECK_LOSS_RECOVERY
    from workbench.aqm.scenarios import SCENARIO_LOSS_RECOVERY

    scen, check = F.PACKET_ENGINES[SCENARIO_LOSS_RECOVERY], F.PACKET_ENGINES[CHECK_LOSS_RECOVERY]
    for name in ("pred-dumbbell-fct", "pred-fct-vs-load", "pred-leafspine-mix", "pred-queue-vs-concurrency"):
        assert scen in F.EXPERIMENTS[name] and not set(F.PACKET_ENGINES.values()) - {scen} & set(F.EXPERIMENTS[name])
    assert scen in F.PANELS["workbench.widgets.aqm:pred_panel"]
    for shows in (F.EXPERIMENTS["mitigation"], F.EXPERIMENTS["mitigation-ranking"],
                  F.PANELS["workbench.widgets.mitigation:mitigation_panel"]):  # fmt: skip
        assert check in shows and not set(F.PACKET_ENGINES.values()) - {check} & set(shows)


@pytest.mark.slow
@requires_data("fabric-websearch-128/ws_128_10g_90_25ms.cm")
def test_the_sack_senders_are_checked_on_the_same_workloads():
    from workbench.aqm.validation import validation_points

    p = validation_points(loss_recovery="sack")
    newreno = validation_points()
    assert (
        len(p) == len(newreno) == 90 and set(p.loss_recovery) == {"sack"} and set(newreno.loss_recovery) == {"newreno"}
    )
    # the same references, another engine run: the FCTs differ
    assert (p[["ns3", "htsim"]].to_numpy() == newreno[["ns3", "htsim"]].to_numpy()).all()
    assert not (p.model.to_numpy() == newreno.model.to_numpy()).all()
    note = F.region_note("packets-sack", marking="static").summary
    assert note.startswith(f"packets-sack: validated on 90 points, {int((p.error == 0).sum())} inside")
    assert f"{int(p.within.sum())} within 15% of it" in note


def test_write_and_report_section(tmp_path):
    t = F.fidelity_table(["arrivals", "carbon"], "quick")
    json_path, md_path = F.write(t, tmp_path)
    rec = json.loads(json_path.read_text())
    assert {r["engine"] for r in rec["table"]} == {"arrivals", "carbon"}
    assert rec["engines"]["arrivals"]["references"][0]["kind"] == "theory"
    assert rec["engines"]["carbon"]["no_reference"]
    md = md_path.read_text()
    assert "| engine | metric | source |" in md and "GI/M/1 exact" in md
    html = rep.write_report([], {}, tmp_path / "scoreboard.html", fidelity=t).read_text()
    assert "id='fidelity'" in html and "GI/M/1 exact" in html and "not validated" in html


def test_cli_validate(capsys):
    assert main(["validate", "--engine", "arrivals", "--engine", "fabric", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "== arrivals" in out and "GI/M/1 exact" in out and "not validated" in out
    assert main(["validate", "--engine", "nosuch"]) == 2
    assert "engine" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------------------------------
# A panel's note
# ---------------------------------------------------------------------------------------------------------------------


def test_controls_outside_the_envelope_are_named():
    n = F.region_note("training", gpu="B200", pp=128)
    assert not n.in_envelope and len(n.outside) == 2
    assert "no measured point for GPU B200" in n.text
    assert "PP 128 is beyond the largest validated, PP 64" in n.text
    n = F.region_note("training", gpu="H100", model="gpt3-175b", pp=32)  # PP inside the corpus, not on this run
    assert not n.in_envelope and "PP 32 is outside the PP validated for this GPU/model" in n.text
    # the arrivals panel's burstiness (Gamma shape) 0.05 is gaps of CV 4.5, beyond the CV 3 checked
    n = F.region_note("arrivals", "quick", burstiness=0.05)
    assert n.outside == ("burstiness 0.05 is below the smallest validated, burstiness 0.111 on gamma",)
    n = F.region_note("arrivals", "quick", utilization=0.2)
    assert n.outside == (
        "utilization 0.2 is below the smallest validated, utilization 0.5 on deterministic, gamma, poisson",
    )


def test_controls_inside_the_envelope_give_the_region_error():
    n = F.region_note("training", gpu="A100", model="megascale-175b", pp=8, tp=8, dp=None)
    assert n.in_envelope and n.outside == ()
    assert n.points == 69 and n.region_points == 16
    assert n.text.startswith("training: validated on 69 points (measurement), median |error| ")
    assert "this GPU/model: 16 points (median |error| " in n.text and "Outside" not in n.text
    assert str(n) == n.text


def test_a_sweeps_values_name_those_its_region_holds():
    """A sweep over a categorical control (an explore panel's list) counts the region of the values with points and
    names them, so "this marking: 90 points" never sits beside "no validated point for marking pred"."""
    n = F.region_note("arrivals", "quick", process=["poisson", "weibull"])
    assert "this arrival process poisson: 6 points" in n.text and n.named == ("arrival process weibull",)
    assert "this arrival process: 6 points" in F.region_note("arrivals", "quick", process="poisson").text
    both = F.region_note("arrivals", "quick", process=["poisson", "gamma"])
    assert both.in_envelope and "this arrival process poisson/gamma: " in both.text


def test_an_engine_without_reference_says_so():
    n = F.region_note("microservices")
    assert not n.in_envelope and n.points == 0 and "not validated" in n.text and "no independent reference" in n.text


def test_a_combination_never_measured_together_is_named():
    # both GPUs are in the corpus, and gpt3-15b is, but only on H100 (Lumos)
    n = F.region_note("training", gpu="A100", model="gpt3-15b")
    assert n.region_points == 0 and not n.in_envelope
    assert n.outside == ("no measured point combines GPU A100-80GB and model gpt3-15b",)
    # a panel highlights only the values: its summary already says "this GPU/model: 0 points"
    assert n.named == ("A100-80GB + gpt3-15b together",) and "this GPU/model: 0 points" in n.summary


# ---------------------------------------------------------------------------------------------------------------------
# Caches follow the code and the data
# ---------------------------------------------------------------------------------------------------------------------


def test_engine_keys_follow_the_model_code():
    assert "workbench.serving.roofline" in module_closure(F.ENGINES["serving"].code)
    assert "workbench.training.iteration" in module_closure(F.ENGINES["training"].code)
    assert "workbench.aqm.perpacket" in module_closure(F.ENGINES["packets"].code)
    assert "workbench.arrivals.queues" in module_closure(F.ENGINES["arrivals"].code)
    validated = [n for n, e in F.ENGINES.items() if e.validated]
    assert len(validated) == 5 and len({F.points_key(n) for n in validated}) == 5  # one key per engine


def test_an_edited_model_or_data_file_never_shows_old_numbers(tmp_path, monkeypatch):
    pkg = tmp_path / "fidtmp_model"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    src = pkg / "model.py"
    body = textwrap.dedent(
        """
        import pandas as pd
        from workbench import data

        SCALE = {scale}

        def validation_points():
            ref = pd.read_csv(data.require("fidtmp/ref.csv"))
            model = ref.x * SCALE
            return pd.DataFrame({{"source": "ref", "metric": "y", "reference": ref.y, "model": model,
                                  "error": (model - ref.y) / ref.y, "x": ref.x}})
        """
    )
    src.write_text(body.format(scale=2.0))
    data_dir = tmp_path / "data"
    (data_dir / "fidtmp").mkdir(parents=True)
    (data_dir / "fidtmp" / "ref.csv").write_text("x,y\n1,2\n2,4\n")
    monkeypatch.setenv("WORKBENCH_DATA", str(data_dir))
    monkeypatch.syspath_prepend(str(tmp_path))
    calls = []

    def compute(scale):
        calls.append(scale)
        return importlib.import_module("fidtmp_model.model").validation_points()

    e = F.Engine(
        "toy",
        "a toy",
        "fidtmp_model.model",
        (F.Reference("ref", "measurement", "a file"),),
        ("y",),
        (F.Control("x", "x", "x", numeric=True),),
        compute,
    )
    try:
        importlib.import_module("fidtmp_model.model")
        k1 = F.points_key(e)
        assert F.points(e).error.tolist() == [0.0, 0.0] and len(calls) == 1
        assert F.points(e).error.tolist() == [0.0, 0.0] and len(calls) == 1  # read back
        # the model is edited (and reloaded, as a restarted kernel would): a new key, new numbers
        src.write_text(body.format(scale=3.0) + "\n# edited\n")
        importlib.reload(sys.modules["fidtmp_model.model"])
        assert F.points_key(e) != k1
        assert F.points(e).error.tolist() == [0.5, 0.5] and len(calls) == 2
        # a reference file changes under the same code: recomputed, not read back
        (data_dir / "fidtmp" / "ref.csv").write_text("x,y\n1,3\n2,6\n")
        assert F.points(e).error.tolist() == [0.0, 0.0] and len(calls) == 3
        assert isinstance(F.points(e), pd.DataFrame) and len(calls) == 3
    finally:
        for name in [m for m in sys.modules if m.startswith("fidtmp_model")]:
            del sys.modules[name]


def test_panel_notes_pass_each_engine_its_own_controls():
    notes = F.panel_notes("workbench.widgets.training:iteration_panel", gpu="B200", pp=8, collective="ring")
    assert [n.engine for n in notes] == ["training"] and "no measured point for GPU B200" in notes[0].text
    notes = F.panel_notes("arrivals-queue-wait", "quick", process="weibull", customers=1000)
    assert [n.engine for n in notes] == ["arrivals"] and not notes[0].in_envelope
    with pytest.raises(ValueError, match="shown"):
        F.panel_notes("no-such-panel")
