//! Tracepoint `format` files (`/sys/kernel/tracing/events/SYS/EVENT/format`), as stored in
//! trace.dat files and in perf.data's tracing-data section:
//!
//! ```text
//! name: sched_switch
//! ID: 372
//! format:
//!     field:unsigned short common_type;    offset:0;    size:2;    signed:0;
//!     field:char prev_comm[16];    offset:8;    size:16;    signed:0;
//! print fmt: "prev_comm=%s ...", REC->prev_comm, ...
//! ```
//!
//! Only what the decoder needs is kept: the name, the id, and each field's name, offset, size,
//! signedness and whether it is a `__data_loc` (dynamic) field.

/// One field of an event record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
    /// `__data_loc`/`__rel_loc`: the field holds `offset | len << 16` of data elsewhere.
    pub dynamic: bool,
    /// Declared as an array (`char prev_comm[16]`).
    pub array: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventFormat {
    pub system: String,
    pub name: String,
    pub id: u32,
    pub fields: Vec<Field>,
    pub print_fmt: String,
}

impl EventFormat {
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// Parses one format file; the error says what was expected.
pub fn parse(text: &[u8], system: &str) -> Result<EventFormat, String> {
    let text = String::from_utf8_lossy(text);
    let mut name = None;
    let mut id = None;
    let mut fields = Vec::new();
    let mut print_fmt = String::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(v) = t.strip_prefix("name:") {
            name = Some(v.trim().to_string());
        } else if let Some(v) = t.strip_prefix("ID:") {
            id = Some(
                v.trim()
                    .parse::<u32>()
                    .map_err(|_| format!("expected \"ID: N\", found {t:?}"))?,
            );
        } else if t.starts_with("field:") {
            fields.push(parse_field_line(t)?);
        } else if let Some(v) = t.strip_prefix("print fmt:") {
            print_fmt = v.trim().to_string();
        }
    }
    let name = name.ok_or("expected a \"name:\" line in the event format")?;
    let id = id.ok_or_else(|| format!("expected an \"ID:\" line in the format of event {name}"))?;
    Ok(EventFormat {
        system: system.to_string(),
        name,
        id,
        fields,
        print_fmt,
    })
}

/// `field:char prev_comm[16];    offset:8;    size:16;    signed:0;`
pub fn parse_field_line(line: &str) -> Result<Field, String> {
    let bad =
        || format!("expected \"field:TYPE NAME; offset:N; size:N; signed:N;\", found {line:?}");
    let mut parts = line.split(';').map(str::trim);
    let decl = parts
        .next()
        .and_then(|d| d.strip_prefix("field:"))
        .ok_or_else(bad)?;
    let (mut offset, mut size, mut signed) = (None, None, false);
    for p in parts {
        if let Some(v) = p.strip_prefix("offset:") {
            offset = v.trim().parse::<usize>().ok();
        } else if let Some(v) = p.strip_prefix("size:") {
            size = v.trim().parse::<usize>().ok();
        } else if let Some(v) = p.strip_prefix("signed:") {
            signed = v.trim() == "1";
        }
    }
    let decl = decl.trim();
    let dynamic = decl.starts_with("__data_loc") || decl.starts_with("__rel_loc");
    // The name is the last identifier, before any `[N]`.
    let base = match decl.find('[') {
        Some(b) if !dynamic => &decl[..b],
        _ => decl,
    };
    let array = decl.contains('[') && !dynamic;
    let name = base
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|s| !s.is_empty())
        .ok_or_else(bad)?;
    // `__data_loc char[] name`: the name follows the brackets.
    let name = if dynamic {
        decl.rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .find(|s| !s.is_empty())
            .ok_or_else(bad)?
    } else {
        name
    };
    Ok(Field {
        name: name.to_string(),
        offset: offset.ok_or_else(bad)?,
        size: size.ok_or_else(bad)?,
        signed,
        dynamic,
        array,
    })
}

