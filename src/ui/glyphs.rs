//! Every glyph, mark and colour the panes draw: its character, the theme slot that colours it,
//! how it is styled and what it means. The lanes, the ruler, the weight graph and the diff row
//! take their characters and styles from here, and the legend (`L`) and the help (`?`) are
//! generated from the same table, so what is drawn and what is explained cannot drift apart.

use super::keys::Action;
use super::theme::Theme;
use ratatui::style::{Color, Modifier, Style};

/// A colour slot of the theme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The CID's own colour from `cid_palette`.
    Cid,
    FreeSlot,
    LazySlot,
    TransitSlot,
    TickMarker,
    ResumeMarker,
    ScanBatch,
    Alarm,
    Lost,
    Dim,
    Cursor,
    Weight,
    Bound,
    Marker,
    Selection,
    /// A model's weight curve: `curve_palette` (the k-th model's colour; `cid` is k).
    Curve,
}

impl Slot {
    /// The slot's colour in `theme` (`Cid`: the colour of `cid`).
    pub fn color(self, theme: &Theme, cid: i32) -> Color {
        match self {
            Slot::Cid => theme.cid_color(cid),
            Slot::FreeSlot => theme.free_slot,
            Slot::LazySlot => theme.lazy_slot,
            Slot::TransitSlot => theme.transit_slot,
            Slot::TickMarker => theme.tick_marker,
            Slot::ResumeMarker => theme.resume_marker,
            Slot::ScanBatch => theme.scan_batch,
            Slot::Alarm => theme.alarm,
            Slot::Lost => theme.lost,
            Slot::Dim => theme.dim,
            Slot::Cursor => theme.cursor,
            Slot::Weight => theme.weight,
            Slot::Bound => theme.bound,
            Slot::Marker => theme.marker,
            Slot::Selection => theme.selection,
            Slot::Curve => theme.curve_color(cid.unsigned_abs() as usize),
        }
    }

    /// The name of the slot in theme files.
    pub fn key(self) -> &'static str {
        match self {
            Slot::Cid => "cid_palette",
            Slot::FreeSlot => "free_slot",
            Slot::LazySlot => "lazy_slot",
            Slot::TransitSlot => "transit_slot",
            Slot::TickMarker => "tick_marker",
            Slot::ResumeMarker => "resume_marker",
            Slot::ScanBatch => "scan_batch",
            Slot::Alarm => "alarm",
            Slot::Lost => "lost",
            Slot::Dim => "dim",
            Slot::Cursor => "cursor",
            Slot::Weight => "weight",
            Slot::Bound => "bound",
            Slot::Marker => "marker",
            Slot::Selection => "selection",
            Slot::Curve => "curve_palette",
        }
    }
}

/// How a glyph uses its slot's colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Look {
    /// The colour as foreground.
    Fg,
    /// The colour as foreground, bold.
    Bold,
    /// The colour as background behind the cell text (a confirmed CID).
    Fill,
    /// The colour as a dim foreground (a CID not confirmed, or kept by a model).
    Faint,
    /// Reverse video in the colour: a box that no plain character can be mistaken for.
    Boxed,
    /// The colour as the background of otherwise empty cells (the A–B range).
    Shade,
}

/// Where a glyph is drawn; the legend groups by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Lane,
    Ruler,
    Weight,
    Diff,
}

impl Group {
    pub const ALL: [Group; 4] = [Group::Lane, Group::Ruler, Group::Weight, Group::Diff];

    pub fn title(self) -> &'static str {
        match self {
            Group::Lane => "lanes (per CPU, or per thread: the CID the process holds)",
            Group::Ruler => "ruler (the row over each lane set)",
            Group::Weight => "cidmask weight",
            Group::Diff => "diff row (under compared sets)",
        }
    }
}

/// One glyph: its character(s), colour and meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Glyph {
    /// What is drawn (the legend's sample; digits stand for any CID).
    pub sym: &'static str,
    pub slot: Slot,
    pub look: Look,
    pub group: Group,
    pub meaning: &'static str,
    /// The keys that reach it: (next, previous), or (set, jump) for markers; the legend names
    /// their bindings.
    pub keys: Option<(Action, Action)>,
}

