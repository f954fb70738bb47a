//! trace-cmd trace.dat, versions 6 and 7.

use crate::events::{Format, Trace, TraceDelta};
use crate::sources::binary::merge::stream_store;
use crate::sources::error::SourceError;
use crate::sources::file_format::{BesidePass, FileFormat, Priority, Sample};
use crate::sources::options::LoadOptions;
use crate::sources::trace_dat;
use crate::sources::tracefs::tracing_data::MAGIC;

pub use crate::sources::trace_dat::TRACE_DAT;

pub struct TraceDat;

/// Bytes of memory a load takes per byte of a trace.dat whose data is compressed.
const COMPRESSED_FACTOR: f64 = 8.0;

impl FileFormat for TraceDat {
    fn format(&self) -> Format {
        TRACE_DAT
    }
    fn cli_name(&self) -> &'static str {
        "trace-dat"
    }
    fn cli_help(&self) -> &'static str {
        "trace-cmd trace.dat"
    }
    fn sniff(&self, sample: &Sample) -> Option<usize> {
        sample.bytes().starts_with(MAGIC).then_some(0)
    }
    fn priority(&self) -> Priority {
        Priority::Magic
    }
    fn memory_factor(&self) -> f64 {
        // ~30 bytes per ring-buffer record; the file's own pages (mapped) included
        2.5
    }
    fn memory_factor_of(&self, head: &[u8]) -> f64 {
        // trace-cmd's zstd packs ring pages 5-9 fold, and a load holds their events packed
        // (about 15 bytes each) beside the mapped file: a peak RSS of 4.6 and 6.3 times the
        // file, the map included, on zstd files of 8.0 and 10.8 MB, where 2.5 was assumed
        match trace_dat::layout::codec_of(head) {
            Some(c) if c != trace_dat::compress::Codec::None => COMPRESSED_FACTOR,
            _ => self.memory_factor(),
        }
    }
    fn stream(
        &self,
        name: &str,
        data: &[u8],
        opts: &LoadOptions,
        sink: &mut dyn FnMut(&mut TraceDelta) -> bool,
    ) -> Result<(), SourceError> {
        // Decoded whole into a compact store (each CPU's records merged in time order as
        // they are decoded), then handed over in pieces: held once, at about 15 bytes an event.
        let mut t = trace_dat::load(name, data, opts)?;
        let store = std::mem::take(&mut t.events);
        stream_store(t, &store, sink);
        Ok(())
    }
    fn load(&self, name: &str, data: &[u8], opts: &LoadOptions) -> Result<Trace, SourceError> {
        trace_dat::load(name, data, opts)
    }

    fn load_beside(
        &self,
        name: &str,
        data: &[u8],
        opts: &LoadOptions,
        beside: &BesidePass<'_>,
    ) -> Result<(Trace, bool), SourceError> {
        trace_dat::load_beside(name, data, opts, beside)
    }
}
