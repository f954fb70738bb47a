//! What the binary readers (trace.dat and perf.data) share: a bounds-checked byte cursor whose
//! errors carry file offsets, the merge of per-CPU event lists in time order, and telling the
//! scheduler tick apart when no kallsyms names it.

pub mod cursor;
pub mod merge;
pub mod tick;
