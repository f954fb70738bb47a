//! Where the index's memory goes (profiling aid).
use cidscope::sources::{LoadOptions, load_bytes};
fn main() {
    let t = match std::env::args().nth(1) {
        Some(f) => {
            cidscope::sources::load(std::path::Path::new(&f), &LoadOptions::default()).unwrap()
        }
        None => {
            let text = cidscope::testing::synth_ftrace(1_000_000, 8, 40, 10, 1);
            load_bytes("synth", &text, &LoadOptions::default()).unwrap()
        }
    };
    let tl = cidscope::timeline::Timeline::build(&t);
    let n = t.events.len() as f64;
    let segs: usize = tl.lanes.iter().map(|l| l.len()).sum();
    let seg_bytes: usize = tl.lanes.iter().map(|l| l.heap_bytes()).sum();
    let upd: usize = tl.task_cid_changes.heap_bytes();
    let w: usize = 0;
    let cp: usize = tl
        .checkpoints
        .iter()
        .map(|c| c.state.tasks.len() * 40 + c.state.cpus.len() * 16)
        .sum();
    println!(
        "events {n}: store {:.1} B/ev",
        t.events.heap_bytes() as f64 / n
    );
    for (what, b) in t.events.heap_breakdown() {
        println!("  {what}: {:.2} B/ev", b as f64 / n);
    }
    println!(
        "segments {segs}: {:.1} B/ev ({:.1} B/segment)",
        seg_bytes as f64 / n,
        seg_bytes as f64 / segs as f64
    );
    println!(
        "task_cid_changes {:.1} B/ev, weights {:.1} B/ev ({} entries), cid_changes {:.1} B/ev, checkpoints ~{:.1} B/ev, lost {}",
        upd as f64 / n,
        w as f64 * 16.0 / n,
        w,
        tl.cid_changes.capacity() as f64 * 8.0 / n,
        cp as f64 / n,
        tl.lost_at.len()
    );
}
