#!/usr/bin/python3
"""Draws the suite's charts with matplotlib, from the JSON a program writes.

    /usr/bin/python3 tools/plot/draw_chart.py out/heads/heads.json [more.json ...]

writes each chart beside its spec, with .png for .json (out/heads/heads.png).
The lab programs (show_heads, heads_sweep, ablate_heads, score_by_distance,
compare_variants, grow_induction_heads) write the spec and run this script
themselves when matplotlib is importable (common/programs/chart_spec.h); `./lab bench`
does the same for the benchmark charts. Every picture of the suite is drawn
here, by one maintained library: Debian's python3-matplotlib, which
tools/setup.sh installs.

A spec is one JSON object; "kind" says which chart, and every kind takes
"title" and an optional "subtitle":

  "lines"     "x_label", "y_label", optional "x_scale"/"y_scale" ("linear",
              "log", "log2"), "x_ticks" with "x_tick_labels", "hlines" and
              "vlines" ([{"at": v, "label": s}], dashed), and "series":
              [{"label", "x", "y", optional "style" ("line", "points",
              "line+points"), "mean": [x, y] (an open square)}]
  "bars"      "x_label" and "groups": [{"title", "bars": [{"label", "value",
              "note"}]}], one panel of horizontal bars per group
  "heatmaps"  "panels": [{"title", "note", "values" (rows of numbers in
              [0, 1]), "row_labels", "col_labels", optional "mask_future"
              (grey above the diagonal, where a causal mask removed the key;
              a weight that rounds to 0 elsewhere keeps its colour), "mask_zero"
              (grey where a weight is exactly 0), "outline"
              ([[row, col], ...]: red boxes), "hline" (a white line above
              that row)}], optional "columns" (panels per row, default 2),
              "row_title" and "col_title" (axis names), "footer",
              "colorbar_label" (default "attention weight")

Labels in Chinese (or any script DejaVu Sans lacks, East Asian wide
characters) are drawn with a CJK font when the spec has such text: Noto Sans
CJK from Debian's fonts-noto-cjk, which tools/setup.sh installs; matplotlib
falls back to it glyph by glyph, so Latin text keeps the default font.
Without one, the chart is drawn with a warning that says what to install.

Exit status 0 when every chart was drawn; 1 on a bad spec (the message names
the file and the key); 2 when matplotlib is missing (the message says how to
install it).
"""
import json
import math
import os
import sys
import unicodedata

MISSING = ("draw_chart: matplotlib is missing, so no chart was drawn. Install Debian's "
           "python3-matplotlib (sudo apt-get install python3-matplotlib, or tools/setup.sh), "
           "then run: /usr/bin/python3 tools/plot/draw_chart.py %s")

# Okabe and Ito's colour-blind-friendly palette, then matplotlib's own.
COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#F0E442"]


# Fonts with CJK glyphs, the first one installed wins. fonts-noto-cjk's .ttc
# files hold every Noto Sans CJK variant, all with every Chinese character;
# matplotlib reads the first face of each, which it names "Noto Sans CJK JP".
CJK_FONTS = ["Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans CJK TC", "WenQuanYi Zen Hei",
             "Droid Sans Fallback"]
NO_CJK_FONT = ("draw_chart: warning: %s has Chinese text and no CJK font is installed, so those "
               "characters show as boxes; install Debian's fonts-noto-cjk (tools/setup.sh)")


