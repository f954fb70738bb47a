//! Tracepoint `format` files (`/sys/kernel/tracing/events/SYS/EVENT/format`), read from a live
//! tracefs or as stored in trace.dat files and in perf.data's tracing-data section:
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
//! Only what the decoder needs is kept: the name, the id, and each field's name, type, offset,
//! size, signedness and whether it is a `__data_loc` (dynamic) field.

/// One field of an event record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    /// The C type as the format file prints it, an array's `[N]` moved to it (`pid_t`,
    /// `char[16]`, `__data_loc char[]`).
    pub ctype: String,
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
    /// `__data_loc`/`__rel_loc`: the field holds `offset | len << 16` of data elsewhere.
    pub dynamic: bool,
    /// Declared as an array (`char prev_comm[16]`).
    pub array: bool,
}

impl Field {
    /// A fixed-size char array (a comm).
    pub fn is_char_array(&self) -> bool {
        self.array && self.ctype.starts_with("char")
    }
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

    /// Says that the format lacks field `name`, and which fields it has.
    pub fn lacks(&self, name: &str) -> String {
        format!(
            "the tracefs format of {}:{} has no field `{name}` (fields: {})",
            self.system,
            self.name,
            self.fields
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// The part of a `field:` line that is missing or malformed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldPart {
    /// `field:TYPE NAME`
    Declaration,
    Offset,
    Size,
}

/// Why a format file did not parse: what was expected, on which line (1-based; 0 for a field
/// line read on its own).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("expected \"ID: N\", found {text:?}")]
    BadId { line: usize, text: String },
    #[error("expected \"field:TYPE NAME; offset:N; size:N; signed:N;\", found {text:?}")]
    BadField {
        line: usize,
        text: String,
        part: FieldPart,
    },
    #[error("expected a \"name:\" line in the event format")]
    NoName,
    #[error("expected an \"ID:\" line in the format of event {event}")]
    NoId { event: String },
}

impl FormatError {
    /// The wording for a format file read from a live tracefs, which names the file's line.
    pub fn in_tracefs(&self) -> String {
        match self {
            FormatError::BadId { line, text } => {
                format!("line {line}: expected `ID: NUMBER`, found `{text}`")
            }
            FormatError::BadField { line, text, part } => match part {
                FieldPart::Declaration => {
                    format!("line {line}: expected `field:TYPE NAME;`, found `{text}`")
                }
                FieldPart::Offset => format!("line {line}: expected `offset:N;` in `{text}`"),
                FieldPart::Size => format!("line {line}: expected `size:N;` in `{text}`"),
            },
            FormatError::NoName => "expected a `name:` line".into(),
            FormatError::NoId { .. } => "expected an `ID:` line".into(),
        }
    }
}

/// Parses one format file; the error says what was expected.
pub fn parse(text: &[u8], system: &str) -> Result<EventFormat, FormatError> {
    let text = String::from_utf8_lossy(text);
    let mut name = None;
    let mut id = None;
    let mut fields = Vec::new();
    let mut print_fmt = String::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(v) = t.strip_prefix("name:") {
            name = Some(v.trim().to_string());
        } else if let Some(v) = t.strip_prefix("ID:") {
            id = Some(v.trim().parse::<u32>().map_err(|_| FormatError::BadId {
                line: i + 1,
                text: t.to_string(),
            })?);
        } else if t.starts_with("field:") {
            fields.push(parse_field_line(t).map_err(|e| match e {
                FormatError::BadField { text, part, .. } => FormatError::BadField {
                    line: i + 1,
                    text,
                    part,
                },
                e => e,
            })?);
        } else if let Some(v) = t.strip_prefix("print fmt:") {
            print_fmt = v.trim().to_string();
        }
    }
    let name = name.ok_or(FormatError::NoName)?;
    let id = id.ok_or_else(|| FormatError::NoId {
        event: name.clone(),
    })?;
    Ok(EventFormat {
        system: system.to_string(),
        name,
        id,
        fields,
        print_fmt,
    })
}

