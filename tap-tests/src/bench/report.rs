//! Results: one [`Table`] per workload — rows (a client count, an idle
//! count, a script) × series (hotpair primary, PostgreSQL primary, …) —
//! printed as plain text with ratio columns, flattened into CSV / JSON rows
//! for the results files, and handed to [`super::svg`] for the plots.
//!
//! A cell is a value, a failure (the error, printed under the table) or a
//! skip (the reason). Ratios are computed only between two values.
//!
//! A pgbench table carries, beside each tps series, two CPU series in
//! µs per transaction ([`Table::with_cpu`]): the server system's and
//! pgbench's own. They are ordinary series with their own unit, so the
//! text, CSV and JSON show them and the plots (table unit only) do not.

use std::fmt::Write as _;

/// One measurement slot.
#[derive(Clone, Debug)]
pub enum Cell {
    /// Not run (yet).
    Empty,
    /// A value, with an optional remark (e.g. "3 failed transactions").
    Value(f64, Option<String>),
    /// The run failed: the error.
    Failed(String),
    /// Not run: why.
    Skipped(String),
}

impl Cell {
    /// The value, if any.
    pub fn value(&self) -> Option<f64> {
        match self {
            Cell::Value(v, _) => Some(*v),
            _ => None,
        }
    }
}

/// How the table is plotted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chart {
    /// Lines over the rows' `x` on a log2 axis.
    LineLog2,
    /// Grouped bars, one group per row.
    Bars,
}

/// One row: a label and, for line charts, its x.
#[derive(Clone, Debug)]
pub struct Row {
    /// Shown in the first column / under the bar group.
    pub label: String,
    /// x coordinate for line charts (client count).
    pub x: f64,
    /// One cell per series.
    pub cells: Vec<Cell>,
}

/// A workload's results.
#[derive(Clone, Debug)]
pub struct Table {
    /// File stem of the plot and key in the results file (`select_only`).
    pub key: String,
    /// Title line.
    pub title: String,
    /// What the values are (`tps`, `MB/s`, `KiB`, `ms`).
    pub unit: String,
    /// Header of the row-label column (`clients`).
    pub row_header: String,
    /// Series names, one per cell column.
    pub series: Vec<String>,
    /// Unit of each series (normally `unit`; a derived ratio series says
    /// `x`). Only series in the table's unit are plotted.
    pub series_units: Vec<String>,
    /// Rows in order.
    pub rows: Vec<Row>,
    /// Ratio columns: (numerator series, denominator series, header).
    pub ratios: Vec<(usize, usize, String)>,
    /// Plot kind.
    pub chart: Chart,
    /// Free-form lines printed under the table (method, settings).
    pub notes: Vec<String>,
    /// Per tps series with CPU columns: (tps series, server CPU series,
    /// pgbench CPU series).
    pub cpu: Vec<(usize, usize, usize)>,
}

/// Unit of the CPU series.
pub const CPU_UNIT: &str = "µs/txn";

impl Table {
    /// An empty table.
    pub fn new(
        key: &str,
        title: &str,
        unit: &str,
        row_header: &str,
        series: &[&str],
        chart: Chart,
    ) -> Table {
        Table {
            key: key.to_string(),
            title: title.to_string(),
            unit: unit.to_string(),
            row_header: row_header.to_string(),
            series: series.iter().map(|s| s.to_string()).collect(),
            series_units: vec![unit.to_string(); series.len()],
            rows: Vec::new(),
            ratios: Vec::new(),
            chart,
            notes: Vec::new(),
            cpu: Vec::new(),
        }
    }

    /// Appends, for each of `tps_series`, a series of the server system's
    /// CPU and one of pgbench's CPU per transaction; filled by
    /// [`Table::set_point`].
    pub fn with_cpu(mut self, tps_series: &[usize]) -> Table {
        for &s in tps_series {
            let Some(name) = self.series.get(s).cloned() else {
                continue;
            };
            let server = self.series.len();
            self.series.push(format!("{name} server CPU"));
            self.series.push(format!("{name} pgbench CPU"));
            self.series_units.push(CPU_UNIT.to_string());
            self.series_units.push(CPU_UNIT.to_string());
            self.cpu.push((s, server, server + 1));
        }
        self
    }