def strings(value):
    """Every string in a spec (keys' values, lists, nested objects)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def needs_cjk(spec):
    """Whether any text of the spec has an East Asian wide character."""
    return any(unicodedata.east_asian_width(c) in "WF" for text in strings(spec) for c in text)


def cjk_font():
    """The name of the first installed font of CJK_FONTS, or None."""
    from matplotlib import font_manager
    for name in CJK_FONTS:
        try:
            font_manager.findfont(font_manager.FontProperties(family=name),
                                  fallback_to_default=False)
            return name
        except ValueError:
            continue
    return None


def use_fonts(plt, spec, spec_path):
    """The fonts for this spec: matplotlib's default, then a CJK font when the
    spec's text needs one (a per-glyph fallback, which matplotlib 3.6 does
    for a list of family names only). Returns the CJK font's name, or None."""
    font = cjk_font() if needs_cjk(spec) else None
    if needs_cjk(spec) and font is None:
        print(NO_CJK_FONT % spec_path, file=sys.stderr)
    default = plt.rcParamsDefault["font.sans-serif"][0]
    plt.rcParams["font.family"] = [default, font] if font else plt.rcParamsDefault["font.family"]
    return font


class SpecError(ValueError):
    """A spec that cannot be drawn: the message names the key."""


def png_path(spec_path):
    root, ext = os.path.splitext(spec_path)
    return root + ".png" if ext == ".json" else spec_path + ".png"


def need(obj, key, where, kind=None):
    if not isinstance(obj, dict) or key not in obj:
        raise SpecError("%s has no \"%s\"" % (where, key))
    value = obj[key]
    if kind is not None and not isinstance(value, kind):
        raise SpecError("%s: \"%s\" should be a %s, not %r" % (where, key, kind.__name__, value))
    return value


def need_items(spec, key, what):
    """spec[key], a list of at least one item."""
    items = need(spec, key, "a %s chart" % what, list)
    if not items:
        raise SpecError("a %s chart needs at least one of \"%s\"" % (what, key))
    return items


def numbers(values, where):
    if not isinstance(values, list) or not all(
            v is None or isinstance(v, (int, float)) for v in values):
        raise SpecError("%s should be a list of numbers" % where)
    return [math.nan if v is None else float(v) for v in values]


def set_scale(ax, which, scale):
    """ax's x or y axis on a log scale with plain tick labels ("0.5", "3"), not
    powers of ten (the minor ticks labelled only on an axis of about one
    decade); nothing for linear."""
    from matplotlib.ticker import FuncFormatter, LogFormatter

    if scale in (None, "linear"):
        return
    setter, axis = (ax.set_xscale, ax.xaxis) if which == "x" else (ax.set_yscale, ax.yaxis)
    if scale == "log":
        setter("log")
    elif scale == "log2":
        setter("log", base=2)
    else:
        raise SpecError("%s_scale should be linear, log or log2, not %r" % (which, scale))
    axis.set_major_formatter(FuncFormatter(lambda v, _: "%g" % v))
    axis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(1, 0.4)))


def titles(fig, spec):
    fig.suptitle(need(spec, "title", "the spec", str), fontsize=13, x=0.01, y=0.99,
                 horizontalalignment="left")
    if spec.get("subtitle"):
        fig.text(0.01, 0.94, spec["subtitle"], fontsize=9, color="#555555")


