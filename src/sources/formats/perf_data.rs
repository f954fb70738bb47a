//! perf.data, file or pipe mode.

use crate::events::{Format, Trace, TraceDelta};
use crate::sources::binary::merge::stream_store;
use crate::sources::error::SourceError;
use crate::sources::file_format::{FileFormat, Priority, Sample};
use crate::sources::options::LoadOptions;
use crate::sources::perf_data;

pub use crate::sources::perf_data::PERF_DATA;

pub struct PerfData;

/// Bytes of memory a load takes per byte of a perf.data whose records are compressed.
const COMPRESSED_FACTOR: f64 = 8.0;

impl FileFormat for PerfData {
    fn format(&self) -> Format {
        PERF_DATA
    }
    fn cli_name(&self) -> &'static str {
        "perf-data"
    }
    fn cli_help(&self) -> &'static str {
        "perf.data"
    }
    fn sniff(&self, sample: &Sample) -> Option<usize> {
        // file and pipe mode, either byte order; version 1 too, to be refused by name
        let b = sample.bytes();
        [&b"PERFILE2"[..], b"2ELIFREP", b"PERFFILE", b"ELIFFREP"]
            .iter()
            .any(|m| b.starts_with(m))
            .then_some(0)
    }
    fn priority(&self) -> Priority {
        Priority::Magic
    }
    fn memory_factor(&self) -> f64 {
        // ~110 bytes per sample record
        0.8
    }
    fn memory_factor_of(&self, head: &[u8]) -> f64 {
        // `perf record -z` packs the records about tenfold (11.9 on a hackbench capture, whose
        // 3.5 MB file took 19 MB of memory beside its map: 5.5 bytes a byte)
        if perf_data::header::compressed(head) {
            COMPRESSED_FACTOR
        } else {
            self.memory_factor()
        }
    }
    fn stream(
        &self,
        name: &str,
        data: &[u8],
        opts: &LoadOptions,
        sink: &mut dyn FnMut(&mut TraceDelta) -> bool,
    ) -> Result<(), SourceError> {
        // Decoded whole (records are put in time order first) into a compact store, then
        // handed over in pieces: the whole capture is held once, at about 15 bytes an event.
        perf_data::decode(name, data, opts).map(|(t, evs)| stream_store(t, &evs, sink))
    }
    fn load(&self, name: &str, data: &[u8], opts: &LoadOptions) -> Result<Trace, SourceError> {
        perf_data::load(name, data, opts)
    }
}