    /// Sets the tps cell of a pgbench point and, when the table has CPU
    /// series for `series`, its CPU cells.
    pub fn set_point(
        &mut self,
        label: &str,
        x: f64,
        series: usize,
        result: &Result<super::pgbench::Summary, String>,
    ) {
        match result {
            Ok(s) => {
                let remark = (s.failed > 0).then(|| format!("{} failed transactions", s.failed));
                self.set(label, x, series, Cell::Value(s.tps, remark));
                self.set_cpu(label, x, series, s);
            }
            Err(e) => self.set(label, x, series, Cell::Failed(e.clone())),
        }
    }

    /// Sets the CPU cells of series `series` from a pgbench summary.
    pub fn set_cpu(&mut self, label: &str, x: f64, series: usize, s: &super::pgbench::Summary) {
        self.set_cpu_values(
            label,
            x,
            series,
            s.server_us_per_txn(),
            s.client_us_per_txn(),
        );
    }

    /// Sets the CPU cells of series `series`: server and pgbench µs/txn.
    pub fn set_cpu_values(
        &mut self,
        label: &str,
        x: f64,
        series: usize,
        server_us: Option<f64>,
        client_us: Option<f64>,
    ) {
        let Some(&(_, server, client)) = self.cpu.iter().find(|c| c.0 == series) else {
            return;
        };
        let cell = |v: Option<f64>| match v {
            Some(v) => Cell::Value(v, None),
            None => Cell::Skipped("CPU not measured".into()),
        };
        self.set(label, x, server, cell(server_us));
        self.set(label, x, client, cell(client_us));
    }

    /// Adds a ratio column `series[num] / series[den]`.
    pub fn ratio(mut self, num: usize, den: usize, header: &str) -> Table {
        self.ratios.push((num, den, header.to_string()));
        self
    }

    /// Gives series `i` its own unit (e.g. `x` for a ratio series).
    pub fn series_unit(mut self, i: usize, unit: &str) -> Table {
        if let Some(u) = self.series_units.get_mut(i) {
            *u = unit.to_string();
        }
        self
    }

    /// Adds a note line printed under the table.
    pub fn note(&mut self, line: impl Into<String>) {
        self.notes.push(line.into());
    }

    /// Index of the row labelled `label`, added (with x) if new.
    pub fn row(&mut self, label: &str, x: f64) -> usize {
        if let Some(i) = self.rows.iter().position(|r| r.label == label) {
            return i;
        }
        self.rows.push(Row {
            label: label.to_string(),
            x,
            cells: vec![Cell::Empty; self.series.len()],
        });
        self.rows.len() - 1
    }

    /// Sets the cell of row `label` (x) and series index `series`, and
    /// prints failures as they happen.
    pub fn set(&mut self, label: &str, x: f64, series: usize, cell: Cell) {
        if let (Cell::Failed(e), false) = (&cell, super::cleanup::interrupted()) {
            eprintln!(
                "bench: {} / {} / {}: FAILED: {}",
                self.key,
                self.series.get(series).map(String::as_str).unwrap_or("?"),
                label,
                e
            );
        }
        let r = self.row(label, x);
        if let Some(c) = self.rows[r].cells.get_mut(series) {
            *c = cell;
        }
    }

    /// Sets every still-empty cell of `series` to a skip with `reason`
    /// (creating `labels` rows if missing).
    pub fn skip_series(&mut self, series: usize, labels: &[(String, f64)], reason: &str) {
        for (label, x) in labels {
            let r = self.row(label, *x);
            if let Some(c) = self.rows[r].cells.get_mut(series) {
                if matches!(c, Cell::Empty) {
                    *c = Cell::Skipped(reason.to_string());
                }
            }
        }
    }

