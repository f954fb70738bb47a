//! tracefs in the guest: the events of the model captures, record-tgid, the tick filter, and a
//! non-blocking `trace_pipe` to stream from.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::events::Probe;

/// The events of `traces/capture-models.sh`, in the kernel's `system:event` names.
pub const EVENTS: &[&str] = &[
    "rseq:rseq_update",
    "sched:sched_switch",
    "sched:sched_migrate_task",
    "sched:sched_process_fork",
    "sched:sched_process_exec",
    "sched:sched_process_exit",
    "sched:sched_wakeup_new",
    "task:task_newtask",
    "timer:hrtimer_expire_entry",
    "timer:tick_stop",
    // (the wakeups whose target was polling, so no IPI was sent: data for T1, which the model
    // does not place differently yet; docs/models.md §11 item 9)
    "sched:sched_wake_idle_without_ipi",
];

/// Filters that keep only the scheduler tick among the hrtimer expiries: the handler is
/// `tick_nohz_handler` since 6.10 (`tick_sched_timer` before).
const TICK_FILTERS: &[&str] = &[
    "function.function == tick_nohz_handler",
    "function.function == tick_sched_timer",
];

pub struct Tracefs {
    pub root: PathBuf,
}

fn write(path: &Path, text: &str) -> io::Result<()> {
    let mut f = OpenOptions::new().write(true).truncate(true).open(path)?;
    f.write_all(text.as_bytes())
}

impl Tracefs {
    /// Mounts tracefs at `/sys/kernel/tracing` unless it is there.
    pub fn mount() -> Result<Tracefs, String> {
        let root = PathBuf::from("/sys/kernel/tracing");
        if !root.join("trace").exists() {
            super::super::sys::mount("nodev", "/sys/kernel/tracing", "tracefs")
                .map_err(|e| format!("mount -t tracefs nodev /sys/kernel/tracing: {e}"))?;
        }
        Ok(Tracefs { root })
    }

    fn path(&self, p: &str) -> PathBuf {
        self.root.join(p)
    }

    /// Buffer size, record-tgid, the events and the tick filter, and with `graph` the
    /// function_graph tracer on that function (absolute times, the task on every line); what
    /// could not be set is returned as warnings (an event this kernel lacks is not fatal,
    /// rseq_update is, and so is a graph function the kernel cannot trace).
    pub fn setup(
        &self,
        buffer_kb: u32,
        clock: Option<&str>,
        graph: Option<&str>,
        probes: bool,
    ) -> Result<Vec<String>, String> {
        let mut warn = Vec::new();
        let set = |p: &str, v: &str| {
            write(&self.path(p), v).map_err(|e| format!("{}: {e}", self.path(p).display()))
        };
        set("tracing_on", "0")?;
        if let Err(e) = set("buffer_size_kb", &buffer_kb.to_string()) {
            warn.push(format!("buffer_size_kb {buffer_kb}: {e}"));
        }
        set("options/record-tgid", "1")?;
        if let Some(c) = clock {
            set("trace_clock", c).map_err(|e| {
                format!("trace_clock {c}: {e} (the kernel offers: {})", self.clock())
            })?;
        }
        set("set_event", "")?;
        let mut set_event = OpenOptions::new()
            .append(true)
            .open(self.path("set_event"))
            .map_err(|e| format!("set_event: {e}"))?;
        for ev in EVENTS {
            if let Err(e) = set_event.write_all(format!("{ev}\n").as_bytes()) {
                if *ev == "rseq:rseq_update" {
                    return Err(format!(
                        "this kernel has no {ev} tracepoint ({e}): it needs CONFIG_RSEQ and Linux >= 6.3"
                    ));
                }
                warn.push(format!("event {ev} not enabled: {e}"));
            }
        }
        let filter = "events/timer/hrtimer_expire_entry/filter";
        if self.path(filter).exists() && !TICK_FILTERS.iter().any(|f| set(filter, f).is_ok()) {
            warn.push(
                "hrtimer_expire_entry: no tick filter took (tick_nohz_handler, tick_sched_timer): every hrtimer expiry is recorded".into(),
            );
        }
        if probes {
            warn.extend(self.define_probes());
        }
        if let Some(f) = graph {
            set("set_graph_function", f).map_err(|e| {
                format!("{e}: the kernel cannot trace {f} (CONFIG_FUNCTION_GRAPH_TRACER, available_filter_functions)")
            })?;
            set("options/funcgraph-abstime", "1")?;
            set("options/funcgraph-proc", "1")?;
            // interrupts inside a call are not drawn as its children (their time still counts
            // in its duration): what the call itself called tells a scan from an early exit
            if set("options/funcgraph-irqs", "0").is_err() {
                warn.push(
                    "options/funcgraph-irqs is missing: interrupt handlers show inside graph calls"
                        .into(),
                );
            }
            set("current_tracer", "function_graph")?;
        }
        set("trace", "")?;
        Ok(warn)
    }

