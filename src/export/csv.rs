//! One CSV row per event: index, time, CPU, task, comm, event, process, CID (rseq_update) and a
//! description. Fields are quoted when they hold a comma, quote or newline.

use crate::events::{EventKind, Trace};
use crate::timeline::Timeline;
use std::io::{self, Write};

pub const HEADER: &str = "index,ts_ns,cpu,tid,comm,event,tgid,mm_cid,details";

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn write(trace: &Trace, tl: &Timeline, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{HEADER}")?;
    for (i, e) in trace.events.iter().enumerate() {
        let mm = tl.task_mm(e.tid);
        let tgid = trace
            .tasks
            .get(&e.tid)
            .and_then(|m| m.tgid)
            .or_else(|| tl.mm_info(mm).and_then(|m| m.tgid))
            .map_or(String::new(), |t| t.to_string());
        let cid = match e.kind {
            EventKind::RseqUpdate { mm_cid, .. } => mm_cid.to_string(),
            _ => String::new(),
        };
        writeln!(
            out,
            "{i},{},{},{},{},{},{tgid},{cid},{}",
            e.ts,
            e.known_cpu().map_or(String::new(), |c| c.to_string()),
            e.tid,
            quote(&trace.comm_of(e.tid)),
            quote(e.kind.name(&trace.strings)),
            quote(&e.describe(&trace.strings))
        )?;
    }
    Ok(())
}
