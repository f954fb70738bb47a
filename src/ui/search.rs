//! `/` search: by tid, comm or CID. The result is the list of matching event indices, which
//! `n`/`N` walk.

use super::error::InputError;
use crate::events::{EventKind, Tid, Trace};
use crate::model::MmId;
use crate::timeline::Timeline;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Query {
    /// `tid:N`: events of that task (its own records and switches to it).
    Tid(Tid),
    /// `tgid:N`: events of the tasks of process N (selects it).
    Tgid(Tid),
    /// `cid:N`: rseq_updates reporting that CID.
    Cid(i32),
    /// `comm:TEXT` or plain text: events of tasks whose comm contains it.
    Comm(String),
    /// A bare number: a tid if such a task exists, and a CID.
    Number(u32),
}

impl Query {
    pub fn parse(s: &str) -> Result<Query, InputError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(InputError::EmptySearch);
        }
        let num = |v: &str, what: &'static str| {
            v.trim().parse::<i64>().map_err(|_| InputError::NotANumber {
                what,
                found: v.to_string(),
            })
        };
        if let Some(v) = s.strip_prefix("tid:") {
            return Ok(Query::Tid(num(v, "tid")? as Tid));
        }
        if let Some(v) = s.strip_prefix("tgid:") {
            return Ok(Query::Tgid(num(v, "tgid")? as Tid));
        }
        if let Some(v) = s.strip_prefix("cid:") {
            return Ok(Query::Cid(num(v, "cid")? as i32));
        }
        if let Some(v) = s.strip_prefix("comm:") {
            return Ok(Query::Comm(v.to_string()));
        }
        if let Ok(n) = s.parse::<u32>() {
            return Ok(Query::Number(n));
        }
        Ok(Query::Comm(s.to_string()))
    }
}

impl Query {
    /// Whether the query names task `tid` itself (tid, tgid, comm), not only a CID it reports.
    pub fn names_task(&self, trace: &Trace, timeline: &Timeline, tid: Tid) -> bool {
        match self {
            Query::Tid(t) => tid == *t,
            Query::Number(n) => tid == *n && trace.tasks.contains_key(n),
            Query::Comm(c) => trace.comm_of(tid).contains(c.as_str()),
            Query::Tgid(g) => {
                trace.tasks.get(&tid).and_then(|m| m.tgid) == Some(*g)
                    || timeline.mm_info(timeline.task_mm(tid)).and_then(|i| i.tgid) == Some(*g)
            }
            Query::Cid(_) => false,
        }
    }

    /// Whether a match of this query picks the process of the task it matched (every query
    /// that names a task; CID matches stay in the process shown).
    pub fn selects_process(&self) -> bool {
        !matches!(self, Query::Cid(_))
    }
}

/// The task event `i` matched `q` through (its own task, or the task a switch runs next).
pub fn matched_task(trace: &Trace, timeline: &Timeline, q: &Query, i: usize) -> Option<Tid> {
    let e = trace.events.get(i)?;
    if q.names_task(trace, timeline, e.tid) {
        return Some(e.tid);
    }
    match e.kind {
        EventKind::SchedSwitch { next_tid, .. } if q.names_task(trace, timeline, next_tid) => {
            Some(next_tid)
        }
        _ => None,
    }
}

/// Matching event indices, in order; `mm` restricts CID matches to one process.
pub fn find(trace: &Trace, timeline: &Timeline, q: &Query, mm: Option<MmId>) -> Vec<u32> {
    let is_task = |tid: Tid| trace.tasks.contains_key(&tid);
    let comm_tids: Vec<Tid> = match q {
        Query::Comm(_) | Query::Tgid(_) => trace
            .tasks
            .keys()
            .copied()
            .filter(|&t| q.names_task(trace, timeline, t))
            .collect(),
        _ => Vec::new(),
    };
    let tid_wanted = |tid: Tid| match q {
        Query::Tid(t) => tid == *t,
        Query::Number(n) => is_task(*n) && tid == *n,
        Query::Comm(_) | Query::Tgid(_) => comm_tids.contains(&tid),
        Query::Cid(_) => false,
    };
    let cid_wanted = |cid: i32| match q {
        Query::Cid(c) => cid == *c,
        Query::Number(n) => cid as i64 == *n as i64,
        _ => false,
    };
    let in_mm = |tid: Tid| match mm {
        None => true,
        Some(m) => timeline.task_mm(tid) == m,
    };
    trace
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            let next = match e.kind {
                EventKind::SchedSwitch { next_tid, .. } => Some(next_tid),
                _ => None,
            };
            if tid_wanted(e.tid) || next.is_some_and(tid_wanted) {
                return true;
            }
            matches!(e.kind, EventKind::RseqUpdate { mm_cid, .. } if cid_wanted(mm_cid) && in_mm(e.tid))
        })
        .map(|(i, _)| i as u32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_syntax() {
        assert_eq!(Query::parse("tid:12"), Ok(Query::Tid(12)));
        assert_eq!(Query::parse(" cid:3 "), Ok(Query::Cid(3)));
        assert_eq!(Query::parse("42"), Ok(Query::Number(42)));
        assert_eq!(
            Query::parse("my worker"),
            Ok(Query::Comm("my worker".into()))
        );
        assert_eq!(Query::parse("comm:7"), Ok(Query::Comm("7".into())));
        assert_eq!(Query::parse("tgid:3082"), Ok(Query::Tgid(3082)));
        assert!(Query::parse("tgid:x").is_err());
        assert!(Query::parse("cid:x").is_err());
        assert!(Query::parse("  ").is_err());
    }
}
