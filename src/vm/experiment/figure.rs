//! `DIR/experiment.svg`: the figure to paste into a mailing-list reply. Per kernel and vCPU
//! count, the workload process's highest running CID and span excess over time (its first
//! finished run); then the scan cost per call against the vCPUs (the scaling curve, with early
//! exits dashed) and the compaction latency of each kernel × vCPUs. Self-contained SVG: no
//! script, no external font or style.

use super::record::RunRecord;
use super::summary::{Group, label};
use std::fmt::Write;

const W: f64 = 980.0;
const COLORS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
];
const EXCESS: &str = "#ff7f0e";

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn text(o: &mut String, x: f64, y: f64, size: u32, anchor: &str, t: &str) {
    let _ = writeln!(
        o,
        r##"<text x="{x:.1}" y="{y:.1}" font-size="{size}" text-anchor="{anchor}" fill="#202020">{}</text>"##,
        esc(t)
    );
}

fn fmt(x: f64) -> String {
    if x >= 100.0 || x == x.trunc() {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// A plot area: data → pixels.
struct Area {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
    xmax: f64,
    ymax: f64,
}

impl Area {
    /// A note in the middle of the area, where a plot has nothing to draw.
    fn note(&self, o: &mut String, msg: &str) {
        text(
            o,
            self.x + self.w / 2.0,
            self.y + self.h / 2.0,
            11,
            "middle",
            msg,
        );
    }

    fn px(&self, x: f64) -> f64 {
        self.x + self.w * (x / self.xmax.max(1e-9)).clamp(0.0, 1.0)
    }
    fn py(&self, y: f64) -> f64 {
        self.y + self.h - self.h * (y / self.ymax.max(1e-9)).clamp(0.0, 1.0)
    }
    fn frame(&self, o: &mut String, xlabel: &str, ylabel: &str) {
        let _ = writeln!(
            o,
            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#909090"/>"##,
            self.x, self.y, self.w, self.h
        );
        text(o, self.x - 4.0, self.y + 4.0, 10, "end", &fmt(self.ymax));
        text(o, self.x - 4.0, self.y + self.h, 10, "end", "0");
        text(
            o,
            self.x + self.w,
            self.y + self.h + 12.0,
            10,
            "end",
            xlabel,
        );
        text(o, self.x + 2.0, self.y - 3.0, 10, "start", ylabel);
    }
}

/// The first finished run of a kernel at a vCPU count.
fn first_run<'a>(runs: &'a [RunRecord], g: &Group) -> Option<&'a RunRecord> {
    runs.iter()
        .find(|r| r.kernel == g.kernel && r.cpus == g.cpus && r.status == "ok")
}