impl Glyph {
    /// Its style in `theme` (`cid` for CID-coloured glyphs).
    pub fn style(&self, theme: &Theme, cid: i32) -> Style {
        let style = self.style_of_slot(theme, cid);
        // where the palette repeats, a pattern tells the CIDs apart
        if self.slot == Slot::Cid {
            style.add_modifier(theme.cid_pattern(cid))
        } else {
            style
        }
    }

    fn style_of_slot(&self, theme: &Theme, cid: i32) -> Style {
        let c = self.slot.color(theme, cid);
        if theme.monochrome {
            // no colour: meaning is carried by the characters and by modifiers
            return match self.look {
                Look::Fill if self.slot == Slot::Alarm => Style::default()
                    .add_modifier(Modifier::REVERSED | Modifier::BOLD | Modifier::UNDERLINED),
                Look::Fill | Look::Boxed => Style::default().add_modifier(Modifier::REVERSED),
                Look::Faint | Look::Shade => Style::default().add_modifier(Modifier::DIM),
                Look::Fg | Look::Bold => Style::default().add_modifier(Modifier::BOLD),
            };
        }
        match self.look {
            Look::Fg => Style::default().fg(c),
            Look::Bold => Style::default().fg(c).add_modifier(Modifier::BOLD),
            Look::Fill if self.slot == Slot::Alarm => Style::default()
                .bg(c)
                .fg(theme.cid_text)
                .add_modifier(Modifier::BOLD),
            Look::Fill => Style::default().bg(c).fg(theme.cid_text),
            Look::Faint => Style::default().fg(c).add_modifier(Modifier::DIM),
            Look::Boxed => Style::default()
                .fg(c)
                .add_modifier(Modifier::REVERSED | Modifier::BOLD),
            Look::Shade => Style::default().bg(c),
        }
    }

    /// The glyph's character (its first one).
    pub fn ch(&self) -> char {
        self.sym.chars().next().unwrap_or(' ')
    }
}

const fn g(
    sym: &'static str,
    slot: Slot,
    look: Look,
    group: Group,
    meaning: &'static str,
) -> Glyph {
    Glyph {
        sym,
        slot,
        look,
        group,
        meaning,
        keys: None,
    }
}

const fn with_keys(mut x: Glyph, next: Action, prev: Action) -> Glyph {
    x.keys = Some((next, prev));
    x
}

// ---- lanes
pub const CID: Glyph = g(
    "0 1 2",
    Slot::Cid,
    Look::Fill,
    Group::Lane,
    "a CID held by a running task, confirmed (observed: reported since its switch-in); each CID its own colour",
);
pub const UNCONFIRMED: Glyph = g(
    "0░░",
    Slot::Cid,
    Look::Faint,
    Group::Lane,
    "a CID not yet confirmed since the task was switched in (its last report, maybe stale)",
);
pub const KEPT: Glyph = g(
    "1▒▒",
    Slot::Cid,
    Look::Faint,
    Group::Lane,
    "model: kept in the CPU's slot (pcpu_cid) while no task of the process runs there",
);
pub const LAZY: Glyph = g(
    "1~~",
    Slot::LazySlot,
    Look::Bold,
    Group::Lane,
    "model: a Lazy slot (MM_CID_LAZY_PUT): compaction took it; freed at its task's switch-out",
);
pub const TRANSIT: Glyph = g(
    "1≈≈",
    Slot::TransitSlot,
    Look::Bold,
    Group::Lane,
    "owner-mode: a CID in TRANSIT during a mode switch; freed or handed over at the next switch",
);
pub const ALARM_CELL: Glyph = with_keys(
    g(
        "0 2",
        Slot::Alarm,
        Look::Fill,
        Group::Lane,
        "an alarm: two running tasks of one process hold this CID, or it is at/above its bound",
    ),
    Action::NextAlarm,
    Action::PrevAlarm,
);
pub const FREE: Glyph = g(
    "·",
    Slot::FreeSlot,
    Look::Fg,
    Group::Lane,
    "the CPU runs nothing of the selected process (idle, or another process)",
);
pub const NO_CID: Glyph = g(
    "-",
    Slot::Dim,
    Look::Fg,
    Group::Lane,
    "a task of the process runs but has no CID (no rseq, or none reported yet)",
);
pub const TASK: Glyph = g(
    "▏comm-tid",
    Slot::Dim,
    Look::Fg,
    Group::Lane,
    "under the CIDs: a task's run starts (its comm-tid where it fits)",
);
pub const THREAD_CPU: Glyph = g(
    "▏CPU1",
    Slot::Dim,
    Look::Fg,
    Group::Lane,
    "thread lanes (v): under a thread's CIDs, the CPU of each run (labels: tid, comm)",
);
pub const BATCH_CPU: Glyph = with_keys(
    g(
        "CPU8",
        Slot::ScanBatch,
        Look::Boxed,
        Group::Lane,
        "label of a CPU in the current scan batch (resume-batch)",
    ),
    Action::NextScan,
    Action::PrevScan,
);
pub const LANE_TICK: Glyph = g(
    "t",
    Slot::TickMarker,
    Look::Bold,
    Group::Lane,
    "model: a compaction the tick started scanned this CPU's slot here (and each later batch of that scan)",
);
pub const LANE_RESUME: Glyph = g(
    "r",
    Slot::ResumeMarker,
    Look::Bold,
    Group::Lane,
    "model: a compaction started on return to user (resume) scanned this CPU's slot here (and each later batch)",
);
pub const RANGE: Glyph = g(
    "·",
    Slot::Selection,
    Look::Shade,
    Group::Lane,
    "inside the A–B range (free cells shaded, CIDs underlined)",
);

