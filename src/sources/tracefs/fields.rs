//! The fields cidscope reads of each event, found by name in its format file: those the
//! canonical event needs, and those only an ftrace line prints (a live recording's).

use crate::events::StrId;
use crate::sources::tracefs::format::{EventFormat, Field};

/// How a field's bytes hold its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Int,
    /// A fixed-size char array (comms).
    CharArray,
    /// `__data_loc`: `offset | len << 16` of bytes stored after the fields.
    DataLoc,
}

/// Where a field is in a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct F {
    pub offset: u32,
    pub size: u8,
    pub signed: bool,
    pub(super) kind: Kind,
}

impl F {
    pub(super) fn of(f: &Field) -> Option<F> {
        if f.size == 0 || f.size > 255 {
            return None;
        }
        let kind = if f.dynamic {
            Kind::DataLoc
        } else if f.is_char_array() {
            Kind::CharArray
        } else {
            Kind::Int
        };
        Some(F {
            offset: u32::try_from(f.offset).ok()?,
            size: f.size as u8,
            signed: f.signed,
            kind,
        })
    }
}

/// How to decode one event id. Fields an ftrace line prints but the canonical event does not
/// keep are optional: a capture read as events does without them.
#[derive(Clone, Debug)]
pub(super) enum Spec {
    Rseq {
        cpu_id: F,
        node_id: Option<F>,
        mm_cid: F,
    },
    IpFixup,
    Switch {
        prev_comm: Option<F>,
        prev_pid: F,
        prev_prio: Option<F>,
        prev_state: F,
        next_comm: F,
        next_pid: F,
        next_prio: F,
    },
    Migrate {
        comm: Option<F>,
        pid: F,
        prio: Option<F>,
        orig: F,
        dest: F,
    },
    Fork {
        parent_comm: Option<F>,
        parent: F,
        child_comm: Option<F>,
        child: F,
    },
    Newtask {
        pid: F,
        comm: Option<F>,
        flags: F,
        oom_score_adj: Option<F>,
    },
    Exec {
        filename: Option<F>,
        pid: F,
        old_pid: F,
    },
    Exit {
        comm: Option<F>,
        pid: F,
        prio: Option<F>,
        group_dead: Option<F>,
    },
    WakeupNew {
        pid: F,
        target: F,
    },
    Hrtimer {
        name: StrId,
        function: F,
        hrtimer: Option<F>,
        now: Option<F>,
    },
    TickStop {
        success: F,
        dependency: Option<F>,
    },
    Other {
        name: StrId,
    },
}

/// The decoding of one event id.
#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub(super) spec: Spec,
    /// The first field an ftrace line of this event needs that its format lacks.
    pub(super) missing: Option<&'static str>,
}

pub(super) fn field(fmt: &EventFormat, name: &str) -> Option<F> {
    fmt.field(name).and_then(F::of)
}

/// Looks fields up in one format, remembering the first that is missing among those an ftrace
/// line of the event prints.
struct Look<'a> {
    fmt: &'a EventFormat,
    missing: Option<&'static str>,
}

impl Look<'_> {
    /// A field the event needs: a number or a char array.
    fn fixed(&mut self, name: &'static str) -> Option<F> {
        let f = field(self.fmt, name).filter(|f| f.kind != Kind::DataLoc);
        self.note(name, f.is_some());
        f
    }
    /// A field only an ftrace line prints (a string may be stored after the fields).
    fn text(&mut self, name: &'static str) -> Option<F> {
        let f = self.fmt.field(name).and_then(F::of);
        self.note(name, f.is_some());
        f
    }
    fn optional(&self, name: &str) -> Option<F> {
        field(self.fmt, name)
    }
    fn note(&mut self, name: &'static str, found: bool) {
        if !found && self.missing.is_none() {
            self.missing = Some(name);
        }
    }
}

