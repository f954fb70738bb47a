//! A picture of a window of the timeline for slides, papers and mailing-list posts: one lane per
//! CPU with the CID slots of one process (a coloured box per CID, lighter while the task has
//! not confirmed it), the process's cidmask weight as a step line under them with the bound
//! (possible CPUs), a time axis and a legend. Self-contained SVG (no scripts, no external
//! fonts or styles); its size is bounded by its width in pixels, not by the capture: each
//! pixel column shows the segment that covers most of it, as the TUI does per cell.
//!
//! Colours come in as plain data ([`SvgColors`], e.g. from a TUI theme); this module imports
//! nothing of the UI.

use crate::events::{Trace, fmt_dur, fmt_ts};
use crate::model::MmId;
use crate::timeline::lanes::summarize;
use crate::timeline::{Segment, Timeline};
use std::fmt::Write as _;
use std::io::{self, Write};

/// Colours as `#rrggbb` strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SvgColors {
    /// Fill of a slot holding CID n: `palette[n % len]`.
    pub palette: Vec<String>,
    pub text: String,
    pub dim: String,
    pub background: String,
    /// A CPU running nothing of the process.
    pub free: String,
    pub weight: String,
    pub bound: String,
}

impl Default for SvgColors {
    fn default() -> SvgColors {
        let p = [
            "#1f77b4", "#2ca02c", "#d4a017", "#9467bd", "#17becf", "#d62728", "#6baed6", "#98df8a",
            "#ffdd57", "#e377c2", "#9edae5", "#ff9896",
        ];
        SvgColors {
            palette: p.iter().map(|s| s.to_string()).collect(),
            text: "#202020".into(),
            dim: "#808080".into(),
            background: "#ffffff".into(),
            free: "#eeeeee".into(),
            weight: "#1f77b4".into(),
            bound: "#d62728".into(),
        }
    }
}

/// What to draw.
#[derive(Clone, Debug)]
pub struct SvgOptions {
    /// The window, absolute times in ns: `[from, to)`.
    pub from: u64,
    pub to: u64,
    /// The process whose CIDs are drawn; `None`: every task.
    pub mm: Option<MmId>,
    /// Its name for the title ("tgid 3082 hackbench").
    pub label: String,
    pub colors: SvgColors,
    /// Width of the picture in pixels.
    pub width: u32,
}

const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const LANE_H: f64 = 22.0;
const LANE_GAP: f64 = 6.0;
const WEIGHT_H: f64 = 110.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A tick step of 1, 2 or 5 times a power of ten giving about `n` ticks over `span` ns.
fn tick_step(span: u64, n: u64) -> u64 {
    let raw = (span / n.max(1)).max(1);
    let mut p = 1u64;
    while p.saturating_mul(10) <= raw {
        p *= 10;
    }
    [1, 2, 5, 10]
        .iter()
        .map(|m| m * p)
        .find(|&s| s >= raw)
        .unwrap_or(10 * p)
}

/// Writes the picture of `opts.from..opts.to` of `tl`.
pub fn write(
    trace: &Trace,
    tl: &Timeline,
    opts: &SvgOptions,
    out: &mut impl Write,
) -> io::Result<()> {
    out.write_all(render(trace, tl, opts).as_bytes())
}

