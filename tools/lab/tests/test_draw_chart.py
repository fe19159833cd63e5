"""tools/plot/draw_chart.py: every kind of chart spec the lab programs write
(common/programs/chart_spec.h) becomes a PNG beside it; a bad spec is named, not drawn."""
import json
import os
import sys

import pytest

from labs import ROOT

sys.path.insert(0, os.path.join(ROOT, "tools", "plot"))
import draw_chart  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"

SPECS = {
    "lines": {"kind": "lines", "title": "Training loss", "subtitle": "two series",
              "x_label": "step", "y_label": "loss", "y_scale": "log",
              "series": [{"label": "1 head", "x": [0, 1, 2], "y": [3.0, 2.0, 1.0]},
                         {"label": "seeds", "x": [4, 4], "y": [1.5, None], "style": "points",
                          "mean": [4, 1.5]}],
              "hlines": [{"at": 1.2, "label": "MHA + ln 2"}], "vlines": [{"at": 2, "label": "1/8"}],
              "x_scale": "log2", "x_ticks": [1, 2, 4], "x_tick_labels": ["1", "2", "4"]},
    "bars": {"kind": "bars", "title": "Loss increase", "x_label": "nats",
             "groups": [{"title": "toy", "bars": [{"label": "head 0", "value": 0.3, "note": "a"},
                                                  {"label": "head 1", "value": -0.1, "note": ""}]}]},
    "heatmaps": {"kind": "heatmaps", "title": "heads", "columns": 2, "row_title": "query",
                 "footer": "grey: masked",
                 "panels": [{"title": "head %d" % h, "note": "entropy 0.5",
                             "values": [[1, 0], [0.4, 0.6]], "row_labels": ["0 a", "1 b"],
                             "col_labels": ["0 a", "1 b"], "mask_zero": h == 0, "mask_future": h == 1,
                             "outline": [[1, 0]], "hline": 1} for h in range(3)]},
}


def write(workdir, name, spec):
    path = workdir / (name + ".json")
    path.write_text(json.dumps(spec))
    return str(path)


@pytest.mark.parametrize("kind", sorted(SPECS))
def test_a_spec_of_each_kind_becomes_a_png_beside_it(workdir, kind, capsys):
    spec = write(workdir, kind, SPECS[kind])
    assert draw_chart.main([spec]) == 0
    with open(str(workdir / (kind + ".png")), "rb") as f:
        assert f.read(8) == PNG
    assert "drew " + str(workdir / (kind + ".png")) in capsys.readouterr().out


def test_one_run_draws_several_specs(workdir):
    specs = [write(workdir, "a", SPECS["lines"]), write(workdir, "b", SPECS["bars"])]
    assert draw_chart.main(specs) == 0
    assert (workdir / "a.png").exists() and (workdir / "b.png").exists()


def test_an_unknown_kind_is_named_and_nothing_is_drawn(workdir, capsys):
    spec = write(workdir, "pie", {"kind": "pie", "title": "t"})
    assert draw_chart.main([spec]) == 1
    err = capsys.readouterr().err
    assert "kind 'pie' is not one of bars, heatmaps, lines" in err and spec in err
    assert not (workdir / "pie.png").exists()


def test_a_missing_key_is_named(workdir, capsys):
    spec = write(workdir, "nolabel", {"kind": "lines", "title": "t",
                                      "series": [{"x": [0], "y": [1]}]})
    assert draw_chart.main([spec]) == 1
    assert 'series 0 has no "label"' in capsys.readouterr().err


def test_series_of_different_lengths_are_refused(workdir, capsys):
    spec = write(workdir, "ragged", {"kind": "lines", "title": "t",
                                     "series": [{"label": "a", "x": [0, 1], "y": [1]}]})
    assert draw_chart.main([spec]) == 1
    assert "series 0 has 2 x and 1 y" in capsys.readouterr().err


def test_a_file_that_is_not_json_is_named(workdir, capsys):
    path = workdir / "broken.json"
    path.write_text("{not json")
    assert draw_chart.main([str(path)]) == 1
    assert "cannot read %s" % path in capsys.readouterr().err


def test_without_matplotlib_it_says_how_to_install_it(workdir, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib: ImportError
    spec = write(workdir, "lines", SPECS["lines"])
    assert draw_chart.main([spec]) == 2
    err = capsys.readouterr().err
    assert "python3-matplotlib" in err and "tools/plot/draw_chart.py " + spec in err
