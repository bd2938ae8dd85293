#!/usr/bin/env python3
"""bench/plot.py - the one plotting helper of bench/'s runner scripts.

    python3 bench/plot.py SPEC.json

SPEC.json describes one or more charts; for each, plot.py writes a gnuplot
script (data inline, so OUT.gp alone reproduces OUT.svg: `gnuplot OUT.gp`),
runs gnuplot's SVG terminal and prints `plot: OUT.svg`. Python 3 standard
library only. When gnuplot is missing it prints one line saying the plots
were skipped and how to install it; when gnuplot fails it says so. Either
way it exits 0: a benchmark never fails for its plot.

    {"plots": [{
        "out": "bench/plots/x.svg",
        "kind": "lines" | "bars",
        "title": "...", "subtitle": "line 1\\nline 2",   (subtitle optional)
        "xlabel": "...", "ylabel": "...",                (with units)
        "logx": false, "logy": false, "ymin": 0,         (optional)
        "key": "top left",                               (gnuplot key placement)
        "note": "...",                                   (optional, bottom left)
        # lines: x, y and optionally the min and max (error bars)
        "series": [{"name": "...", "points": [[x, y, lo, hi], ...],
                    "color": "#1f77b4", "dash": 1, "point": 7}],
        "xtics": [["4 KiB", 4096], ...],                 (optional)
        # bars: one group per category, one bar per series: [y, lo, hi]
        "categories": ["gups", ...],
        # (drawn as one panel per category, each with its own y scale)
        "series": [{"name": "blocking", "values": [[y, lo, hi], ...], "color": "#d62728"}],
        "width": 960, "height": 600                      (optional, pixels)
    }]}
"""
import json
import math
import os
import shutil
import subprocess
import sys

INSTALL_HINT = "install gnuplot: bash scripts/deps.sh --bench (Debian package gnuplot-nox)"
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"]
WIDTH, HEIGHT = 960, 600


def q(s):
    """A gnuplot single-quoted string (no escapes inside but '')."""
    return "'" + str(s).replace("'", "''") + "'"


def num(v):
    if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))):
        return "NaN"
    return repr(float(v))


def header(p, width, height):
    """Terminal, title and subtitle (labels in screen coordinates) and the
    top margin they need."""
    sub = [s for s in str(p.get("subtitle", "")).split("\n") if s]
    lines = [
        "set encoding utf8",
        "set terminal svg size %d,%d dynamic noenhanced font 'Helvetica,13' background rgb 'white'" % (width, height),
        "set output %s" % q(p["out"]),
        "set label 901 %s at screen 0.5, screen %.4f center font ',17'" % (q(p["title"]), 1 - 24.0 / height),
    ]
    for i, s in enumerate(sub):
        lines.append("set label %d %s at screen 0.5, screen %.4f center font ',11' textcolor rgb '#444444'"
                     % (902 + i, q(s), 1 - (46.0 + 17 * i) / height))
    top_px = 46 + 17 * len(sub) + 14
    lines.append("set tmargin at screen %.4f" % (1 - float(top_px) / height))
    if p.get("note"):
        lines.append("set label 950 %s at screen 0.01, screen %.4f left font ',10' textcolor rgb '#444444'"
                     % (q(p["note"]), 10.0 / height))
        lines.append("set bmargin 5")
    return lines


def axes(p):
    lines = ["set xlabel %s" % q(p["xlabel"]), "set ylabel %s" % q(p["ylabel"]),
             "set grid ytics lc rgb '#dddddd' lt 1", "set border 3", "set tics nomirror"]
    if p.get("logx"):
        lines.append("set logscale x 2" if p.get("logx") == 2 else "set logscale x 10")
    if p.get("logy"):
        lines += ["set logscale y 10", "set grid mytics lc rgb '#f0f0f0' lt 1"]
    return lines