/// The SVG document as text.
pub fn render(trace: &Trace, tl: &Timeline, opts: &SvgOptions) -> String {
    let series = match opts.mm {
        Some(mm) => tl
            .weight_series(Some(mm))
            .into_iter()
            .nth(mm.0 as usize)
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let lanes = Lanes {
        lanes: &tl.lanes,
        series,
        what: "observed",
    };
    render_lanes(trace, tl, &lanes, opts)
}

/// The picture of a model's run (`export --svg --policy P`): its per-CPU lanes and its
/// cidmask weight where the observed ones would be.
pub fn render_model(
    trace: &Trace,
    tl: &Timeline,
    run: &crate::model::policies::PolicyRun,
    opts: &SvgOptions,
) -> String {
    let series = match opts.mm {
        Some(mm) => (run.weights.iter())
            .filter(|w| w.mm == mm)
            .map(|w| (w.ts, w.weight.min(u16::MAX as u32) as u16))
            .collect(),
        None => Vec::new(),
    };
    let what = format!("model {}", run.policy.id());
    let lanes = Lanes {
        lanes: &run.lanes,
        series,
        what: &what,
    };
    render_lanes(trace, tl, &lanes, opts)
}

/// What the lanes and the weight graph show: the observed timeline's, or a model's.
struct Lanes<'a> {
    lanes: &'a [crate::model::SegLane],
    series: Vec<(u64, u16)>,
    what: &'a str,
}

