"""The shared panel layout's info table."""

import re

import pytest

from workbench.widgets import html_table


def test_info_table_aligns_every_cell_left_and_escapes():
    out = html_table(["a", "b"], [[1, "<x>"], [2, 3.5]], caption="note & more")
    cells = re.findall(r'<(t[hd]) style="([^"]*)">', out)
    assert len(cells) == 6
    assert all("text-align:left" in style for _, style in cells)
    assert "&lt;x&gt;" in out and "note &amp; more" in out
    assert out.index("note") < out.index("<table")


def test_info_table_rejects_a_ragged_row():
    with pytest.raises(ValueError, match="row 1 has 1 cells, the header has 2"):
        html_table(["a", "b"], [[1, 2], [3]])