    /// The table as plain text: header, aligned columns, ratios, then the
    /// notes, failures and skips (each distinct message once).
    pub fn render(&self) -> String {
        let mut header: Vec<String> = vec![self.row_header.clone()];
        header.extend(
            self.series
                .iter()
                .zip(&self.series_units)
                .map(|(s, u)| format!("{s} ({u})")),
        );
        header.extend(self.ratios.iter().map(|(_, _, h)| h.clone()));
        let mut lines: Vec<Vec<String>> = Vec::new();
        let mut footnotes: Vec<String> = Vec::new();
        let mark = |msg: &str, footnotes: &mut Vec<String>| -> usize {
            if let Some(i) = footnotes.iter().position(|f| f == msg) {
                i + 1
            } else {
                footnotes.push(msg.to_string());
                footnotes.len()
            }
        };
        for row in &self.rows {
            let mut line = vec![row.label.clone()];
            for cell in &row.cells {
                line.push(match cell {
                    Cell::Empty => "-".to_string(),
                    Cell::Value(v, None) => fmt_num(*v),
                    Cell::Value(v, Some(remark)) => {
                        format!("{} [{}]", fmt_num(*v), mark(remark, &mut footnotes))
                    }
                    Cell::Failed(e) => {
                        format!("FAILED [{}]", mark(&format!("failed: {e}"), &mut footnotes))
                    }
                    Cell::Skipped(r) => {
                        format!("skip [{}]", mark(&format!("skipped: {r}"), &mut footnotes))
                    }
                });
            }
            for (n, d, _) in &self.ratios {
                let v = match (
                    row.cells.get(*n).and_then(Cell::value),
                    row.cells.get(*d).and_then(Cell::value),
                ) {
                    (Some(a), Some(b)) if b != 0.0 => format!("{:.2}x", a / b),
                    _ => "-".to_string(),
                };
                line.push(v);
            }
            lines.push(line);
        }
        let ncol = header.len();
        let mut width = vec![0usize; ncol];
        for l in std::iter::once(&header).chain(lines.iter()) {
            for (i, c) in l.iter().enumerate() {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        let _ = writeln!(out, "\n== {} ==", self.title);
        let fmt_line = |l: &Vec<String>| -> String {
            l.iter()
                .enumerate()
                .map(|(i, c)| {
                    if i == 0 {
                        format!("{c:<w$}", w = width[i])
                    } else {
                        format!("{c:>w$}", w = width[i])
                    }
                })
                .collect::<Vec<_>>()
                .join(" | ")
        };
        let _ = writeln!(out, "{}", fmt_line(&header));
        let _ = writeln!(
            out,
            "{}",
            width
                .iter()
                .map(|w| "-".repeat(*w))
                .collect::<Vec<_>>()
                .join("-+-")
        );
        for l in &lines {
            let _ = writeln!(out, "{}", fmt_line(l));
        }
        for n in &self.notes {
            let _ = writeln!(out, "  {n}");
        }
        for (i, f) in footnotes.iter().enumerate() {
            let first = f.lines().next().unwrap_or("");
            let _ = writeln!(out, "  [{}] {}", i + 1, first);
            for more in f.lines().skip(1).take(8) {
                let _ = writeln!(out, "      {more}");
            }
        }
        out
    }

    /// CSV lines (no header): key,row,x,series,unit,status,value,note.
    pub fn csv_rows(&self) -> Vec<String> {
        let mut out = Vec::new();
        for row in &self.rows {
            for (i, cell) in row.cells.iter().enumerate() {
                let (status, value, note) = match cell {
                    Cell::Empty => continue,
                    Cell::Value(v, n) => ("ok", format!("{v}"), n.clone().unwrap_or_default()),
                    Cell::Failed(e) => ("failed", String::new(), e.clone()),
                    Cell::Skipped(r) => ("skipped", String::new(), r.clone()),
                };
                out.push(
                    [
                        csv(&self.key),
                        csv(&row.label),
                        format!("{}", row.x),
                        csv(&self.series[i]),
                        csv(&self.series_units[i]),
                        status.to_string(),
                        value,
                        csv(&note),
                    ]
                    .join(","),
                );
            }
        }
        out
    }

    /// The table as a JSON object.
    pub fn json(&self) -> String {
        let mut rows = Vec::new();
        for row in &self.rows {
            let cells: Vec<String> = row
                .cells
                .iter()
                .zip(self.series.iter().zip(&self.series_units))
                .map(|(c, (s, unit))| {
                    let (status, value, note) = match c {
                        Cell::Empty => ("empty", "null".to_string(), String::new()),
                        Cell::Value(v, n) => ("ok", json_num(*v), n.clone().unwrap_or_default()),
                        Cell::Failed(e) => ("failed", "null".to_string(), e.clone()),
                        Cell::Skipped(r) => ("skipped", "null".to_string(), r.clone()),
                    };
                    format!(
                        "{{\"series\": {}, \"unit\": {}, \"status\": \"{status}\", \"value\": {value}, \"note\": {}}}",
                        json_str(s),
                        json_str(unit),
                        json_str(&note)
                    )
                })
                .collect();
            rows.push(format!(
                "      {{\"label\": {}, \"x\": {}, \"cells\": [{}]}}",
                json_str(&row.label),
                json_num(row.x),
                cells.join(", ")
            ));
        }
        format!(
            "    {{\"key\": {}, \"title\": {}, \"unit\": {}, \"rows\": [\n{}\n    ]}}",
            json_str(&self.key),
            json_str(&self.title),
            json_str(&self.unit),
            rows.join(",\n")
        )
    }
}

/// A number as the tables print it: integers above 100, else 3 significant
/// decimals.
pub fn fmt_num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// CSV field with quoting when needed.
pub fn csv(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// JSON number (`null` for NaN / infinities).
pub fn json_num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "null".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_values_ratios_and_footnotes() {
        let mut t = Table::new(
            "t",
            "Test",
            "tps",
            "clients",
            &["hotpair", "PostgreSQL"],
            Chart::Bars,
        )
        .ratio(0, 1, "hotpair/PG");
        t.set("1", 1.0, 0, Cell::Value(200.0, None));
        t.set("1", 1.0, 1, Cell::Value(100.0, None));
        t.set("8", 8.0, 0, Cell::Skipped("standby: not available".into()));
        let text = t.render();
        assert!(text.contains("2.00x"), "{text}");
        assert!(text.contains("skip [1]"), "{text}");
        assert!(
            text.contains("[1] skipped: standby: not available"),
            "{text}"
        );
        assert_eq!(t.csv_rows().len(), 3);
    }

    #[test]
    fn cpu_series_follow_the_point() {
        let mut t =
            Table::new("t", "Test", "tps", "clients", &["hp", "PG"], Chart::Bars).with_cpu(&[0, 1]);
        assert_eq!(t.series.len(), 6);
        assert_eq!(t.series[2], "hp server CPU");
        assert_eq!(t.series_units[5], CPU_UNIT);
        let s = crate::bench::pgbench::Summary {
            tps: 1000.0,
            processed: 2000,
            server_cpu_usec: Some(60_000),
            client_cpu_usec: Some(20_000),
            ..Default::default()
        };
        t.set_point("8", 8.0, 1, &Ok(s));
        let row = &t.rows[0];
        assert_eq!(row.cells[1].value(), Some(1000.0));
        assert_eq!(row.cells[4].value(), Some(30.0));
        assert_eq!(row.cells[5].value(), Some(10.0));
        assert!(t.render().contains("PG pgbench CPU (µs/txn)"));
        assert!(t.json().contains("\"series\": \"PG server CPU\""));
    }

    #[test]
    fn json_escapes() {
        assert_eq!(json_str("a\"b\n"), "\"a\\\"b\\n\"");
        assert_eq!(csv("a,b"), "\"a,b\"");
    }
}