fn render_lanes(trace: &Trace, tl: &Timeline, src: &Lanes, opts: &SvgOptions) -> String {
    let c = &opts.colors;
    let (from, to) = (opts.from, opts.to.max(opts.from + 1));
    let span = to - from;
    let w = opts.width.max(200) as f64;
    let plot_w = w - LEFT - RIGHT;
    let cols = plot_w.floor() as usize;
    let x_of = |ts: u64| LEFT + (ts.saturating_sub(from) as f64 / span as f64) * plot_w;
    let col_range = |k: usize| {
        let a = from + (span as u128 * k as u128 / cols as u128) as u64;
        let b = from + (span as u128 * (k as u128 + 1) / cols as u128) as u64;
        (a, b.max(a + 1))
    };
    let ncpus = src.lanes.len();
    let lanes_top = 44.0;
    let lanes_h = ncpus as f64 * (LANE_H + LANE_GAP);
    let weight_top = lanes_top + lanes_h + 24.0;
    let axis_y = weight_top + WEIGHT_H;
    let legend_y = axis_y + 40.0;
    let h = legend_y + 30.0;
    let admits = |s: &Segment| match opts.mm {
        Some(mm) => s.mm == mm && s.tid != 0,
        None => s.tid != 0,
    };
    let fill = |cid: i32| {
        let p = &c.palette;
        if p.is_empty() {
            c.text.clone()
        } else {
            p[cid.rem_euclid(p.len() as i32) as usize].clone()
        }
    };
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="11">
<title>cidscope: {title}</title>
<rect x="0" y="0" width="{w}" height="{h}" fill="{bg}"/>
<text x="{LEFT}" y="20" font-size="14" font-weight="bold" fill="{text}">{title}</text>
<text x="{LEFT}" y="36" fill="{dim}">per-CPU CID slots ({what}), {t0}–{t1} ({dur}), {src}</text>
"#,
        title = esc(&format!("CIDs of {}", opts.label)),
        bg = c.background,
        text = c.text,
        dim = c.dim,
        t0 = fmt_ts(from),
        t1 = fmt_ts(to),
        dur = fmt_dur(span),
        src = esc(&trace.path),
        what = esc(src.what),
    );
    // the lanes
    let mut seen: Vec<i32> = Vec::new();
    let mut unconfirmed_seen = false;
    for (cpu, lane) in src.lanes.iter().enumerate() {
        let y = lanes_top + cpu as f64 * (LANE_H + LANE_GAP);
        let _ = writeln!(
            s,
            r#"<g class="lane" id="cpu{cpu}" data-cpu="{cpu}">
<text x="{lx}" y="{ty}" text-anchor="end" fill="{text}">CPU{cpu}</text>
<rect class="free" x="{LEFT}" y="{y}" width="{plot_w:.1}" height="{LANE_H}" fill="{free}"/>"#,
            lx = LEFT - 6.0,
            ty = y + LANE_H * 0.7,
            text = c.text,
            free = c.free,
        );
        // per pixel column the dominant admitted segment, runs of equal state merged
        let mut run: Option<(usize, Segment)> = None;
        let flush = |s: &mut String, start: usize, end: usize, seg: &Segment| {
            let Some(cid) = seg.cid() else {
                return;
            };
            let x = LEFT + start as f64 * plot_w / cols as f64;
            let wd = (end - start) as f64 * plot_w / cols as f64;
            let op = if seg.confirmed() { "1" } else { "0.45" };
            let _ = write!(
                s,
                r#"<rect class="cid" data-cid="{cid}" x="{x:.1}" y="{y}" width="{wd:.1}" height="{LANE_H}" fill="{f}" fill-opacity="{op}"><title>CPU{cpu}: {who} CID {cid}{un}</title></rect>"#,
                f = fill(cid),
                who = esc(&format!("{}-{}", trace.comm_of(seg.tid), seg.tid)),
                un = if seg.confirmed() {
                    ""
                } else {
                    " (not confirmed yet)"
                },
            );
            if wd >= 12.0 {
                let _ = write!(
                    s,
                    r#"<text x="{tx:.1}" y="{ty:.1}" text-anchor="middle" fill="{text}">{cid}</text>"#,
                    tx = x + wd / 2.0,
                    ty = y + LANE_H * 0.7,
                    text = c.text,
                );
            }
            s.push('\n');
        };
        for k in 0..cols {
            let (a, b) = col_range(k);
            let seg = summarize(lane, a, b, tl.last_ts, admits).seg;
            if let Some(sg) = seg
                && let Some(cid) = sg.cid()
            {
                if !seen.contains(&cid) {
                    seen.push(cid);
                }
                unconfirmed_seen |= !sg.confirmed();
            }
            let same = |x: &Segment, y: &Segment| {
                x.cid == y.cid && x.confirmed() == y.confirmed() && x.tid == y.tid
            };
            match (&run, seg) {
                (Some((_, r)), Some(sg)) if same(r, &sg) => {}
                (Some((start, r)), _) => {
                    let r = *r;
                    flush(&mut s, *start, k, &r);
                    run = seg.map(|sg| (k, sg));
                }
                (None, _) => run = seg.map(|sg| (k, sg)),
            }
        }
        if let Some((start, r)) = run {
            flush(&mut s, start, cols, &r);
        }
        s.push_str("</g>\n");
    }
    // the weight: per pixel column the highest weight, as a step line
    let bound = tl.ncpus.max(1) as f64;
    let y_of = |v: f64| weight_top + WEIGHT_H - v / bound * (WEIGHT_H - 10.0);
    let series = &src.series;
    let _ = writeln!(
        s,
        r#"<g class="weight-graph">
<text x="{LEFT}" y="{ty}" fill="{dim}">cidmask weight (distinct confirmed CIDs of running threads)</text>
<line class="bound" x1="{LEFT}" y1="{by:.1}" x2="{x2:.1}" y2="{by:.1}" stroke="{bc}" stroke-dasharray="4 3"/>
<text x="{x2:.1}" y="{bty:.1}" text-anchor="end" fill="{bc}">bound = {n} possible CPUs</text>
<text x="{lx}" y="{by0:.1}" text-anchor="end" fill="{text}">0</text>
<text x="{lx}" y="{by:.1}" text-anchor="end" fill="{text}">{n}</text>"#,
        ty = weight_top - 6.0,
        dim = c.dim,
        by = y_of(bound),
        bty = y_of(bound) - 3.0,
        by0 = y_of(0.0),
        x2 = LEFT + plot_w,
        bc = c.bound,
        n = tl.ncpus,
        lx = LEFT - 6.0,
        text = c.text,
    );
    if opts.mm.is_some() {
        let at = |t: u64| {
            series
                .partition_point(|p| p.0 <= t)
                .checked_sub(1)
                .map_or(0, |i| series[i].1)
        };
        let mut d = String::new();
        let mut last: Option<u16> = None;
        for k in 0..cols {
            let (a, b) = col_range(k);
            let lo = series.partition_point(|p| p.0 <= a);
            let v = series[lo..]
                .iter()
                .take_while(|p| p.0 < b)
                .map(|p| p.1)
                .fold(at(a), u16::max);
            let x = LEFT + k as f64 * plot_w / cols as f64;
            match last {
                None => {
                    let _ = write!(d, "M{x:.1},{:.1}", y_of(v as f64));
                }
                Some(p) if p != v => {
                    let _ = write!(d, " H{x:.1} V{:.1}", y_of(v as f64));
                }
                _ => {}
            }
            last = Some(v);
        }
        let _ = write!(d, " H{:.1}", LEFT + plot_w);
        let _ = writeln!(
            s,
            r#"<path class="weight" d="{d}" fill="none" stroke="{wc}" stroke-width="2"/>"#,
            wc = c.weight
        );
    }
    s.push_str("</g>\n");
    // the time axis
    let step = tick_step(span, 8);
    let _ = writeln!(
        s,
        r#"<g class="axis"><line x1="{LEFT}" y1="{axis_y}" x2="{x2:.1}" y2="{axis_y}" stroke="{dim}"/>"#,
        x2 = LEFT + plot_w,
        dim = c.dim
    );
    let mut t = 0u64;
    while t <= span {
        let x = x_of(from + t);
        let _ = writeln!(
            s,
            r#"<line x1="{x:.1}" y1="{axis_y}" x2="{x:.1}" y2="{y2}" stroke="{dim}"/><text x="{x:.1}" y="{ty}" text-anchor="middle" fill="{text}">+{label}</text>"#,
            y2 = axis_y + 5.0,
            ty = axis_y + 18.0,
            dim = c.dim,
            text = c.text,
            label = esc(&fmt_dur(t)),
        );
        t += step;
    }
    s.push_str("</g>\n");
    // the legend: the CIDs drawn, what lighter boxes and the lines mean
    seen.sort_unstable();
    let _ = write!(
        s,
        r#"<g class="legend"><text x="{LEFT}" y="{y}" fill="{text}">CID</text>"#,
        y = legend_y,
        text = c.text
    );
    let mut x = LEFT + 30.0;
    for &cid in seen.iter().take(24) {
        let _ = write!(
            s,
            r#"<rect x="{x:.1}" y="{ry}" width="22" height="14" fill="{f}"/><text x="{tx:.1}" y="{y}" text-anchor="middle" fill="{text}">{cid}</text>"#,
            ry = legend_y - 11.0,
            f = fill(cid),
            tx = x + 11.0,
            y = legend_y,
            text = c.text
        );
        x += 26.0;
    }
    if seen.len() > 24 {
        let _ = write!(
            s,
            r#"<text x="{x:.1}" y="{legend_y}" fill="{dim}">… {} more</text>"#,
            seen.len() - 24,
            dim = c.dim
        );
        x += 70.0;
    }
    x += 16.0;
    if unconfirmed_seen {
        let _ = write!(
            s,
            r#"<rect x="{x:.1}" y="{ry}" width="22" height="14" fill="{f}" fill-opacity="0.45"/><text x="{tx:.1}" y="{legend_y}" fill="{dim}">lighter: CID not confirmed since the switch-in</text>"#,
            ry = legend_y - 11.0,
            f = fill(seen.first().copied().unwrap_or(0)),
            tx = x + 28.0,
            dim = c.dim
        );
        x += 330.0;
    }
    let _ = writeln!(
        s,
        r#"<rect x="{x:.1}" y="{ry}" width="22" height="14" fill="{free}"/><text x="{tx:.1}" y="{legend_y}" fill="{dim}">no thread of the process</text></g>
</svg>"#,
        ry = legend_y - 11.0,
        free = c.free,
        tx = x + 28.0,
        dim = c.dim
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(25_000_000, 8), 5_000_000);
        assert_eq!(tick_step(1000, 8), 200);
        assert_eq!(tick_step(7, 8), 1);
        assert_eq!(esc("a<b&\"c\""), "a&lt;b&amp;&quot;c&quot;");
    }
}