// ---- ruler
pub const TIME_LABEL: Glyph = g(
    "|+1.25ms",
    Slot::Dim,
    Look::Fg,
    Group::Ruler,
    "time since the start of the data; | is the column it names",
);
pub const CURSOR: Glyph = g(
    "▼",
    Slot::Cursor,
    Look::Bold,
    Group::Ruler,
    "the cursor (its column is reversed in the lanes; a mark under it is boxed instead)",
);
pub const LOST: Glyph = with_keys(
    g(
        "!",
        Slot::Lost,
        Look::Bold,
        Group::Ruler,
        "lost events: the kernel dropped records here",
    ),
    Action::NextLost,
    Action::PrevLost,
);
pub const ALARM: Glyph = with_keys(
    g(
        "X",
        Slot::Alarm,
        Look::Bold,
        Group::Ruler,
        "an alarm: duplicate CID, or a CID at or above its bound",
    ),
    Action::NextAlarm,
    Action::PrevAlarm,
);
pub const TICK: Glyph = with_keys(
    g(
        "t",
        Slot::TickMarker,
        Look::Bold,
        Group::Ruler,
        "model: a compaction started by the tick (lazy-compact's task_mm_cid_work; resume-batch's rule A/B)",
    ),
    Action::NextTick,
    Action::PrevTick,
);
pub const RESUME: Glyph = with_keys(
    g(
        "r",
        Slot::ResumeMarker,
        Look::Bold,
        Group::Ruler,
        "model: a compaction started on return to user (resume: after a switch, migration or registration)",
    ),
    Action::NextResume,
    Action::PrevResume,
);
pub const TICK_BATCH: Glyph = g(
    "─",
    Slot::TickMarker,
    Look::Fg,
    Group::Ruler,
    "model: the later batches of a scan the tick started, from its t to its last batch",
);
pub const RESUME_BATCH: Glyph = g(
    "═",
    Slot::ResumeMarker,
    Look::Fg,
    Group::Ruler,
    "model: the later batches of a scan started on resume, from its r to its last batch",
);
pub const SCAN: Glyph = with_keys(
    g(
        "S",
        Slot::ScanBatch,
        Look::Bold,
        Group::Ruler,
        "model: start of a complete scan whose trigger is not known (the others show t or r)",
    ),
    Action::NextScan,
    Action::PrevScan,
);
pub const MODE: Glyph = g(
    "M",
    Slot::TransitSlot,
    Look::Bold,
    Group::Ruler,
    "owner-mode: the process switches mode (per-task ⇄ per-CPU)",
);
pub const RANGE_END: Glyph = g(
    "A B",
    Slot::Marker,
    Look::Bold,
    Group::Ruler,
    "ends of the A–B range (a, b; u clears)",
);
pub const USER_MARK: Glyph = with_keys(
    g(
        "k",
        Slot::Marker,
        Look::Boxed,
        Group::Ruler,
        "your named markers",
    ),
    Action::SetMark,
    Action::JumpMark,
);

