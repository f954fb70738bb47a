use std::time::Instant;
fn main() {
    let path = std::env::args().nth(1).expect("file");
    for serial in [true, false, true, false] {
        let t = Instant::now();
        let opts = cidscope::sources::LoadOptions {
            serial,
            ..Default::default()
        };
        let tr = cidscope::sources::load(std::path::Path::new(&path), &opts).unwrap();
        let t1 = t.elapsed();
        let s = cidscope::stats::compute(&tr);
        let t2 = t.elapsed();
        let tl = cidscope::timeline::Timeline::build(&tr);
        let t3 = t.elapsed();
        eprintln!(
            "serial={serial} load {:?} stats {:?} timeline {:?} events {} segs {}",
            t1,
            t2 - t1,
            t3 - t2,
            s.events,
            tl.lanes.iter().map(|l| l.len()).sum::<usize>()
        );
    }
}
