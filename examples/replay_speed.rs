//! The plain replay's speed on a capture, per policy: `cargo run --release --example
//! replay_speed -- FILE [REPEAT]` prints events per second of `replay` with inference off (the
//! load is not timed). The benchmark figures come from `benches/models.rs`; this is
//! the quick look while changing the model.
use cidscope::model::policies::{InferSteps, Params, PolicyKind, Recording, replay};
use std::time::Instant;

fn main() {
    let mut a = std::env::args().skip(1);
    let Some(file) = a.next() else {
        eprintln!("usage: replay_speed FILE [REPEAT]");
        std::process::exit(2);
    };
    let repeat: usize = a.next().and_then(|s| s.parse().ok()).unwrap_or(3);
    let trace = match cidscope::sources::load(std::path::Path::new(&file), &Default::default()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let n = trace.events.len();
    for policy in [
        PolicyKind::LazyCompact,
        PolicyKind::ResumeBatch,
        PolicyKind::OwnerMode,
    ] {
        let recording = match std::env::var("RECORDING").as_deref() {
            Ok("summary") => Recording::Summary,
            Ok("off") => Recording::Off,
            _ => Recording::Full,
        };
        let p = Params {
            infer: InferSteps::Off,
            recording,
            ..Params::default()
        };
        let mut best = f64::MAX;
        let mut checked = 0;
        for _ in 0..repeat {
            let t = Instant::now();
            let run = replay(&trace, policy, &p);
            best = best.min(t.elapsed().as_secs_f64());
            checked = run.agreement.map_or(0, |a| a.checked);
        }
        println!(
            "{:<13} {n} events in {:.3} s: {:.2} M events/s ({checked} updates checked)",
            policy.id(),
            best,
            n as f64 / best / 1e6
        );
    }
}
