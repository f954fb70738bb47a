//! Event attributes (`perf_event_attr`, parsed by linux-perf-event-reader), their sample ids, and
//! which attribute a record belongs to (`PERF_SAMPLE_IDENTIFIER` / `PERF_SAMPLE_ID` with
//! `sample_id_all`, as perf itself decides).

use super::header::{FileHeader, section_bytes};
use crate::sources::binary::cursor::{BinError, BinResult, Cursor};
use byteorder::{BigEndian, LittleEndian};
use linux_perf_event_reader::{
    AttrFlags, Endianness, PerfEventAttr, PerfEventType, RawData, RecordIdParseInfo,
    RecordParseInfo, RecordType, SampleFormat, get_record_id, get_record_identifier,
};
use rustc_hash::FxHashMap;

#[derive(Clone, Debug)]
pub struct Attr {
    pub attr: PerfEventAttr,
    pub parse: RecordParseInfo,
    pub ids: Vec<u64>,
    /// From EVENT_DESC (`sched:sched_switch`), when present.
    pub name: Option<String>,
    /// Its samples hold nothing after PERF_SAMPLE_RAW: [`super::records::SampleFields::read`]
    /// reads them.
    pub fast_sample: bool,
}

impl Attr {
    pub fn new(attr: PerfEventAttr, ids: Vec<u64>, big: bool) -> Attr {
        let endian = if big {
            Endianness::BigEndian
        } else {
            Endianness::LittleEndian
        };
        Attr {
            parse: RecordParseInfo::new(&attr, endian),
            fast_sample: super::records::SampleFields::covers(attr.sample_format),
            attr,
            ids,
            name: None,
        }
    }

    /// The tracepoint id (`config` of a `PERF_TYPE_TRACEPOINT` event).
    pub fn tracepoint_id(&self) -> Option<u32> {
        match self.attr.type_ {
            PerfEventType::Tracepoint(id) => u32::try_from(id).ok(),
            _ => None,
        }
    }
}

fn parse_attr(bytes: &[u8], big: bool) -> std::io::Result<(PerfEventAttr, u64)> {
    if big {
        PerfEventAttr::parse::<_, BigEndian>(bytes)
    } else {
        PerfEventAttr::parse::<_, LittleEndian>(bytes)
    }
}

/// The attrs section of a file: `attr_size` bytes each, the attr then its ids section.
pub fn read_file_attrs(data: &[u8], h: &FileHeader, big: bool) -> BinResult<Vec<Attr>> {
    let bytes = section_bytes(data, h.attrs, "attrs section")?;
    let n = h.attr_size as usize;
    if !(16 + 64..=4096).contains(&n) {
        return Err(BinError::new(
            16,
            format!("expected an attr entry size between 80 and 4096 bytes, found {n}"),
        ));
    }
    let mut out = Vec::new();
    for (k, entry) in bytes.chunks_exact(n).enumerate() {
        let at = h.attrs.offset + (k * n) as u64;
        let (attr, _) = parse_attr(&entry[..n - 16], big)
            .map_err(|e| BinError::new(at, format!("expected a perf_event_attr here: {e}")))?;
        let mut c = Cursor::new(entry, big).at(n - 16);
        let ids_off = c.u64("the ids offset")?;
        let ids_size = c.u64("the ids size")?;
        let ids_bytes = section_bytes(
            data,
            super::header::Section {
                offset: ids_off,
                size: ids_size,
            },
            "event ids of an attr",
        )?;
        let ids = ids_bytes
            .chunks_exact(8)
            .map(|b| crate::sources::binary::cursor::read_u64(b, big))
            .collect();
        out.push(Attr::new(attr, ids, big));
    }
    Ok(out)
}

/// Why the event attributes cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AttrError {
    #[error("expected a perf_event_attr: {0}")]
    Unreadable(String),
    #[error("expected at least one event attribute, found none")]
    None,
    #[error(
        "the events' sample formats differ and not all carry PERF_SAMPLE_IDENTIFIER: records cannot be matched to their events"
    )]
    Unmatchable,
}

/// A pipe-mode `PERF_RECORD_HEADER_ATTR` body: the attr, then its ids.
pub fn parse_header_attr(body: &[u8], big: bool) -> Result<Attr, AttrError> {
    let (attr, size) = parse_attr(body, big).map_err(|e| AttrError::Unreadable(e.to_string()))?;
    let ids = body
        .get(size as usize..)
        .unwrap_or(&[])
        .chunks_exact(8)
        .map(|b| crate::sources::binary::cursor::read_u64(b, big))
        .collect();
    Ok(Attr::new(attr, ids, big))
}