pub fn svg(groups: &[Group], runs: &[RunRecord], title: &str, notes: &[String]) -> String {
    let mut kernels: Vec<&str> = groups.iter().map(|g| g.kernel.as_str()).collect();
    kernels.dedup();
    let mut cpus: Vec<u32> = groups.iter().map(|g| g.cpus).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let cell_w = ((W - 80.0) / cpus.len().max(1) as f64).min(440.0);
    let cell_h = 120.0;
    let lines: Vec<String> = notes.iter().flat_map(|n| wrap(n, 165)).take(6).collect();
    let top = 52.0 + 13.0 * lines.len() as f64;
    let series_h = kernels.len() as f64 * (cell_h + 40.0);
    let bottom_y = top + series_h + 40.0;
    let h = bottom_y + 230.0;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h:.0}" viewBox="0 0 {W} {h:.0}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">"##
    );
    let _ = writeln!(o, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    text(&mut o, 20.0, 24.0, 15, "start", title);
    for (i, n) in lines.iter().enumerate() {
        text(&mut o, 20.0, 42.0 + 13.0 * i as f64, 10, "start", n);
    }
    // time series: kernels in rows, vCPU counts in columns
    for (ki, k) in kernels.iter().enumerate() {
        for (ci, &c) in cpus.iter().enumerate() {
            let Some(g) = groups.iter().find(|g| g.kernel == *k && g.cpus == c) else {
                continue;
            };
            let area = Area {
                x: 60.0 + ci as f64 * cell_w,
                y: top + 36.0 + ki as f64 * (cell_h + 40.0),
                w: cell_w - 50.0,
                h: cell_h,
                xmax: 1.0,
                ymax: c as f64,
            };
            text(
                &mut o,
                area.x,
                area.y - 14.0,
                11,
                "start",
                &format!("{} (run 1)", label(g)),
            );
            let Some(s) = first_run(runs, g).and_then(|r| r.series.as_ref()) else {
                area.frame(&mut o, "", "CID");
                area.note(&mut o, "no finished run");
                continue;
            };
            // one time scale per column: the kernels compare in time
            let secs = groups
                .iter()
                .filter(|h| h.cpus == c)
                .filter_map(|h| first_run(runs, h)?.series.as_ref())
                .map(|s| s.max_cid.len() as f64 * s.bin_ms / 1000.0)
                .fold(0.0f64, f64::max);
            let area = Area {
                xmax: secs.max(1e-3),
                ..area
            };
            area.frame(&mut o, &format!("{} s", fmt(secs)), "CID");
            let dx = s.bin_ms / 1000.0;
            // span excess: an area from 0
            let mut pts = format!("{:.1},{:.1}", area.px(0.0), area.py(0.0));
            for (i, &e) in s.span_excess.iter().enumerate() {
                let x = i as f64 * dx;
                let _ = write!(
                    pts,
                    " {:.1},{:.1} {:.1},{:.1}",
                    area.px(x),
                    area.py(e as f64),
                    area.px(x + dx),
                    area.py(e as f64)
                );
            }
            let _ = write!(pts, " {:.1},{:.1}", area.px(secs), area.py(0.0));
            let _ = writeln!(
                o,
                r##"<polygon points="{pts}" fill="{EXCESS}" fill-opacity="0.45" stroke="none"/>"##
            );
            // highest running CID: a step line, broken where nothing ran
            let mut d = String::new();
            let mut pen = false;
            for (i, &m) in s.max_cid.iter().enumerate() {
                if m < 0 {
                    pen = false;
                    continue;
                }
                let (x0, x1, y) = (
                    area.px(i as f64 * dx),
                    area.px((i + 1) as f64 * dx),
                    area.py(m as f64),
                );
                let _ = write!(
                    d,
                    "{}{x0:.1},{y:.1} L{x1:.1},{y:.1} ",
                    if pen { "L" } else { "M" }
                );
                pen = true;
            }
            let _ = writeln!(
                o,
                r##"<path d="{d}" fill="none" stroke="{}" stroke-width="1.2"/>"##,
                COLORS[ki % COLORS.len()]
            );
        }
    }
    let ly = top + 6.0;
    let _ = writeln!(
        o,
        r##"<rect x="60" y="{:.0}" width="14" height="8" fill="{EXCESS}" fill-opacity="0.45"/>"##,
        ly - 8.0
    );
    text(
        &mut o,
        78.0,
        ly,
        10,
        "start",
        "span excess (highest running CID + 1 − threads running)      line: highest CID of a running thread (the workload's process, 5 ms bins)",
    );
    scaling(&mut o, groups, &kernels, &cpus, bottom_y);
    latency(&mut o, groups, &kernels, bottom_y);
    o.push_str("</svg>\n");
    o
}

/// `s` in lines of at most `w` characters, broken at spaces.
fn wrap(s: &str, w: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = String::new();
    for word in s.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > w {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push(line);
    }
    out
}

fn median(g: &Group, m: &str) -> Option<f64> {
    g.metrics.get(m)?.as_ref().map(|s| s.median)
}

