//! tracefs: where it is mounted, and the `events/SYSTEM/EVENT/format` files that give each
//! tracepoint's id and field layout. Field offsets always come from these files, never from
//! constants, so a kernel that moves a field keeps working.

use super::LiveError;
use std::path::{Path, PathBuf};

/// One field of a tracepoint record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    /// The C type as the format file prints it (`pid_t`, `char[16]`, `__data_loc char[]`).
    pub ctype: String,
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
}

impl Field {
    /// `__data_loc` fields hold (length << 16 | offset) of a string stored after the fields.
    pub fn is_data_loc(&self) -> bool {
        self.ctype.starts_with("__data_loc")
    }
    /// Fixed-size char arrays (comms).
    pub fn is_char_array(&self) -> bool {
        self.ctype.starts_with("char") && self.ctype.contains('[')
    }
}

/// A parsed `format` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventFormat {
    pub system: String,
    pub name: String,
    pub id: u64,
    pub fields: Vec<Field>,
}

impl EventFormat {
    pub fn field(&self, name: &str) -> Result<&Field, String> {
        self.fields.iter().find(|f| f.name == name).ok_or_else(|| {
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
        })
    }
}

/// Parses the text of `events/SYSTEM/EVENT/format`.
pub fn parse_format(system: &str, text: &str) -> Result<EventFormat, String> {
    let mut name = None;
    let mut id = None;
    let mut fields = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(v) = t.strip_prefix("name:") {
            name = Some(v.trim().to_string());
        } else if let Some(v) = t.strip_prefix("ID:") {
            id = Some(
                v.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("line {}: expected `ID: NUMBER`, found `{t}`", i + 1))?,
            );
        } else if t.starts_with("field:") {
            fields.push(parse_field(t).map_err(|e| format!("line {}: {e}", i + 1))?);
        }
    }
    Ok(EventFormat {
        system: system.to_string(),
        name: name.ok_or("expected a `name:` line")?,
        id: id.ok_or("expected an `ID:` line")?,
        fields,
    })
}

/// `field:pid_t prev_pid; offset:24; size:4; signed:1;` (tab-separated)
fn parse_field(t: &str) -> Result<Field, String> {
    let mut decl = None;
    let (mut offset, mut size, mut signed) = (None, None, false);
    for part in t.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        if let Some(v) = part.strip_prefix("field:") {
            decl = Some(v.trim());
        } else if let Some(v) = part.strip_prefix("offset:") {
            offset = v.trim().parse::<usize>().ok();
        } else if let Some(v) = part.strip_prefix("size:") {
            size = v.trim().parse::<usize>().ok();
        } else if let Some(v) = part.strip_prefix("signed:") {
            signed = v.trim() == "1";
        }
    }
    let decl = decl.ok_or_else(|| format!("expected `field:TYPE NAME;`, found `{t}`"))?;
    // The name is the last word, with any `[N]` array suffix moved to the type.
    let (ty, mut name) = decl
        .rsplit_once(' ')
        .ok_or_else(|| format!("expected `field:TYPE NAME;`, found `{t}`"))?;
    let mut ctype = ty.trim().to_string();
    if let Some(b) = name.find('[') {
        ctype.push_str(&name[b..]);
        name = &name[..b];
    }
    Ok(Field {
        name: name.to_string(),
        ctype,
        offset: offset.ok_or_else(|| format!("expected `offset:N;` in `{t}`"))?,
        size: size.ok_or_else(|| format!("expected `size:N;` in `{t}`"))?,
        signed,
    })
}

/// A usable tracefs mount.
#[derive(Clone, Debug)]
pub struct Tracefs {
    pub root: PathBuf,
}

const DEFAULT_MOUNT: &str = "/sys/kernel/tracing";

fn tracefs_fix() -> String {
    format!(
        "run cidscope as root, or mount tracefs and give your user read access to its events: \
         `sudo mount -t tracefs nodev {DEFAULT_MOUNT}` (add `-o mode=755` or `gid=GROUP`)"
    )
}

