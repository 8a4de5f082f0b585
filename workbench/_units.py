"""Units as people read them: one table from the unit names the code uses (``"rps"``, ``"us"``) to the text a
figure axis, a legend or a control shows (``"req/s"``, ``"µs"``), and labels derived from parameter names.

Figures, controls and tables take their unit text from here, so ``µs`` is spelled one way everywhere.

Examples
--------
>>> unit_text("us"), unit_text("rps"), unit_text("fraction")
('µs', 'req/s', '')
>>> name_label("mean_rate_rps"), name_label("duration_s"), name_label("n_long_flows")
('mean rate', 'duration', 'long flows')
>>> number_text(1000.0), number_text(5.656854), number_text(-0.0004), number_text(270.0), number_text(2e-7)
('1,000', '5.66', '-0.0004', '270', '2×10⁻⁷')
"""

from __future__ import annotations

__all__ = ["UNITS", "unit_text", "name_label", "with_unit", "number_text"]

#: Unit name in code -> the text shown to a reader ("" for dimensionless).
UNITS: dict[str, str] = {
    "": "",
    "fraction": "",
    "ratio": "",
    "x": "×",
    "s": "s",
    "ms": "ms",
    "us": "µs",
    "µs": "µs",
    "ns": "ns",
    "h": "h",
    "d": "days",
    "rps": "req/s",
    "req/s": "req/s",
    "B": "B",
    "KB": "KB",
    "MB": "MB",
    "GB": "GB",
    "Gbit/s": "Gbit/s",
    "gbps": "Gbit/s",
    "tokens": "tokens",
    "tokens/s": "tokens/s",
    "pkts": "packets",
    "packets": "packets",
    "%": "%",
    "W": "W",
    "kW": "kW",
    "gCO2/kWh": "gCO₂/kWh",
    "kgCO2": "kg CO₂",
    "GPUs": "GPUs",
}

#: Name suffixes that carry a unit and are dropped from a label (longest first).
_SUFFIXES = ("_gbps", "_rps", "_bytes", "_pkts", "_tokens", "_us", "_ms", "_s", "_h", "_d", "_gb", "_kb")
#: Prefixes that say "count of" and read better without (``n_flows`` -> ``flows``).
_PREFIXES = ("n_",)


def unit_text(unit: str) -> str:
    """The text shown for ``unit`` (unknown units are shown as written)."""
    return UNITS.get(unit, unit)


def name_label(name: str) -> str:
    """A reader's label for a parameter or column name: the unit suffix and a counting ``n_`` dropped, underscores
    as spaces."""
    label = name
    for suffix in _SUFFIXES:
        if label.endswith(suffix) and len(label) > len(suffix):
            label = label[: -len(suffix)]
            break
    for prefix in _PREFIXES:
        if label.startswith(prefix) and len(label) > len(prefix):
            label = label[len(prefix) :]
    return label.replace("_", " ")


def with_unit(label: str, unit: str) -> str:
    """``"label (unit)"``, or just the label for a dimensionless quantity.

    >>> with_unit("RTT", "us"), with_unit("load", "fraction")
    ('RTT (µs)', 'load')
    """
    text = unit_text(unit)
    return f"{label} ({text})" if text else label


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def number_text(value: float, digits: int = 3) -> str:
    """A number as people read it: ``digits`` significant digits, no trailing zeros, thousands separated, never
    ``e+03`` notation (``1,000``, ``5.66``, ``270``, ``0.0004``); below 10⁻⁴ or from 10⁹ on, in powers of ten
    (``2×10⁻⁷``); a value that rounds to zero is ``0`` (never ``-0``); NaN and infinities as ``n/a``, ``∞``."""
    import math

    v = float(value)
    if math.isnan(v):
        return "n/a"
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    if v == 0:
        return "0"
    exponent = math.floor(math.log10(abs(v)))
    rounded = round(v, digits - 1 - exponent)
    if rounded == 0:
        return "0"
    exponent = math.floor(math.log10(abs(rounded)))
    if exponent < -4 or exponent >= 9:
        mantissa = f"{rounded / 10**exponent:.{digits}g}"
        head = "" if mantissa in ("1", "-1") else f"{mantissa}×"
        sign = "-" if mantissa == "-1" else ""
        return f"{sign}{head}10{str(exponent).translate(_SUPERSCRIPT)}"
    decimals = max(digits - 1 - exponent, 0)
    text = f"{rounded:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text
