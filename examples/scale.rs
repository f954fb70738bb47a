//! The scale figures of issue 6, in one run (`scripts/bench.sh` calls it):
//!   cargo run --release --example scale -- [FILE]
//! Without FILE: a synthetic 10 M-event trace (1 M synthesized, repeated ten times in time).
//! Prints: load and index throughput, seek percentiles, frame time per zoom at 240x60, resident
//! memory per event, and the time to the first frame of FILE through the streaming loader.

use cidscope::sources::{LoadOptions, load, load_bytes, open};
use cidscope::ui::{app::App, keys::Action, view};
use ratatui::{Terminal, backend::TestBackend};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Counts live heap bytes, so memory can be attributed to each stage exactly.
struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
// SAFETY: forwards to the system allocator unchanged, only counting sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size(), Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        LIVE.fetch_add(n.wrapping_sub(l.size()), Ordering::Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}
#[global_allocator]
static ALLOC: Counting = Counting;

fn live_bytes() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Resident bytes, after handing freed heap back to the system (so what is counted is what is
/// held, not what the allocator keeps cached from the load's temporaries).
fn rss_bytes() -> u64 {
    // SAFETY: malloc_trim only releases free heap pages; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort_unstable();
    v[((v.len() - 1) as f64 * p) as usize]
}

fn main() {
    let file = std::env::args().nth(1);
    cidscope::sources::memory::tune_allocator();
    if let Some(f) = &file {
        // first frame: open, first delta, index it, draw
        let t0 = Instant::now();
        let opened = open(std::path::Path::new(f), &LoadOptions::default()).expect("open");
        let mut app = App::loading(&opened.name, opened.format, Default::default());
        let mut first = None;
        let _ = opened.stream(&LoadOptions::default(), &mut |d| {
            app.on_load(cidscope::ui::state::LoadMsg::Delta(std::mem::take(d)));
            false
        });
        let mut term = Terminal::new(TestBackend::new(240, 60)).expect("terminal");
        term.draw(|fr| view::draw(fr, &app)).expect("draw");
        first.get_or_insert(t0.elapsed());
        println!(
            "first frame of {f}: {:.0} ms ({} events in the first delta)",
            first.unwrap_or_default().as_secs_f64() * 1e3,
            app.state.trace.events.len()
        );
    }
    // The baseline: after a small load, index and frame, so code pages, thread stacks and the
    // allocator's arenas are counted once, not per event.
    {
        let small = cidscope::testing::synth_ftrace(20_000, 8, 40, 10, 1);
        let t = load_bytes("warm", &small, &LoadOptions::default()).expect("synthetic");
        let app = App::new(t);
        let mut term = Terminal::new(TestBackend::new(240, 60)).expect("terminal");
        term.draw(|fr| view::draw(fr, &app)).expect("draw");
    }
    let rss0 = rss_bytes();
    let live0 = live_bytes();
    let t0 = Instant::now();
    let trace = match &file {
        Some(f) => load(std::path::Path::new(f), &LoadOptions::default()).expect("load"),
        None => cidscope::testing::synth_trace_10m(),
    };
    let load_s = t0.elapsed().as_secs_f64();
    let n = trace.events.len();
    let rss_trace = rss_bytes();
    let live_trace = live_bytes() - live0;
    println!(
        "events: {n} ({} in {load_s:.2} s)",
        if file.is_some() {
            "loaded"
        } else {
            "synthesized"
        }
    );
    let t0 = Instant::now();
    let mut app = App::new(trace);
    let index_s = t0.elapsed().as_secs_f64();
    let rss_app = rss_bytes();
    let live_app = live_bytes() - live0;
    let live_tl = {
        let before = live_bytes();
        let tl = cidscope::timeline::Timeline::build(&app.state.trace);
        let after = live_bytes();
        drop(tl);
        after - before
    };
    println!(
        "index + summaries: {index_s:.2} s ({:.1} M events/s)",
        n as f64 / index_s / 1e6
    );
    println!(
        "resident memory: {:.1} bytes/event ({:.1} MB for the events, {:.1} MB for index and view)",
        (rss_app - rss0) as f64 / n as f64,
        (rss_trace - rss0) as f64 / 1e6,
        (rss_app - rss_trace) as f64 / 1e6
    );
    let lanes: usize = app
        .state
        .timeline
        .lanes
        .iter()
        .map(|l| l.heap_bytes())
        .sum();
    let segs: usize = app.state.timeline.lanes.iter().map(|l| l.len()).sum();
    println!(
        "  heap: trace {:.1} B/event (event store {:.1}), index and view {:.1} B/event (timeline {:.1}, of which lanes {:.1} for {segs} segments)",
        live_trace as f64 / n as f64,
        app.state.trace.events.heap_bytes() as f64 / n as f64,
        (live_app - live_trace) as f64 / n as f64,
        live_tl as f64 / n as f64,
        lanes as f64 / n as f64
    );
    // seeks
    let mut x: u64 = 0x9e3779b97f4a7c15;
    let mut seeks = Vec::with_capacity(10_000);
    for _ in 0..10_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let i = (x % n as u64) as usize;
        let t = Instant::now();
        std::hint::black_box(app.state.timeline.state_after(&app.state.trace, i));
        seeks.push(t.elapsed());
    }
    println!(
        "seek ({} checkpoints every {} events): p50 {:?} p99 {:?} max {:?}",
        app.state.timeline.checkpoints.len(),
        app.state.timeline.interval,
        pct(&mut seeks, 0.5),
        pct(&mut seeks, 0.99),
        pct(&mut seeks, 1.0)
    );
    // frames
    let mut term = Terminal::new(TestBackend::new(240, 60)).expect("terminal");
    let full = app.state.view.span;
    app.state.view.cursor = n / 2;
    for (name, span) in [
        ("whole trace", full),
        ("1 ms/column", 1_000_000 * 234),
        ("1 us/column", 1_000 * 234),
    ] {
        app.state.view.span = span;
        app.state.view.t0 = app.state.cursor_ts().saturating_sub(span / 2);
        app.apply(Action::StepNext);
        app.apply(Action::StepPrev);
        let mut times = Vec::new();
        for _ in 0..40 {
            let t = Instant::now();
            term.draw(|f| view::draw(f, &app)).expect("draw");
            times.push(t.elapsed());
        }
        println!(
            "frame 240x60, {name}: p50 {:?} max {:?}",
            pct(&mut times, 0.5),
            pct(&mut times, 1.0)
        );
    }
}