impl Tracefs {
    /// Finds tracefs; mounts it at /sys/kernel/tracing when it is missing and `mount` is allowed
    /// (root). Errors name the fix.
    pub fn locate(mount: bool) -> Result<Tracefs, LiveError> {
        if let Some(t) = Self::find_mounted() {
            return Ok(t);
        }
        let root = PathBuf::from(DEFAULT_MOUNT);
        if mount {
            match super::sys::mount_tracefs(&root) {
                Ok(()) => return Ok(Tracefs { root }),
                Err(e) => {
                    return Err(LiveError::NoTracefs {
                        detail: format!(
                            "tracefs is not mounted and mounting it at {DEFAULT_MOUNT} failed: {e}"
                        ),
                        fix: tracefs_fix(),
                    });
                }
            }
        }
        if super::sys::geteuid() != 0 {
            // Only root can mount it: the fix is privileges.
            return Err(LiveError::NoPermission {
                detail: format!(
                    "tracefs is not mounted (or not reachable) at {DEFAULT_MOUNT}, and only root can mount it"
                ),
            });
        }
        Err(LiveError::NoTracefs {
            detail: format!("tracefs is not mounted (or not readable) at {DEFAULT_MOUNT}"),
            fix: tracefs_fix(),
        })
    }

    fn find_mounted() -> Option<Tracefs> {
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let mut candidates: Vec<PathBuf> = mounts
            .lines()
            .filter_map(|l| {
                let mut it = l.split_whitespace();
                let (_dev, dir, fs) = (it.next()?, it.next()?, it.next()?);
                (fs == "tracefs").then(|| PathBuf::from(dir.replace("\\040", " ")))
            })
            .collect();
        candidates.push(PathBuf::from("/sys/kernel/debug/tracing"));
        candidates
            .into_iter()
            .find(|p| p.join("events").is_dir() || p.join("trace").exists())
            .map(|root| Tracefs { root })
    }

    /// Reads and parses `events/SYSTEM/NAME/format`; `Ok(None)` when the event does not exist.
    pub fn event_format(&self, system: &str, name: &str) -> Result<Option<EventFormat>, LiveError> {
        let path = self
            .root
            .join("events")
            .join(system)
            .join(name)
            .join("format");
        match std::fs::read_to_string(&path) {
            Ok(text) => parse_format(system, &text)
                .map(Some)
                .map_err(|e| LiveError::Format {
                    path: path.display().to_string(),
                    detail: e,
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A missing event is fine (tick_stop is optional); an unreadable tree is not.
                if can_read_dir(&self.root.join("events")) {
                    Ok(None)
                } else {
                    Err(no_access(&path, &e))
                }
            }
            Err(e) => Err(no_access(&path, &e)),
        }
    }
}

fn can_read_dir(p: &Path) -> bool {
    std::fs::read_dir(p).is_ok()
}

fn no_access(path: &Path, e: &std::io::Error) -> LiveError {
    LiveError::NoPermission {
        detail: format!("cannot read {}: {e}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "name: sched_switch
ID: 372
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:char prev_comm[16];	offset:8;	size:16;	signed:0;
	field:pid_t prev_pid;	offset:24;	size:4;	signed:1;
	field:int prev_prio;	offset:28;	size:4;	signed:1;
	field:long prev_state;	offset:32;	size:8;	signed:1;
	field:char next_comm[16];	offset:40;	size:16;	signed:0;
	field:pid_t next_pid;	offset:56;	size:4;	signed:1;
	field:int next_prio;	offset:60;	size:4;	signed:1;

print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid
";

    #[test]
    fn parses_sched_switch_format() {
        let f = parse_format("sched", SWITCH).unwrap();
        assert_eq!((f.name.as_str(), f.id), ("sched_switch", 372));
        let p = f.field("prev_pid").unwrap();
        assert_eq!((p.offset, p.size, p.signed), (24, 4, true));
        let c = f.field("next_comm").unwrap();
        assert_eq!((c.offset, c.size, c.ctype.as_str()), (40, 16, "char[16]"));
        assert!(c.is_char_array() && !c.is_data_loc());
        let e = f.field("nope").unwrap_err();
        assert!(e.contains("sched:sched_switch has no field `nope`"), "{e}");
    }

    #[test]
    fn parses_data_loc_and_reports_bad_lines() {
        let t = "name: sched_process_exec\nID: 365\nformat:\n\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n";
        let f = parse_format("sched", t).unwrap();
        let fl = f.field("filename").unwrap();
        assert!(fl.is_data_loc());
        assert_eq!(fl.ctype, "__data_loc char[]");
        let bad = "name: x\nID: y\n";
        assert!(
            parse_format("s", bad)
                .unwrap_err()
                .contains("expected `ID: NUMBER`")
        );
        let bad = "name: x\nID: 1\n\tfield:int a;\tsize:4;\n";
        assert!(parse_format("s", bad).unwrap_err().contains("offset"));
    }
}