    /// Defines and enables the CID probes this kernel has (each probe's first definition it
    /// takes: a function absent here, e.g. `sched_mm_cid_migrate_to` in 7.x, is no error); one
    /// line says which, for the capture's reader.
    fn define_probes(&self) -> Vec<String> {
        let path = self.path("dynamic_events");
        let mut defined = Vec::new();
        let mut absent = Vec::new();
        for p in Probe::ALL {
            // the rq lock is taken at every schedule: defined only where the owner-mode walks
            // it marks exist, and only for the tasks created from now on (the workload's)
            if p.is_lock() && !defined.contains(&Probe::FixupBack.name()) {
                continue;
            }
            let took = p.definitions().iter().any(|d| {
                OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .and_then(|mut f| f.write_all(format!("{d}\n").as_bytes()))
                    .is_ok()
            });
            if took {
                defined.push(p.name());
            } else {
                absent.push((p.name(), p.function()));
            }
        }
        let mut out = Vec::new();
        if defined.is_empty() {
            out.push(format!(
                "no CID probe could be defined ({}: CONFIG_FPROBE_EVENTS, CONFIG_PROBE_EVENTS_BTF_ARGS): the replay infers the untraced CID steps",
                path.display()
            ));
            return out;
        }
        let last = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok());
        for p in Probe::ALL.into_iter().filter(|p| p.is_lock()) {
            if !defined.contains(&p.name()) {
                continue;
            }
            // (and not in interrupts: TRACE_FLAG_HARDIRQ 0x08, SOFTIRQ 0x10, NMI 0x40)
            let filter = self.path(&format!("events/cidscope/{}/filter", p.name()));
            let filtered = last.is_some_and(|l| {
                write(
                    &filter,
                    &format!("common_pid > {l} && !(common_flags & 0x58)"),
                )
                .is_ok()
                    || write(&filter, &format!("common_pid > {l}")).is_ok()
            });
            if !filtered {
                // unfiltered it would record every schedule of every task
                // (appended: a truncating write would clear every dynamic event)
                let _ = OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .and_then(|mut f| f.write_all(format!("-:cidscope/{}\n", p.name()).as_bytes()));
                defined.retain(|&n| n != p.name());
                out.push(format!(
                    "{}: no pid filter could be set: not defined",
                    p.name()
                ));
            }
        }
        if let Err(e) = write(&self.path("events/cidscope/enable"), "1") {
            out.push(format!("CID probes defined but not enabled: {e}"));
            return out;
        }
        let mut line = format!("CID probes: {}", defined.join(" "));
        // (without BTF the probes take no argument by name: those that need one are left out
        // although their function is there, and the others read no count to compare)
        let btf = Path::new("/sys/kernel/btf/vmlinux").exists();
        let traceable = if btf {
            String::new()
        } else {
            std::fs::read_to_string(self.path("available_filter_functions")).unwrap_or_default()
        };
        let (need_btf, gone) = split_absent(&absent, btf, &traceable);
        if !gone.is_empty() {
            line += &format!("; not in this kernel: {}", gone.join(", "));
        }
        if !btf {
            line += "; this kernel has no BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF): the probes read no count or mm to compare";
            if !need_btf.is_empty() {
                line += &format!(
                    ", and these need BTF argument names: {}",
                    need_btf.join(", ")
                );
            }
        }
        out.push(line);
        out
    }

    /// `trace_clock` as tracefs shows it: the clocks, the one in use in brackets.
    pub fn clock(&self) -> String {
        std::fs::read_to_string(self.path("trace_clock"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|e| format!("unreadable ({e})"))
    }

    pub fn tracing_on(&self, on: bool) -> Result<(), String> {
        write(&self.path("tracing_on"), if on { "1" } else { "0" })
            .map_err(|e| format!("tracing_on: {e}"))
    }

    /// `trace_pipe`, non-blocking: a read of an empty buffer says WouldBlock instead of waiting.
    pub fn open_pipe(&self) -> Result<File, String> {
        OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(self.path("trace_pipe"))
            .map_err(|e| format!("trace_pipe: {e}"))
    }

    /// Events the ring buffers overwrote or dropped, over every CPU (`per_cpu/cpuN/stats`).
    pub fn lost(&self) -> u64 {
        let Ok(rd) = std::fs::read_dir(self.path("per_cpu")) else {
            return 0;
        };
        rd.filter_map(|e| e.ok())
            .filter_map(|e| std::fs::read_to_string(e.path().join("stats")).ok())
            .map(|s| parse_lost(&s))
            .sum()
    }
}