def draw_lines(plt, spec):
    series = need_items(spec, "series", "lines")
    fig, ax = plt.subplots(figsize=(9, 5.4))
    titles(fig, spec)
    for i, s in enumerate(series):
        where = "series %d" % i
        x = numbers(need(s, "x", where), where + " \"x\"")
        y = numbers(need(s, "y", where), where + " \"y\"")
        if len(x) != len(y):
            raise SpecError("%s has %d x and %d y" % (where, len(x), len(y)))
        colour = COLOURS[i % len(COLOURS)]
        style = s.get("style", "line")
        if style == "line":
            ax.plot(x, y, color=colour, linewidth=1.6, label=need(s, "label", where, str))
        elif style == "line+points":
            ax.plot(x, y, color=colour, linewidth=1.6, marker="o", markersize=5,
                    label=need(s, "label", where, str))
        elif style == "points":
            ax.plot(x, y, color=colour, linestyle="none", marker="o", markersize=4,
                    label=need(s, "label", where, str))
        else:
            raise SpecError("%s: style should be line, points or line+points, not %r"
                            % (where, style))
        if "mean" in s:
            mx, my = numbers(s["mean"], where + " \"mean\"")
            ax.plot([mx], [my], color=colour, linestyle="none", marker="s", markersize=11,
                    markerfacecolor="none", markeredgewidth=1.6)
    for line in spec.get("hlines", []):
        ax.axhline(need(line, "at", "an hline"), color="#C83232", linestyle="--", linewidth=1)
        ax.annotate(line.get("label", ""), (0.01, line["at"]), xycoords=("axes fraction", "data"),
                    xytext=(0, 3), textcoords="offset points", color="#C83232", fontsize=9)
    for line in spec.get("vlines", []):
        ax.axvline(need(line, "at", "a vline"), color="#C83232", linestyle="--", linewidth=1)
        ax.annotate(line.get("label", ""), (line["at"], 0.97), xycoords=("data", "axes fraction"),
                    xytext=(3, 0), textcoords="offset points", color="#C83232", fontsize=9,
                    verticalalignment="top")
    set_scale(ax, "x", spec.get("x_scale"))
    set_scale(ax, "y", spec.get("y_scale"))
    if "x_ticks" in spec:
        ax.set_xticks(numbers(spec["x_ticks"], "x_ticks"))
        if "x_tick_labels" in spec:
            ax.set_xticklabels(spec["x_tick_labels"])
        ax.minorticks_off()
    ax.set_xlabel(spec.get("x_label", ""))
    ax.set_ylabel(spec.get("y_label", ""))
    ax.grid(True, color="#DDDDDD", linewidth=0.8)
    ax.legend(fontsize=8, loc="best")
    return fig


def draw_bars(plt, spec):
    groups = need_items(spec, "groups", "bars")
    heights = [max(1, len(need(g, "bars", "group %d" % i, list))) for i, g in enumerate(groups)]
    fig, axes = plt.subplots(len(groups), 1, squeeze=False,
                             figsize=(9, 1.6 + 0.45 * sum(heights) + 0.6 * len(groups)),
                             gridspec_kw={"height_ratios": heights})
    titles(fig, spec)
    for g, (group, ax) in enumerate(zip(groups, axes[:, 0])):
        bars = group["bars"]
        labels = [need(b, "label", "bar %d of group %d" % (i, g), str) for i, b in enumerate(bars)]
        values = numbers([need(b, "value", "bar %d of group %d" % (i, g)) for i, b in
                          enumerate(bars)], "the values of group %d" % g)
        ys = list(range(len(bars)))
        ax.barh(ys, values, color=[COLOURS[i % len(COLOURS)] for i in ys], height=0.7)
        ax.set_yticks(ys)
        ax.set_yticklabels(labels)
        ax.invert_yaxis()
        ax.axvline(0, color="#555555", linewidth=0.8)
        top = max([0.0] + values)
        low = min([0.0] + values)
        span = (top - low) or 1.0
        ax.set_xlim(low, top + 0.45 * span)  # room for the notes
        for y, v, b in zip(ys, values, bars):
            ax.annotate(b.get("note", ""), (max(v, 0.0), y), xytext=(4, 0),
                        textcoords="offset points", verticalalignment="center", fontsize=8)
        ax.set_title(group.get("title", ""), fontsize=10, loc="left")
        ax.grid(True, axis="x", color="#DDDDDD", linewidth=0.8)
    axes[-1, 0].set_xlabel(spec.get("x_label", ""))
    return fig


