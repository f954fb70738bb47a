//! The buffers of a trace.dat beside the one read: `trace-cmd record -B NAME` records each
//! instance into a buffer of its own. One buffer is read as the capture (the top-level one,
//! or the instance `--instance NAME` names); the others are walked only to count their
//! events, so the warning says exactly what was not loaded and how to load it.

use super::layout::{Buffer, CpuRef, Layout, SEC_COMPRESSED};
use crate::sources::binary::cursor::{BinError, BinResult, Cursor};
use crate::sources::trace_dat::compress::Codec;

/// The buffer's name as messages show it.
pub fn shown(b: &Buffer) -> String {
    if b.name.is_empty() {
        "the top-level buffer".into()
    } else {
        format!("the instance buffer {:?}", b.name)
    }
}

/// Makes `name` the buffer read (`""`: the top-level one); the one read before joins the
/// others. An error lists the buffers the file has.
pub fn select(data: &[u8], l: &mut Layout, name: &str) -> BinResult<()> {
    if l.buffer.name == name {
        return Ok(());
    }
    let Some(i) = l.others.iter().position(|b| b.name == name) else {
        let mut names: Vec<String> = std::iter::once(&l.buffer)
            .chain(&l.others)
            .map(|b| format!("{:?}", b.name))
            .collect();
        names.sort();
        return Err(BinError::new(
            0,
            format!(
                "--instance {name:?}: the file has no such buffer (its buffers: {}; \"\" is the top-level one)",
                names.join(", ")
            ),
        ));
    };
    let b = l.others.swap_remove(i);
    let b = prepare(data, l, b)?;
    let before = std::mem::replace(&mut l.buffer, b);
    // (the one read before is ready to read: kept as it is, marked by its CPU table)
    l.others.push(before);
    Ok(())
}

/// An instance buffer as its option gives it, made readable: version 6 points at a
/// `flyrecord\0` table of (offset, size) per CPU; version 7 at a flyrecord section header
/// (its flags say whether the data is compressed), followed by its CPUs' places.
pub fn prepare(data: &[u8], l: &Layout, mut b: Buffer) -> BinResult<Buffer> {
    let big = l.initial.big_endian;
    if b.ready {
        return Ok(b);
    }
    let Some(head) = b.cpus.first().cloned() else {
        return Err(BinError::new(
            0,
            format!("{} has no place in the file", shown(&b)),
        ));
    };
    let at = usize::try_from(head.offset).unwrap_or(usize::MAX);
    if at >= data.len() {
        return Err(BinError::new(
            head.offset,
            format!(
                "{} lies beyond the end of the file ({} bytes)",
                shown(&b),
                data.len()
            ),
        ));
    }
    let mut c = Cursor::new(data, big).at(at);
    if l.version == 6 {
        let kind = c.bytes(10, "\"flyrecord\\0\"")?;
        if !kind.starts_with(b"flyrecord") {
            return Err(c.error(format!(
                "expected \"flyrecord\\0\" where {} starts",
                shown(&b)
            )));
        }
        let ncpus = l.buffer.cpus.len().max(l.ncpus.unwrap_or(0) as usize);
        b.cpus.clear();
        for cpu in 0..ncpus {
            b.cpus.push(CpuRef::read(&mut c, cpu as u16)?);
        }
        b.page_size = l.initial.page_size;
        b.ready = true;
        return Ok(b);
    }
    b.cpus.remove(0);
    let _id = c.u16("the flyrecord section id")?;
    let flags = c.u16("the flyrecord section flags")?;
    b.compressed = flags & SEC_COMPRESSED != 0 && l.codec != Codec::None;
    if b.page_size == 0 {
        b.page_size = l.initial.page_size;
    }
    b.ready = true;
    Ok(b)
}