def lines_chart(p):
    out = header(p, p.get("width", WIDTH), p.get("height", HEIGHT)) + axes(p)
    out.append("set key %s box opaque samplen 4 spacing 1.1 font ',11'" % p.get("key", "top left"))
    if "below" in p.get("key", ""):
        out.append("set bmargin %d" % (5 + len(p["series"])))  # gnuplot lets a key below overlap the x label
    if p.get("xtics"):
        out.append("set xtics (%s)" % ", ".join("%s %s" % (q(l), num(x)) for l, x in p["xtics"]))
    xs = [pt[0] for s in p["series"] for pt in s["points"]]
    if xs and p.get("logx"):
        out.append("set xrange [%s:%s]" % (num(min(xs) / 1.5), num(max(xs) * 1.5)))
    if "ymin" in p:
        out.append("set yrange [%s:*]" % num(p["ymin"]))
    plots = []
    for i, s in enumerate(p["series"]):
        name = "$s%d" % i
        out.append("%s << EOD" % name)
        for pt in sorted(s["points"], key=lambda t: t[0]):
            y = pt[1]
            lo = pt[2] if len(pt) > 2 and pt[2] is not None else y
            hi = pt[3] if len(pt) > 3 and pt[3] is not None else y
            out.append("%s %s %s %s" % (num(pt[0]), num(y), num(lo), num(hi)))
        out.append("EOD")
        color = s.get("color", PALETTE[i % len(PALETTE)])
        style = "lc rgb %s lw 2 dt %d pt %d ps 0.9" % (q(color), s.get("dash", 1), s.get("point", 7))
        if any(len(pt) > 3 for pt in s["points"]):
            # error bars solid whatever the line's dash pattern
            plots.append("%s using 1:2:3:4 with yerrorbars lc rgb %s lw 1.5 dt 1 pt %d ps 0.9 notitle"
                         % (name, q(color), s.get("point", 7)))
        plots.append("%s using 1:2 with linespoints %s title %s" % (name, style, q(s["name"])))
    out.append("plot " + ", \\\n     ".join(plots))
    return out


def bars_chart(p):
    """Grouped bars: one panel per category side by side, a bar per series
    in each, every panel with its own y scale (the kernels' times differ by
    orders of magnitude), one shared legend under the title."""
    cats, series = p["categories"], p["series"]
    n = len(cats)
    width = max(WIDTH, 60 + 190 * n)
    out = header(p, width, HEIGHT)
    top = float(out[-1].split()[-1]) if out[-1].startswith("set tmargin") else 0.9
    # the legend: a row of coloured boxes under the title
    key_y = top - 22.0 / HEIGHT
    out = [l for l in out if not l.startswith("set tmargin")]
    # item: 16 px box, 6 px gap, the name (~8 px a character), 28 px to the next
    item_px = [16 + 6 + 8 * len(s["name"]) + 28 for s in series]
    x_px = (width - (sum(item_px) - 28)) / 2.0
    for i, s in enumerate(series):
        color = s.get("color", PALETTE[i % len(PALETTE)])
        x = x_px / width
        out.append("set object %d rectangle from screen %.4f, screen %.4f to screen %.4f, screen %.4f "
                   "fillcolor rgb %s fillstyle solid 0.85 border rgb '#333333' front"
                   % (800 + i, x, key_y - 7.0 / HEIGHT, x + 16.0 / width, key_y + 7.0 / HEIGHT, q(color)))
        out.append("set label %d %s at screen %.4f, screen %.4f left font ',12'"
                   % (800 + i, q(s["name"]), x + 22.0 / width, key_y))
        x_px += item_px[i]
    plot_top = key_y - 26.0 / HEIGHT
    left, right = 70.0 / width, 1 - 20.0 / width
    bottom = 95.0 / HEIGHT if p.get("note") else 75.0 / HEIGHT
    panel_w = (right - left) / n
    out += ["set style fill solid 0.85 border rgb '#333333'", "set boxwidth 0.7", "unset key",
            "set grid ytics lc rgb '#dddddd' lt 1", "set border 3", "set tics nomirror",
            "set xtics scale 0 font ',11'", "set yrange [0:*]", "set offsets 0, 0, graph 0.05, 0", "set xrange [-0.6:%s]" % num(len(series) - 0.4),
            "set style arrow 1 heads size screen 0.008,90 lw 1.2 lc rgb '#222222'", "set multiplot"]
    for c, cat in enumerate(cats):
        out.append("$p%d << EOD" % c)
        for i, s in enumerate(series):
            v = s["values"][c]
            color = s.get("color", PALETTE[i % len(PALETTE)])
            out.append("%d %s %s %s %s %s" % (i, q(s["name"]).replace("'", '"'), num(v[0]),
                                              num(v[1] if len(v) > 1 else v[0]), num(v[2] if len(v) > 2 else v[0]),
                                              str(int(color.lstrip("#"), 16))))
        out.append("EOD")
        out += ["set lmargin at screen %.4f" % (left + c * panel_w + 45.0 / width),
                "set rmargin at screen %.4f" % (left + (c + 1) * panel_w - 8.0 / width),
                "set tmargin at screen %.4f" % plot_top, "set bmargin at screen %.4f" % bottom,
                "set xlabel %s font ',13'" % q(cat),
                "set ylabel %s" % (q(p["ylabel"]) if c == 0 else "''")]
        # min-max as a vector with flat heads (error-bar points misrender in SVG viewers)
        out.append("plot $p%d using 1:3:(0.7):6:xtic(2) with boxes lc rgb variable, "
                   "'' using 1:4:(0):($5-$4) with vectors arrowstyle 1" % c)
        if c == 0:
            # labels belong to the first panel only, or every panel redraws them
            out.append("unset label")
            out += ["unset object %d" % (800 + i) for i in range(len(series))]
    out.append("unset multiplot")
    out.insert(0, "# x label of every panel: the category; ylabel: %s" % p["ylabel"])
    return out