/// `field:char prev_comm[16];    offset:8;    size:16;    signed:0;`
pub fn parse_field_line(line: &str) -> Result<Field, FormatError> {
    let bad = |part| FormatError::BadField {
        line: 0,
        text: line.to_string(),
        part,
    };
    let mut parts = line.split(';').map(str::trim);
    let decl = parts
        .next()
        .and_then(|d| d.strip_prefix("field:"))
        .ok_or_else(|| bad(FieldPart::Declaration))?;
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
        .ok_or_else(|| bad(FieldPart::Declaration))?;
    // `__data_loc char[] name`: the name follows the brackets.
    let name = if dynamic {
        decl.rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .find(|s| !s.is_empty())
            .ok_or_else(|| bad(FieldPart::Declaration))?
    } else {
        name
    };
    Ok(Field {
        name: name.to_string(),
        ctype: ctype_of(decl),
        offset: offset.ok_or_else(|| bad(FieldPart::Offset))?,
        size: size.ok_or_else(|| bad(FieldPart::Size))?,
        signed,
        dynamic,
        array,
    })
}

/// The type of a declaration: all but its last word, with the word's `[N]` (`char prev_comm[16]`
/// → `char[16]`).
fn ctype_of(decl: &str) -> String {
    let Some((ty, name)) = decl.rsplit_once(' ') else {
        return String::new();
    };
    let mut ctype = ty.trim().to_string();
    if let Some(b) = name.find('[') {
        ctype.push_str(&name[b..]);
    }
    ctype
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
        // (a state of no bit names nothing: a format whose bits are all 0 reads as the
        // kernel's own table)
        flags.retain(|f| f.0 != 0);
        // TASK_REPORT_MAX is one above the highest reported state bit.
        let max = flags.iter().map(|f| f.0).max().unwrap_or(0);
        match max.checked_mul(2) {
            Some(preempt) if preempt > 0 => StateLetters { flags, preempt },
            _ => StateLetters::default(),
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
        assert_eq!(c.ctype, "char[16]");
        assert!(c.is_char_array() && !c.dynamic);
        assert_eq!(n.ctype, "__data_loc char[]");
        assert!(parse(b"ID: x\n", "s").is_err());
        assert!(
            parse(b"name: a\n", "s")
                .unwrap_err()
                .to_string()
                .contains("ID:")
        );
        assert!(parse(b"name: a\nID: 1\n\tfield:int x;\toffset:;\n", "s").is_err());
    }

    #[test]
    fn errors_in_either_wording() {
        let e = parse(b"name: x\nID: y\n", "s").unwrap_err();
        assert_eq!(e.to_string(), "expected \"ID: N\", found \"ID: y\"");
        assert_eq!(
            e.in_tracefs(),
            "line 2: expected `ID: NUMBER`, found `ID: y`"
        );
        let e = parse(b"name: x\nID: 1\n\tfield:int a;\tsize:4;\n", "s").unwrap_err();
        assert!(
            e.to_string().starts_with("expected \"field:TYPE NAME;"),
            "{e}"
        );
        assert_eq!(
            e.in_tracefs(),
            "line 3: expected `offset:N;` in `field:int a;\tsize:4;`"
        );
        let f = parse(SWITCH.as_bytes(), "sched").unwrap();
        assert!(
            f.lacks("nope")
                .starts_with("the tracefs format of sched:sched_switch has no field `nope` (fields: common_type, common_pid")
        );
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
        // a hostile format: bits of 0 name nothing, a top bit leaves no room for the preempted
        // mark; the kernel's own table then
        let zero = StateLetters::from_print_fmt("{ 0x00, \"S\" }, { 0x00, \"D\" }");
        assert_eq!(zero, StateLetters::default());
        let top = StateLetters::from_print_fmt("{ 0x8000000000000000, \"S\" }");
        assert_eq!(top, StateLetters::default());
    }
}
