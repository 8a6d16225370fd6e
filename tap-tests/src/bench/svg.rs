//! A small SVG writer for the benchmark plots: a line chart over a log2 x
//! axis (tps vs clients) and a grouped bar chart (everything else), both
//! drawn straight from a [`Table`]. Plain SVG 1.1 text, no scripts, no
//! external fonts, so the files render on GitHub and in any browser.
//!
//! Layout: a fixed canvas, the plot area inset by margins, the legend in the
//! right margin. Missing values (failed / skipped) leave a gap in a line and
//! no bar; a series with no value at all is left out of the legend.

use std::fmt::Write as _;

use super::report::{fmt_num, Chart, Table};

const W: f64 = 760.0;
const H: f64 = 440.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 210.0;
const TOP: f64 = 44.0;
const BOTTOM: f64 = 64.0;
const COLORS: [&str; 8] = [
    "#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

/// The plot for `table` as an SVG document.
pub fn render(table: &Table) -> String {
    match table.chart {
        Chart::LineLog2 => line_chart(table),
        Chart::Bars => bar_chart(table),
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Round tick step giving about `n` ticks up to `max`.
fn nice_step(max: f64, n: f64) -> f64 {
    if max <= 0.0 || !max.is_finite() {
        return 1.0;
    }
    let raw = max / n;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Canvas, title, y axis with grid and labels; returns (svg so far, y scale
/// function's max).
fn frame(table: &Table, max: f64) -> (String, f64) {
    let step = nice_step(max, 5.0);
    let ymax = (max / step).ceil().max(1.0) * step;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="24" font-size="15" text-anchor="middle">{}</text>"#,
        LEFT + (W - LEFT - RIGHT) / 2.0,
        esc(&table.title)
    );
    let plot_h = H - TOP - BOTTOM;
    let mut v = 0.0;
    while v <= ymax + step * 0.01 {
        let y = TOP + plot_h - v / ymax * plot_h;
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            tick_label(v, step)
        );
        v += step;
    }
    let _ = writeln!(
        s,
        r#"<text transform="translate(16,{:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        TOP + plot_h / 2.0,
        esc(&table.unit)
    );
    let _ = writeln!(
        s,
        r#"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{:.1}" stroke="black"/><line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="black"/>"#,
        TOP + plot_h,
        TOP + plot_h,
        W - RIGHT,
        TOP + plot_h
    );
    (s, ymax)
}

/// Splits `text` at spaces into lines of at most `width` characters (a
/// longer word gets a line of its own).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + word.chars().count() <= width => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// A y tick label with as many decimals as the step needs.
fn tick_label(v: f64, step: f64) -> String {
    if step >= 1.0 {
        format!("{v:.0}")
    } else {
        let decimals = (-step.log10()).ceil().max(1.0) as usize;
        format!("{v:.decimals$}")
    }
}

/// Colour of series `i` named `name`: hotpair in reds, PostgreSQL in
/// blues (the same in every plot), anything else from the palette. The
/// second series of a system (standby, `single`) gets the lighter shade.
fn color(table: &Table, i: usize) -> &'static str {
    let name = table.series.get(i).map(String::as_str).unwrap_or("");
    let nth_of = |prefix: &str| {
        table.series[..i.min(table.series.len())]
            .iter()
            .filter(|s| s.starts_with(prefix))
            .count()
    };
    if name.starts_with("hotpair") {
        ["#d62728", "#ff9896", "#8c1c13"][nth_of("hotpair") % 3]
    } else if name.starts_with("PostgreSQL") {
        ["#1f77b4", "#9ecae1", "#08306b"][nth_of("PostgreSQL") % 3]
    } else {
        COLORS[i % COLORS.len()]
    }
}

fn legend(s: &mut String, table: &Table, names: &[(usize, &str)]) {
    for (k, (i, name)) in names.iter().enumerate() {
        let y = TOP + 10.0 + k as f64 * 20.0;
        let x = W - RIGHT + 16.0;
        let _ = writeln!(
            s,
            r#"<rect x="{x}" y="{:.1}" width="14" height="10" fill="{}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            y - 9.0,
            color(table, *i),
            x + 20.0,
            y,
            esc(name)
        );
    }
}

/// Series that have at least one value.
fn present(table: &Table) -> Vec<(usize, &str)> {
    table
        .series
        .iter()
        .enumerate()
        .filter(|(i, _)| table.series_units.get(*i) == Some(&table.unit))
        .filter(|(i, _)| {
            table
                .rows
                .iter()
                .any(|r| r.cells.get(*i).and_then(|c| c.value()).is_some())
        })
        .map(|(i, s)| (i, s.as_str()))
        .collect()
}

fn max_value(table: &Table) -> f64 {
    let plotted: Vec<usize> = present(table).iter().map(|(i, _)| *i).collect();
    table
        .rows
        .iter()
        .flat_map(|r| {
            plotted
                .iter()
                .filter_map(|i| r.cells.get(*i).and_then(|c| c.value()))
        })
        .fold(0.0, f64::max)
}

fn line_chart(table: &Table) -> String {
    let (mut s, ymax) = frame(table, max_value(table));
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let xs: Vec<f64> = table.rows.iter().map(|r| r.x.max(1.0).log2()).collect();
    let (xmin, xmax) = xs
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let span = if xmax > xmin { xmax - xmin } else { 1.0 };
    let px = |lx: f64| LEFT + 20.0 + (lx - xmin) / span * (plot_w - 40.0);
    let py = |v: f64| TOP + plot_h - v / ymax * plot_h;
    for (row, lx) in table.rows.iter().zip(&xs) {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            px(*lx),
            TOP + plot_h + 18.0,
            esc(&row.label)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{} (log2 scale)</text>"#,
        LEFT + plot_w / 2.0,
        H - 18.0,
        esc(&table.row_header)
    );
    let names = present(table);
    for (i, _) in &names {
        let color = color(table, *i);
        // Consecutive values form a segment; a missing value breaks the line.
        let mut segment: Vec<(f64, f64)> = Vec::new();
        let flush = |seg: &mut Vec<(f64, f64)>, s: &mut String| {
            if seg.len() > 1 {
                let pts: Vec<String> = seg.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
                let _ = writeln!(
                    s,
                    r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"/>"#,
                    pts.join(" ")
                );
            }
            seg.clear();
        };
        for (row, lx) in table.rows.iter().zip(&xs) {
            match row.cells.get(*i).and_then(|c| c.value()) {
                Some(v) => {
                    let (x, y) = (px(*lx), py(v));
                    let _ = writeln!(
                        s,
                        r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{color}"/>"#
                    );
                    segment.push((x, y));
                }
                None => flush(&mut segment, &mut s),
            }
        }
        flush(&mut segment, &mut s);
    }
    legend(&mut s, table, &names);
    s.push_str("</svg>\n");
    s
}

fn bar_chart(table: &Table) -> String {
    let (mut s, ymax) = frame(table, max_value(table));
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let names = present(table);
    let groups = table.rows.len().max(1) as f64;
    let group_w = plot_w / groups;
    let bar_w = (group_w * 0.8) / names.len().max(1) as f64;
    for (g, row) in table.rows.iter().enumerate() {
        let gx = LEFT + g as f64 * group_w + group_w * 0.1;
        for (k, (i, _)) in names.iter().enumerate() {
            if let Some(v) = row.cells.get(*i).and_then(|c| c.value()) {
                let h = v / ymax * plot_h;
                let x = gx + k as f64 * bar_w;
                let _ = writeln!(
                    s,
                    r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                    TOP + plot_h - h,
                    (bar_w - 1.0).max(1.0),
                    color(table, *i),
                    esc(&table.series[*i]),
                    fmt_num(v)
                );
                if bar_w >= 16.0 {
                    let _ = writeln!(
                        s,
                        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="9">{}</text>"#,
                        x + bar_w / 2.0,
                        TOP + plot_h - h - 3.0,
                        fmt_num(v)
                    );
                }
            }
        }
        // Labels may be long ("90% select + 10% tpcb c=64"): wrap at
        // spaces to the group's width, at most three lines.
        let cx = LEFT + g as f64 * group_w + group_w / 2.0;
        let max_chars = ((group_w / 6.0) as usize).max(4);
        for (k, line) in wrap(&row.label, max_chars).iter().take(3).enumerate() {
            let _ = writeln!(
                s,
                r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="11">{}</text>"#,
                TOP + plot_h + 15.0 + 12.0 * k as f64,
                esc(line)
            );
        }
    }
    if !table.row_header.is_empty() {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + plot_w / 2.0,
            H - 10.0,
            esc(&table.row_header)
        );
    }
    legend(&mut s, table, &names);
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::report::Cell;

    #[test]
    fn wraps_labels() {
        assert_eq!(
            wrap("90% select + 10% tpcb c=64", 12),
            vec!["90% select +", "10% tpcb", "c=64"]
        );
        assert_eq!(wrap("short", 12), vec!["short"]);
    }

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(100.0, 5.0), 20.0);
        assert_eq!(nice_step(43000.0, 5.0), 10000.0);
        assert_eq!(nice_step(0.0, 5.0), 1.0);
    }

    #[test]
    fn charts_are_svg_with_gaps_for_missing_values() {
        let mut t = Table::new(
            "s",
            "Select <only>",
            "tps",
            "clients",
            &["a", "b"],
            Chart::LineLog2,
        );
        t.set("1", 1.0, 0, Cell::Value(10.0, None));
        t.set("2", 2.0, 0, Cell::Value(20.0, None));
        t.set("4", 4.0, 0, Cell::Failed("x".into()));
        t.set("1", 1.0, 1, Cell::Skipped("y".into()));
        let svg = render(&t);
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("Select &lt;only&gt;"));
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert!(
            !svg.contains(">b</text>"),
            "series without values not in legend"
        );
        t.chart = Chart::Bars;
        assert_eq!(render(&t).matches("<rect x").count(), 2 + 1);
    }
}