/// `HEADER_EVENT_DESC`: `u32 nr, u32 attr_size`, then per event the attr, `u32 nr_ids`, a perf
/// string (`u32 len` + bytes) and the ids. Returns (name, ids) per event.
pub fn event_desc(body: &[u8], big: bool) -> Vec<(String, Vec<u64>)> {
    let mut c = Cursor::new(body, big);
    let mut out = Vec::new();
    let (Ok(nr), Ok(attr_size)) = (c.u32("nr"), c.u32("attr size")) else {
        return out;
    };
    for _ in 0..nr {
        let r = (|| -> BinResult<(String, Vec<u64>)> {
            c.skip(attr_size as usize, "an attr")?;
            let nr_ids = c.u32("nr ids")?;
            let len = c.u32("string length")?;
            let s = c.bytes(len as usize, "event name")?;
            let s = &s[..memchr::memchr(0, s).unwrap_or(s.len())];
            let mut ids = Vec::new();
            for _ in 0..nr_ids {
                ids.push(c.u64("an id")?);
            }
            Ok((String::from_utf8_lossy(s).into_owned(), ids))
        })();
        match r {
            Ok(e) => out.push(e),
            Err(_) => break,
        }
    }
    out
}

/// How to find a record's attr.
#[derive(Clone, Debug)]
pub enum IdMode {
    One,
    Same(RecordIdParseInfo),
    /// Every attr has IDENTIFIER; the bool is `sample_id_all`.
    Identifier(bool),
}

#[derive(Clone, Debug)]
pub struct Attrs {
    pub list: Vec<Attr>,
    by_id: FxHashMap<u64, usize>,
    mode: IdMode,
    big: bool,
}

impl Attrs {
    pub fn new(list: Vec<Attr>, big: bool) -> Result<Attrs, AttrError> {
        let mut by_id = FxHashMap::default();
        for (i, a) in list.iter().enumerate() {
            for &id in &a.ids {
                by_id.insert(id, i);
            }
        }
        let mode = match list.split_first() {
            None => return Err(AttrError::None),
            Some((_, [])) => IdMode::One,
            Some((first, rest)) => {
                let fi = first.parse.id_parse_info;
                if rest.iter().all(|a| a.parse.id_parse_info == fi) {
                    IdMode::Same(fi)
                } else {
                    let all_id = list
                        .iter()
                        .all(|a| a.attr.sample_format.contains(SampleFormat::IDENTIFIER));
                    let sid = first.attr.flags.contains(AttrFlags::SAMPLE_ID_ALL);
                    if !all_id
                        || list
                            .iter()
                            .any(|a| a.attr.flags.contains(AttrFlags::SAMPLE_ID_ALL) != sid)
                    {
                        return Err(AttrError::Unmatchable);
                    }
                    IdMode::Identifier(sid)
                }
            }
        };
        Ok(Attrs {
            list,
            by_id,
            mode,
            big,
        })
    }

    /// The attr of a kernel record (`None` when its id is unknown).
    pub fn of_record(&self, record_type: u32, body: &[u8]) -> Option<usize> {
        let rt = RecordType(record_type);
        let data = RawData::Single(body);
        let id = match &self.mode {
            IdMode::One => return Some(0),
            IdMode::Same(info) => {
                if self.big {
                    get_record_id::<BigEndian>(rt, data, info)
                } else {
                    get_record_id::<LittleEndian>(rt, data, info)
                }
            }
            IdMode::Identifier(sid) => {
                if self.big {
                    get_record_identifier::<BigEndian>(rt, data, *sid)
                } else {
                    get_record_identifier::<LittleEndian>(rt, data, *sid)
                }
            }
        };
        match id {
            // perf synthesizes the records of existing threads with id 0: the first event's.
            Some(0) => Some(0),
            Some(id) => self.by_id.get(&id).copied(),
            // Without ids every record parses alike: the first attr describes it.
            None => matches!(self.mode, IdMode::Same(_)).then_some(0),
        }
    }

    pub fn name_events(&mut self, desc: &[(String, Vec<u64>)]) {
        for (name, ids) in desc {
            for a in self.list.iter_mut() {
                if a.name.is_none() && ids.iter().any(|i| a.ids.contains(i)) {
                    a.name = Some(name.clone());
                }
            }
        }
    }
}
