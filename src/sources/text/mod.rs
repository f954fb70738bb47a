//! Line-oriented text captures: the ftrace family (`trace`, `trace_pipe`, `trace-cmd report`)
//! and `perf script`, parsed line by line ([`chunk::LineParser`]) by one driver that splits the
//! input into chunks, parses them on every core and stitches them in order ([`driver`]). Event
//! payloads are read from the printed `key=value` fields ([`payload`]).

pub mod bom;
pub mod chunk;
pub mod columns;
pub mod driver;
pub mod dups;
pub mod ftrace;
pub mod header;
pub mod html;
pub mod parse;
pub mod payload;
pub mod perf_script;
pub mod perf_tally;
pub mod pieces;
pub mod scan;
pub mod shapes;