/// The `prev_state` letters of `sched_switch`, read from its print fmt:
/// `__print_flags(..., "|", { 0x00000001, "S" }, { 0x00000002, "D" }, ...) : "R"` and
/// `REC->prev_state & (MAX) ? "+" : ""`. Falls back to the table of kernels 4.14+.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateLetters {
    /// (bit, letter) in the order the kernel prints them.
    pub flags: Vec<(u64, u8)>,
    /// The bit printed as `+` (preempted); bits below it are the state.
    pub preempt: u64,
}

impl Default for StateLetters {
    fn default() -> Self {
        StateLetters {
            flags: b"SDTtXZPI"
                .iter()
                .enumerate()
                .map(|(i, &c)| (1u64 << i, c))
                .collect(),
            preempt: 0x100,
        }
    }
}

impl StateLetters {
    pub fn from_print_fmt(fmt: &str) -> StateLetters {
        let mut flags = Vec::new();
        let mut rest = fmt;
        while let Some(p) = rest.find("{ 0x") {
            rest = &rest[p + 2..];
            let Some(comma) = rest.find(',') else { break };
            let Ok(bit) = u64::from_str_radix(rest[2..comma].trim(), 16) else {
                continue;
            };
            let after = &rest[comma + 1..];
            let Some(q) = after.find('"') else { break };
            let Some(&letter) = after.as_bytes().get(q + 1) else {
                break;
            };
            flags.push((bit, letter));
        }
        if flags.is_empty() {
            return StateLetters::default();
        }
        // TASK_REPORT_MAX is one above the highest reported state bit.
        let max = flags.iter().map(|f| f.0).max().unwrap_or(0x80);
        StateLetters {
            flags,
            preempt: max << 1,
        }
    }

    /// `prev_state` value → the letters the kernel prints (`S`, `R+`, `D|W`...): first letter
    /// and the preempted mark are what [`crate::events::PrevState`] keeps.
    pub fn letters(&self, state: u64) -> (u8, bool) {
        let masked = state & (self.preempt - 1);
        let first = self
            .flags
            .iter()
            .find(|(bit, _)| masked & bit != 0)
            .map_or(b'R', |f| f.1);
        let first = if masked == 0 { b'R' } else { first };
        (first, state & self.preempt != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "name: sched_switch\nID: 372\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\tfield:__data_loc char[] name;\toffset:56;\tsize:4;\tsigned:0;\n\nprint fmt: \"prev_state=%s%s\", (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001) + 1) << 1) - 1), \"|\", { 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, { 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", REC->prev_state & (((0x00000000 | 0x00000040) + 1) << 1) ? \"+\" : \"\"\n";

    #[test]
    fn parses_fields_from_the_file() {
        let f = parse(SWITCH.as_bytes(), "sched").unwrap();
        assert_eq!((f.name.as_str(), f.id), ("sched_switch", 372));
        let c = f.field("prev_comm").unwrap();
        assert_eq!((c.offset, c.size, c.signed, c.array), (8, 16, false, true));
        let s = f.field("prev_state").unwrap();
        assert_eq!((s.offset, s.size, s.signed), (32, 8, true));
        let n = f.field("name").unwrap();
        assert!(n.dynamic);
        assert_eq!(n.offset, 56);
        assert!(parse(b"ID: x\n", "s").is_err());
        assert!(parse(b"name: a\n", "s").unwrap_err().contains("ID:"));
        assert!(parse(b"name: a\nID: 1\n\tfield:int x;\toffset:;\n", "s").is_err());
    }

    #[test]
    fn prev_state_letters_come_from_the_print_fmt() {
        let f = parse(SWITCH.as_bytes(), "sched").unwrap();
        let l = StateLetters::from_print_fmt(&f.print_fmt);
        assert_eq!(l, StateLetters::default());
        assert_eq!(l.letters(0), (b'R', false));
        assert_eq!(l.letters(0x100), (b'R', true));
        assert_eq!(l.letters(1), (b'S', false));
        assert_eq!(l.letters(2), (b'D', false));
        assert_eq!(l.letters(0x80), (b'I', false));
        assert_eq!(l.letters(0x10), (b'X', false));
        let old = StateLetters::from_print_fmt("{ 0x01, \"S\" }, { 0x400, \"N\" }");
        assert_eq!(old.preempt, 0x800);
        assert_eq!(old.letters(0x800), (b'R', true));
    }
}