/// Scan cost per call against the vCPUs, a line per kernel (early exits dashed).
fn scaling(o: &mut String, groups: &[Group], kernels: &[&str], cpus: &[u32], y: f64) {
    let values: Vec<f64> = groups
        .iter()
        .flat_map(|g| {
            [
                median(g, "scan_call_p50_us"),
                median(g, "early_exit_p50_us"),
            ]
        })
        .flatten()
        .filter(|v| *v > 0.0)
        .collect();
    let ymax = values.iter().copied().fold(0.0f64, f64::max);
    // decades: a batch of 8 and a scan of 64 CPUs differ by tens
    let lo = values
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .log10()
        .floor()
        .min(0.0);
    let hi = ymax.max(1.0).log10().ceil().max(lo + 1.0);
    let ly = |v: f64| v.max(1e-9).log10() - lo;
    text(
        o,
        20.0,
        y,
        12,
        "start",
        "scan cost per call (median µs, log scale, function_graph) against vCPUs",
    );
    let a = Area {
        x: 70.0,
        y: y + 20.0,
        w: 380.0,
        h: 160.0,
        xmax: (cpus.len().max(2) - 1) as f64,
        ymax: hi - lo,
    };
    let _ = writeln!(
        o,
        r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#909090"/>"##,
        a.x, a.y, a.w, a.h
    );
    text(o, a.x + 2.0, a.y - 3.0, 10, "start", "µs");
    for d in 0..=((hi - lo) as i32) {
        let yy = a.py(d as f64);
        let _ = writeln!(
            o,
            r##"<line x1="{:.1}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#e0e0e0"/>"##,
            a.x,
            a.x + a.w
        );
        text(
            o,
            a.x - 4.0,
            yy + 4.0,
            10,
            "end",
            &fmt(10f64.powi(lo as i32 + d)),
        );
    }
    text(
        o,
        a.x + a.w / 2.0,
        a.y + a.h + 26.0,
        10,
        "middle",
        "vCPUs (dashed: early exits)",
    );
    for (i, c) in cpus.iter().enumerate() {
        text(
            o,
            a.px(i as f64),
            a.y + a.h + 12.0,
            10,
            "middle",
            &c.to_string(),
        );
    }
    if ymax == 0.0 {
        a.note(
            o,
            "no function_graph calls (--graph-function task_mm_cid_work)",
        );
        return;
    }
    for (ki, k) in kernels.iter().enumerate() {
        let color = COLORS[ki % COLORS.len()];
        for (metric, dash) in [
            ("scan_call_p50_us", ""),
            ("early_exit_p50_us", r#" stroke-dasharray="4 3""#),
        ] {
            let pts: Vec<(f64, f64)> = cpus
                .iter()
                .enumerate()
                .filter_map(|(i, c)| {
                    let g = groups.iter().find(|g| g.kernel == *k && g.cpus == *c)?;
                    Some((a.px(i as f64), a.py(ly(median(g, metric)?))))
                })
                .collect();
            let p: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
            let _ = writeln!(
                o,
                r##"<polyline points="{}" fill="none" stroke="{color}" stroke-width="1.5"{dash}/>"##,
                p.join(" ")
            );
            for (x, y) in &pts {
                let _ = writeln!(
                    o,
                    r##"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{color}"/>"##
                );
            }
        }
        let name = groups
            .iter()
            .find(|g| g.kernel == *k)
            .and_then(|g| g.kernel_release.clone())
            .unwrap_or_else(|| k.to_string());
        text(
            o,
            a.x + 8.0,
            a.y + 14.0 + 13.0 * ki as f64,
            10,
            "start",
            &name,
        );
        let _ = writeln!(
            o,
            r##"<rect x="{:.1}" y="{:.1}" width="5" height="5" fill="{color}"/>"##,
            a.x + 1.0,
            a.y + 8.0 + 13.0 * ki as f64
        );
    }
}

/// Compaction latency (median of the runs' p50) per kernel × vCPUs, with falls resolved.
fn latency(o: &mut String, groups: &[Group], kernels: &[&str], y: f64) {
    text(
        o,
        520.0,
        y,
        12,
        "start",
        "compaction latency after a burst (median p50, ms)",
    );
    let ymax = groups
        .iter()
        .filter_map(|g| median(g, "compaction_latency_p50_ms"))
        .fold(0.0f64, f64::max)
        .max(1.0);
    let a = Area {
        x: 560.0,
        y: y + 20.0,
        w: 390.0,
        h: 160.0,
        xmax: groups.len().max(1) as f64,
        ymax: ymax * 1.15,
    };
    a.frame(o, "", "ms");
    let mut order: Vec<&Group> = groups.iter().collect();
    order.sort_by_key(|g| g.cpus);
    let bw = a.w / order.len().max(1) as f64;
    for (i, g) in order.iter().enumerate() {
        let ki = kernels.iter().position(|k| *k == g.kernel).unwrap_or(0);
        let x = a.x + i as f64 * bw + bw * 0.15;
        let resolved = median(g, "falls_resolved").unwrap_or(0.0);
        let open = median(g, "falls_unresolved").unwrap_or(0.0)
            + median(g, "falls_interrupted").unwrap_or(0.0);
        match median(g, "compaction_latency_p50_ms") {
            Some(v) => {
                let _ = writeln!(
                    o,
                    r##"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"/>"##,
                    a.py(v),
                    bw * 0.7,
                    a.y + a.h - a.py(v),
                    COLORS[ki % COLORS.len()]
                );
                text(o, x + bw * 0.35, a.py(v) - 3.0, 10, "middle", &fmt(v));
            }
            None => text(o, x + bw * 0.35, a.y + a.h - 4.0, 10, "middle", "none"),
        }
        text(
            o,
            x + bw * 0.35,
            a.y + a.h + 12.0,
            9,
            "middle",
            &format!("@{} {}/{}", g.cpus, fmt(resolved), fmt(resolved + open)),
        );
    }
    text(
        o,
        a.x,
        a.y + a.h + 26.0,
        9,
        "start",
        "under each bar: vCPUs, falls resolved / falls (medians per run); colour: kernel as on the left",
    );
}