def fix_svg(path, title, subtitle):
    """gnuplot titles every SVG "Gnuplot": give it the chart's own."""
    esc = lambda s: s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    try:
        with open(path, encoding="utf-8") as f:
            s = f.read()
    except OSError:
        return
    s = s.replace("<title>Gnuplot</title>", "<title>%s</title>" % esc(title), 1)
    if subtitle:
        i, j = s.find("<desc>"), s.find("</desc>")
        if 0 <= i < j:
            s = s[:i] + "<desc>%s</desc>" % esc(subtitle.replace("\n", "; ")) + s[j + len("</desc>"):]
    with open(path, "w", encoding="utf-8") as f:
        f.write(s)


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        sys.stdout.write(__doc__)
        return 0 if len(argv) == 2 else 2
    with open(argv[1], encoding="utf-8") as f:
        plots = json.load(f)["plots"]
    plots = [p for p in plots if p.get("series")]
    if not plots:
        return 0
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        print("plot: skipped (%s): gnuplot not found; %s" % (", ".join(os.path.basename(p["out"]) for p in plots),
                                                           INSTALL_HINT))
        return 0
    for p in plots:
        os.makedirs(os.path.dirname(os.path.abspath(p["out"])), exist_ok=True)
        script = lines_chart(p) if p.get("kind", "lines") == "lines" else bars_chart(p)
        gp = os.path.splitext(p["out"])[0] + ".gp"
        with open(gp, "w", encoding="utf-8") as f:
            f.write("# written by bench/plot.py; `gnuplot %s` redraws %s\n" % (os.path.basename(gp),
                                                                                os.path.basename(p["out"])))
            f.write("\n".join(script) + "\n")
        r = subprocess.run([gnuplot, gp], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, timeout=120)
        if r.returncode != 0 or not os.path.exists(p["out"]):
            msg = r.stdout.strip().splitlines()
            print("plot: FAILED %s (gnuplot %s: %s)" % (p["out"], gp, msg[-1] if msg else "exit %d" % r.returncode))
            continue
        fix_svg(p["out"], p["title"], p.get("subtitle", ""))
        print("plot: %s" % p["out"])
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Exception as e:  # a benchmark never fails for its plot
        print("plot: FAILED (bench/plot.py: %s: %s)" % (type(e).__name__, e))
        sys.exit(0)