/// The fields of event `fmt` (whose name is interned as `name`): its decoding, `None` when the
/// format lacks a field the canonical event needs; and the first field an ftrace line of the
/// event prints that the format lacks.
pub(super) fn resolve(fmt: &EventFormat, name: StrId) -> (Option<Spec>, Option<&'static str>) {
    let mut l = Look { fmt, missing: None };
    // Fields in the order an ftrace line prints them, so `missing` names the first.
    let spec = match fmt.name.as_str() {
        "rseq_update" => {
            let cpu_id = l.fixed("cpu_id");
            let node_id = l.optional("node_id");
            let mm_cid = l.fixed("mm_cid");
            (|| {
                Some(Spec::Rseq {
                    cpu_id: cpu_id?,
                    node_id,
                    mm_cid: mm_cid?,
                })
            })()
        }
        "rseq_ip_fixup" => Some(Spec::IpFixup),
        "sched_switch" => {
            let prev_comm = l.text("prev_comm");
            let prev_pid = l.fixed("prev_pid");
            let prev_prio = l.text("prev_prio");
            let prev_state = l.fixed("prev_state");
            let next_comm = l.fixed("next_comm");
            let next_pid = l.fixed("next_pid");
            let next_prio = l.fixed("next_prio");
            (|| {
                Some(Spec::Switch {
                    prev_comm,
                    prev_pid: prev_pid?,
                    prev_prio,
                    prev_state: prev_state?,
                    next_comm: next_comm?,
                    next_pid: next_pid?,
                    next_prio: next_prio?,
                })
            })()
        }
        "sched_migrate_task" => {
            let comm = l.text("comm");
            let pid = l.fixed("pid");
            let prio = l.text("prio");
            let orig = l.fixed("orig_cpu");
            let dest = l.fixed("dest_cpu");
            (|| {
                Some(Spec::Migrate {
                    comm,
                    pid: pid?,
                    prio,
                    orig: orig?,
                    dest: dest?,
                })
            })()
        }
        "sched_process_fork" => {
            let parent_comm = l.text("parent_comm");
            let parent = l.fixed("parent_pid");
            let child_comm = l.text("child_comm");
            let child = l.fixed("child_pid");
            (|| {
                Some(Spec::Fork {
                    parent_comm,
                    parent: parent?,
                    child_comm,
                    child: child?,
                })
            })()
        }
        "task_newtask" => {
            let pid = l.fixed("pid");
            let comm = l.text("comm");
            let flags = l.fixed("clone_flags");
            let oom_score_adj = l.optional("oom_score_adj");
            (|| {
                Some(Spec::Newtask {
                    pid: pid?,
                    comm,
                    flags: flags?,
                    oom_score_adj,
                })
            })()
        }
        "sched_process_exec" => {
            let filename = l.text("filename");
            let pid = l.fixed("pid");
            let old_pid = l.fixed("old_pid");
            (|| {
                Some(Spec::Exec {
                    filename,
                    pid: pid?,
                    old_pid: old_pid?,
                })
            })()
        }
        "sched_process_exit" => {
            let comm = l.text("comm");
            let pid = l.fixed("pid");
            let prio = l.text("prio");
            let group_dead = l.optional("group_dead");
            pid.map(|pid| Spec::Exit {
                comm,
                pid,
                prio,
                group_dead,
            })
        }
        "sched_wakeup_new" => {
            let pid = l.fixed("pid");
            let target = l.fixed("target_cpu");
            (|| {
                Some(Spec::WakeupNew {
                    pid: pid?,
                    target: target?,
                })
            })()
        }
        "hrtimer_expire_entry" => l.fixed("function").map(|function| Spec::Hrtimer {
            name,
            function,
            hrtimer: l.optional("hrtimer"),
            now: l.optional("now"),
        }),
        "tick_stop" => l.fixed("success").map(|success| Spec::TickStop {
            success,
            dependency: l.optional("dependency"),
        }),
        // an event cidscope does not decode: counted by name, no line fields
        _ => return (Some(Spec::Other { name }), None),
    };
    for common in ["common_flags", "common_preempt_count", "common_pid"] {
        l.text(common);
    }
    (spec, l.missing)
}
