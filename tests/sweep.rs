//! The bounded run of `scripts/sweep.py`: every capture format cut at 8 offsets and with 8 bytes
//! flipped, each load judged (refused with a message, loaded with a warning that counts what
//! it lost, or loaded whole); a load that loses events without a word, a crash or a hang fails.
//! The full sweep (64 cuts, 64 flips per format) is `scripts/sweep.py` as it is.

use std::process::Command;

#[test]
fn cut_and_flipped_captures_never_lose_events_silently() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/sweep.py");
    let out = Command::new("python3")
        .args([
            script,
            "--bin",
            env!("CARGO_BIN_EXE_cidscope"),
            "--cuts",
            "8",
            "--flips",
            "8",
            "--timeout",
            "120",
        ])
        .output()
        .expect("python3 runs scripts/sweep.py");
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "sweep failures:\n{text}");
    // every format was swept: 11 captures, 16 variants each
    let judged: usize = text
        .lines()
        .filter_map(|l| l.strip_suffix(" failed"))
        .filter_map(|l| l.split(" passed").next()?.trim().parse::<usize>().ok())
        .sum();
    assert!(judged >= 11 * 16, "{judged} variants judged:\n{text}");
}