def draw_heatmaps(plt, spec):
    import numpy as np
    from matplotlib.patches import Rectangle

    panels = need_items(spec, "panels", "heatmaps")
    columns = min(int(spec.get("columns", 2)), len(panels))
    rows = (len(panels) + columns - 1) // columns
    size = len(need(panels[0], "values", "panel 0", list))
    side = 4.2 if size <= 16 else 3.4
    fig, axes = plt.subplots(rows, columns, squeeze=False,
                             figsize=(max(side * columns + 1.0, 8.0), side * rows + 1.2))
    titles(fig, spec)
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("#DCDCDC")
    image = None
    for p, panel in enumerate(panels):
        ax = axes[p // columns, p % columns]
        where = "panel %d" % p
        values = need(panel, "values", where, list)
        matrix = np.array([numbers(r, where + " row") for r in values], dtype=float)
        if matrix.ndim != 2:
            raise SpecError("%s: \"values\" should be rows of equal length" % where)
        if panel.get("mask_future"):
            future = np.triu(np.ones(matrix.shape, dtype=bool), k=1)  # key j > query i
            matrix = np.ma.masked_where(future, matrix)
        if panel.get("mask_zero"):
            matrix = np.ma.masked_where(np.ma.getdata(matrix) == 0.0, matrix)
        image = ax.imshow(matrix, cmap=cmap, vmin=0.0, vmax=1.0, interpolation="nearest")
        n_rows, n_cols = matrix.shape
        small = n_rows <= 12
        if small:
            for i in range(n_rows):
                for j in range(n_cols):
                    v = float(np.ma.getdata(matrix)[i, j])
                    if not np.ma.is_masked(matrix[i, j]):
                        text = "1" if v >= 0.995 else ("%.2f" % v)[1:]
                        ax.text(j, i, text, ha="center", va="center", fontsize=7,
                                color="black" if v > 0.6 else "white")
        for i, j in panel.get("outline", []):
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="#E62828",
                                   linewidth=2))
        if "hline" in panel:
            ax.axhline(panel["hline"] - 0.5, color="white", linewidth=1.5)
        labels_r = panel.get("row_labels")
        labels_c = panel.get("col_labels")
        if labels_r:
            ax.set_yticks(range(n_rows))
            ax.set_yticklabels(labels_r, fontsize=7)
        else:
            ax.set_yticks([])
        if labels_c:
            ax.set_xticks(range(n_cols))
            ax.set_xticklabels(labels_c, fontsize=7, rotation=90)
            ax.xaxis.tick_top()
        else:
            ax.set_xticks([])
        ax.set_title(panel.get("title", ""), fontsize=10)
        if panel.get("note"):
            ax.set_xlabel(panel["note"], fontsize=8, color="#555555")
        if spec.get("row_title") and p % columns == 0:
            ax.set_ylabel(spec["row_title"])
    for p in range(len(panels), rows * columns):
        axes[p // columns, p % columns].axis("off")
    fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.7,
                 label=spec.get("colorbar_label", "attention weight"))
    if spec.get("footer"):
        fig.text(0.01, 0.01, spec["footer"], fontsize=8, color="#555555")
    return fig


DRAW = {"lines": draw_lines, "bars": draw_bars, "heatmaps": draw_heatmaps}


def draw(spec_path, plt):
    """Draws one spec; returns the PNG's path. Raises SpecError on a bad spec."""
    try:
        with open(spec_path) as f:
            spec = json.load(f)
    except (OSError, ValueError) as e:
        raise SpecError("cannot read %s: %s" % (spec_path, e))
    kind = need(spec, "kind", spec_path, str)
    if kind not in DRAW:
        raise SpecError("%s: kind %r is not one of %s" % (spec_path, kind, ", ".join(sorted(DRAW))))
    use_fonts(plt, spec, spec_path)
    try:
        fig = DRAW[kind](plt, spec)
    except SpecError as e:
        raise SpecError("%s: %s" % (spec_path, e))
    if kind != "heatmaps":  # the colour bar of heatmaps does not go with tight_layout
        fig.tight_layout(rect=(0, 0, 1, 0.92))
    out = png_path(spec_path)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 1
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(MISSING % " ".join(argv), file=sys.stderr)
        return 2
    status = 0
    for spec_path in argv:
        try:
            print("drew " + draw(spec_path, plt))
        except SpecError as e:
            print("draw_chart: " + str(e), file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