// ---- weight
pub const BARS: Glyph = g(
    "█▄",
    Slot::Weight,
    Look::Fg,
    Group::Weight,
    "bars: the weight (distinct CIDs held by the process's running tasks) over time",
);
pub const CURVE: Glyph = g(
    "━═─┅",
    Slot::Curve,
    Look::Fg,
    Group::Weight,
    "a model's weight: each model its colour and line (━ ═ ─ ┅, named in the pane's title); where curves meet, their lines alternate column by column",
);
pub const BOUND: Glyph = g(
    "┄",
    Slot::Bound,
    Look::Fg,
    Group::Weight,
    "the bound: possible CPUs; no CID may reach it, the weight never passes it",
);
pub const OVER_BOUND: Glyph = g(
    "▲",
    Slot::Alarm,
    Look::Bold,
    Group::Weight,
    "the weight passed the bound (an alarm)",
);
pub const WEIGHT_CURSOR: Glyph = g("│", Slot::Cursor, Look::Fg, Group::Weight, "the cursor");

// ---- diff
pub const DIFF_SAME: Glyph = g(
    "·",
    Slot::Dim,
    Look::Fg,
    Group::Diff,
    "the first two sets show the same CIDs on every CPU",
);
pub const DIFF_ONE: Glyph = g(
    "≠",
    Slot::Alarm,
    Look::Bold,
    Group::Diff,
    "they differ on one CPU",
);
pub const DIFF_MANY: Glyph = g(
    "2…9",
    Slot::Alarm,
    Look::Bold,
    Group::Diff,
    "they differ on that many CPUs",
);

/// Every glyph, in the order the legend and the help list them.
pub const ALL: &[Glyph] = &[
    CID,
    UNCONFIRMED,
    KEPT,
    LAZY,
    TRANSIT,
    ALARM_CELL,
    FREE,
    NO_CID,
    TASK,
    THREAD_CPU,
    BATCH_CPU,
    LANE_TICK,
    LANE_RESUME,
    RANGE,
    TIME_LABEL,
    CURSOR,
    LOST,
    ALARM,
    TICK,
    RESUME,
    TICK_BATCH,
    RESUME_BATCH,
    SCAN,
    MODE,
    RANGE_END,
    USER_MARK,
    BARS,
    CURVE,
    BOUND,
    OVER_BOUND,
    WEIGHT_CURSOR,
    DIFF_SAME,
    DIFF_ONE,
    DIFF_MANY,
];

/// The ruler marks, most important first: where two fall on one column the first is drawn.
pub const MARK_PRIORITY: &[Glyph] = &[
    ALARM,
    LOST,
    RESUME,
    TICK,
    MODE,
    SCAN,
    RESUME_BATCH,
    TICK_BATCH,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_glyph_is_listed_once_and_explained() {
        for (i, a) in ALL.iter().enumerate() {
            assert!(!a.meaning.is_empty() && !a.sym.is_empty());
            for b in &ALL[i + 1..] {
                assert!(a != b, "{} listed twice", a.sym);
            }
        }
        for m in MARK_PRIORITY {
            assert!(ALL.contains(m) && m.group == Group::Ruler);
        }
        // the ruler's marks are one character each, and distinct
        for (i, a) in MARK_PRIORITY.iter().enumerate() {
            assert_eq!(a.sym.chars().count(), 1);
            assert!(MARK_PRIORITY[i + 1..].iter().all(|b| b.ch() != a.ch()));
        }
    }

    #[test]
    fn alarm_cells_never_look_like_a_cid() {
        for (name, _) in crate::ui::theme::BUILTIN {
            let t = Theme::load(name).expect("builtin theme");
            let alarm = ALARM_CELL.style(&t, 0);
            for cid in 0..t.cid_palette.len() as i32 {
                assert_ne!(alarm, CID.style(&t, cid), "{name}: CID {cid}");
            }
        }
        let m = Theme::monochrome();
        assert_ne!(ALARM_CELL.style(&m, 0), CID.style(&m, 0));
    }
}