/// `overrun: N` plus `dropped events: N` of one `per_cpu/cpuN/stats` file.
pub fn parse_lost(stats: &str) -> u64 {
    stats
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "overrun" | "dropped events")
                .then(|| v.trim().parse::<u64>().ok())
                .flatten()
        })
        .sum()
}

/// The probes not defined, as "name (function)": those whose function the kernel can trace
/// (it is in `available_filter_functions`) when it has no BTF, and the others.
fn split_absent(absent: &[(&str, &str)], btf: bool, traceable: &str) -> (Vec<String>, Vec<String>) {
    let has = |f: &str| {
        traceable.lines().any(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|n| n == f || n.strip_prefix(f).is_some_and(|r| r.starts_with('.')))
        })
    };
    let (need, gone): (Vec<_>, Vec<_>) = absent.iter().partition(|(_, f)| !btf && has(f));
    let show = |v: Vec<&(&str, &str)>| v.iter().map(|(n, f)| format!("{n} ({f})")).collect();
    (show(need), show(gone))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without BTF a probe whose function the kernel traces is named as needing BTF (the
    /// seed-000 build: `sched_mm_cid_migrate_to` is there, `t->pid` is not readable); with it, or
    /// where the function is gone, it is not in this kernel.
    #[test]
    fn a_probe_left_out_for_want_of_btf_is_not_called_absent() {
        let absent = [
            ("cid_migrate_to", "sched_mm_cid_migrate_to"),
            ("cid_fixup_back", "mm_cid_fixup_cpus_to_tasks"),
            ("cid_switch_done", "finish_task_switch"),
        ];
        let traceable = "mmput\nsched_mm_cid_migrate_to\nfinish_task_switch.isra.0\nsched_mm_cid_migrate_to_x [m]\n";
        let (need, gone) = split_absent(&absent, false, traceable);
        assert_eq!(
            need,
            [
                "cid_migrate_to (sched_mm_cid_migrate_to)",
                "cid_switch_done (finish_task_switch)"
            ]
        );
        assert_eq!(gone, ["cid_fixup_back (mm_cid_fixup_cpus_to_tasks)"]);
        let (need, gone) = split_absent(&absent, true, traceable);
        assert!(need.is_empty());
        assert_eq!(gone.len(), 3);
    }

    #[test]
    fn lost_counts_from_per_cpu_stats() {
        let s = "entries: 120\noverrun: 3\ncommit overrun: 0\nbytes: 6000\noldest event ts:  1.0\nnow ts:  2.0\ndropped events: 4\nread events: 9\n";
        assert_eq!(parse_lost(s), 7);
        assert_eq!(parse_lost(""), 0);
    }
}
