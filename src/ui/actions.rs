//! What each action does to the [`App`]: the keys' actions (steps, jumps, zoom, overlays,
//! prompts, the session's own), the scrolling of the lane stack and of the panes, and the lane
//! window that follows the cursor. Scrolling needs to know what the screen shows, so this sits
//! above the panes ([`super::view`], [`super::widgets`]), which only draw the app.

use super::alarms;
use super::app::App;
use super::keys::{Action, keys_for};
use super::navigate;
use super::overlays::{Mode, PromptKind};
use super::state::State;
use super::widgets::{help, lane_plan};

impl App {
    /// Brings in new data before a frame.
    pub fn tick(&mut self) {
        self.session.tick(&mut self.state);
        self.state.take_models(false);
        self.state.compare.take_metrics();
        self.follow_lanes();
    }

    /// The screen the next frame is drawn on (the lane window is planned for it).
    pub fn set_screen(&mut self, screen: ratatui::layout::Rect) {
        if self.state.view.screen != screen {
            self.state.view.screen = screen;
            self.state.view.lanes.followed = None;
            self.follow_lanes();
        }
    }

    /// After the cursor moved: brings the lanes it is about into the lane window (the current
    /// scan batch, the tasks of an alarm, else the event's CPU; in the thread view the alarm's
    /// threads, else the event's task), moving the window as little as needed. A manual scroll
    /// stays until the cursor moves again.
    pub fn follow_lanes(&mut self) {
        let cursor = self.state.view.cursor;
        if self.state.view.lanes.followed == Some(cursor) {
            return;
        }
        self.state.view.lanes.followed = Some(cursor);
        let plan = lane_plan::plan(self, self.state.view.screen);
        self.follow_sets(&plan);
        if plan.max_lane_top() == 0 || plan.lanes.is_empty() {
            return;
        }
        let st = &self.state;
        let idx = if plan.threads {
            thread_focus(st)
        } else {
            cpu_focus(st)
        };
        let (Some(&lo), Some(&hi)) = (idx.iter().min(), idx.iter().max()) else {
            return;
        };
        let (k, top) = (plan.lanes.len(), plan.lane_top);
        if lo >= top && hi < top + k {
            return;
        }
        let top = if hi - lo + 1 > k || lo < top {
            lo
        } else {
            hi + 1 - k
        };
        let top = top.min(plan.max_lane_top());
        let view = &mut self.state.view;
        if plan.threads {
            view.thread_scroll = top;
        } else {
            view.lanes.cpu_top = top;
        }
    }

    /// When not every lane set fits: brings into view the sets with a compaction at the cursor
    /// (after `t`, `r` or `.`, the models whose triggers the cursor is on).
    fn follow_sets(&mut self, plan: &lane_plan::Plan) {
        if plan.max_set_top() == 0 {
            return;
        }
        let st = &self.state;
        let ts = st.cursor_ts();
        let at: Vec<usize> = plan
            .sets
            .iter()
            .enumerate()
            .filter(|(_, k)| match k {
                lane_plan::SetKind::Model(m) => {
                    let marks = &st.models.views[*m].trigger_marks;
                    let i = marks.partition_point(|t| t.ts < ts);
                    marks.get(i).is_some_and(|t| t.ts == ts)
                }
                _ => false,
            })
            .map(|(i, _)| i)
            .collect();
        let (Some(&lo), Some(&hi)) = (at.first(), at.last()) else {
            return;
        };
        let (top, n) = (plan.shown.start, plan.shown.len());
        if lo >= top && hi < top + n {
            return;
        }
        let top = if hi - lo + 1 > n || lo < top {
            lo
        } else {
            hi + 1 - n
        };
        self.state.view.lanes.set_top = top.min(plan.max_set_top());
    }

    /// Scrolls the lane stack by `delta` lanes (a page: the window's size): through the CPUs
    /// (or threads) while some are out of sight, then through the lane sets.
    fn scroll_lanes(&mut self, delta: isize, page: bool) {
        let plan = lane_plan::plan(self, self.state.view.screen);
        let st = &mut self.state;
        st.view.lanes.followed = Some(st.view.cursor);
        let mut top = plan.lane_top;
        let mut set_top = plan.shown.start;
        let (max_lane, max_set) = (plan.max_lane_top(), plan.max_set_top());
        if max_lane == 0 && max_set == 0 {
            st.overlays.message = Some("every lane is shown: nothing to scroll".into());
        } else {
            let step = if page {
                if max_lane > 0 {
                    plan.lanes.len().max(1) as isize
                } else {
                    plan.shown.len().max(1) as isize
                }
            } else {
                1
            } * delta.signum();
            let lane = top as isize + step;
            if max_lane > 0 && (0..=max_lane as isize).contains(&lane) {
                top = lane as usize;
            } else if max_set > 0 {
                // past the lanes' end: on to the next (or previous) lane set
                let set = (set_top as isize + delta.signum()).clamp(0, max_set as isize);
                if set as usize != set_top {
                    set_top = set as usize;
                    top = if delta > 0 { 0 } else { max_lane };
                }
            } else {
                top = lane.clamp(0, max_lane as isize) as usize;
            }
        }
        let view = &mut st.view;
        view.lanes.set_top = set_top;
        if plan.threads {
            view.thread_scroll = top;
        } else {
            view.lanes.cpu_top = top;
        }
    }

    /// Scrolls the pane under the graph (cursor, legend or accounting) by `delta` lines.
    fn scroll_pane(&mut self, delta: isize) {
        let screen = self.state.view.screen;
        let len = crate::ui::view::layout(self, screen)
            .into_iter()
            .find_map(|(p, area)| p.scroll_len(self, area));
        let Some((total, height)) = len else {
            return;
        };
        let max = total.saturating_sub(height as usize) as isize;
        let ov = &mut self.state.overlays;
        let cur = (ov.pane_scroll as isize).min(max);
        ov.pane_scroll = (cur + delta).clamp(0, max) as u16;
    }

    /// The steps pane scrolled to the step shown.
    fn scroll_to_step(&mut self) {
        let screen = self.state.view.screen;
        let Some(w) = &self.state.overlays.walk else {
            return;
        };
        let width = crate::ui::view::layout(self, screen)
            .into_iter()
            .find(|(p, _)| {
                p.scroll_len(self, ratatui::layout::Rect::default())
                    .is_some()
            })
            .map_or(screen.width, |(_, a)| a.width);
        let height = crate::ui::view::layout(self, screen)
            .into_iter()
            .find(|(p, _)| {
                p.scroll_len(self, ratatui::layout::Rect::default())
                    .is_some()
            })
            .map_or(screen.height, |(_, a)| a.height.saturating_sub(1));
        // the step from its start, or (taller than the pane) its end: the bitmaps
        let (start, end) = crate::ui::widgets::walk::step_span(self, w, width);
        let top = if end - start <= usize::from(height) {
            start.saturating_sub(1)
        } else {
            end - usize::from(height)
        };
        self.state.overlays.pane_scroll = top as u16;
    }

    /// Scrolls the help by `delta` lines.
    fn scroll_help(&mut self, delta: isize) {
        let screen = self.state.view.screen;
        let total = help::lines(self, screen.width.saturating_sub(3).min(159) as usize).len();
        let max = total.saturating_sub(screen.height.saturating_sub(2) as usize) as isize;
        let ov = &mut self.state.overlays;
        ov.help_scroll = ((ov.help_scroll as isize).min(max) + delta).clamp(0, max) as u16;
    }

    pub fn apply(&mut self, action: Action) {
        use Action as A;
        // the help scrolls with the scroll keys; every other key closes it
        if self.state.overlays.show_help {
            let page = self.state.view.screen.height.saturating_sub(4).max(1) as isize;
            match action {
                A::ScrollUp | A::PaneUp => return self.scroll_help(-1),
                A::ScrollDown | A::PaneDown => return self.scroll_help(1),
                A::ScrollPageUp | A::PageBack => return self.scroll_help(-page),
                A::ScrollPageDown | A::PageForward => return self.scroll_help(page),
                _ => {}
            }
        }
        match action {
            A::ScrollUp | A::ScrollDown | A::ScrollPageUp | A::ScrollPageDown => {
                self.state.overlays.message = None;
                let up = matches!(action, A::ScrollUp | A::ScrollPageUp);
                let page = matches!(action, A::ScrollPageUp | A::ScrollPageDown);
                return self.scroll_lanes(if up { -1 } else { 1 }, page);
            }
            A::PaneUp | A::PaneDown => {
                return self.scroll_pane(if action == A::PaneUp { -1 } else { 1 });
            }
            // the theme and the picture are the app's, not the state's
            A::CycleTheme if !self.state.overlays.show_help => {
                self.theme = self.theme.next_builtin();
                self.state.overlays.message = Some(format!(
                    "theme {} ({} for the next)",
                    self.theme.name,
                    keys_for(&self.bindings, A::CycleTheme)
                ));
                return;
            }
            A::ExportSvg if !self.state.overlays.show_help => {
                let dir = std::env::current_dir().unwrap_or_else(|_| ".".into());
                self.state.overlays.message = Some(super::export_view::export(self, &dir));
                return;
            }
            A::ToggleOverview if self.state.overlays.overview.is_none() => {
                let plan = lane_plan::plan(self, self.state.view.screen);
                let (cpu0, n) = (plan.lane_top, plan.lanes.len().max(2));
                let st = &mut self.state;
                st.overlays.overview = Some(super::overview::open(st, cpu0, n));
                return;
            }
            _ => {}
        }
        let from = self.state.place();
        self.apply_state(action);
        if action == A::CidSteps {
            self.scroll_to_step();
        }
        self.session.after_action(&mut self.state);
        if is_jump(action) {
            let to = self.state.place();
            self.state.history.record(from, to);
        }
        self.follow_lanes();
    }

    fn apply_state(&mut self, action: Action) {
        use Action as A;
        let st = &mut self.state;
        st.overlays.message = None;
        if !matches!(
            action,
            A::ToggleHelp | A::Quit | A::ForceQuit | A::Close | A::Suspend
        ) {
            st.view.follow_load = false;
        }
        if matches!(action, A::NextMm | A::PrevMm) {
            st.sel.mm_auto = false;
        }
        let n = st.trace.events.len();
        match action {
            A::ForceQuit => st.quit = true,
            A::Suspend => st.suspend = true,
            // q and Esc close what is open, front first, in every overlay; with nothing open q
            // quits and Esc says so
            A::Quit | A::Close if st.overlays.close_front() => {}
            A::Quit => st.quit = true,
            A::ToggleHelp => {
                st.overlays.show_help = !st.overlays.show_help;
                st.overlays.help_scroll = 0;
            }
            _ if st.overlays.show_help => st.overlays.show_help = false,
            A::Close => {
                st.overlays.message = Some(format!(
                    "nothing to close: {} quits",
                    keys_for(&self.bindings, A::Quit)
                ))
            }
            A::ToggleLegend => {
                st.overlays.show_legend = !st.overlays.show_legend;
                st.overlays.pane_scroll = 0;
            }
            A::ToggleOverview => st.overlays.overview = None,
            A::ToggleCidmask => {
                st.overlays.show_cidmask = !st.overlays.show_cidmask;
                if st.overlays.show_cidmask && st.sel.selected_mm().is_none() {
                    st.overlays.message =
                        Some("the cidmask is a process's: Tab or P picks one".into());
                }
            }
            A::CidSteps => match st.overlays.walk.as_mut() {
                Some(w) if w.at + 1 < w.steps.len() => w.at += 1,
                Some(w) => {
                    w.at = 0;
                    st.overlays.message = Some("the last step; again from the first".into());
                }
                None => match super::cid_steps::walk(st) {
                    Ok(w) => {
                        st.overlays.walk = Some(w);
                        st.overlays.pane_scroll = 0;
                    }
                    Err(e) => st.overlays.message = Some(e),
                },
            },
            A::CycleTheme | A::ExportSvg => {}
            A::GoTo => {
                st.overlays.mode = Mode::Prompt {
                    kind: PromptKind::GoTo,
                    text: String::new(),
                }
            }
            A::ZoomRange => match st.sel.range() {
                Some((a, b)) => {
                    st.zoom_to(a, b);
                    st.overlays.message =
                        Some(format!("the A–B range: {}", crate::events::fmt_dur(b - a)));
                }
                None => {
                    st.overlays.message = Some(format!(
                        "no A–B range: {} and {} set its ends (or drag with the mouse)",
                        keys_for(&self.bindings, A::SetA),
                        keys_for(&self.bindings, A::SetB)
                    ))
                }
            },
            A::JumpBack | A::JumpForward => {
                let now = st.place();
                let to = if action == A::JumpBack {
                    st.history.back(now)
                } else {
                    st.history.forward(now)
                };
                let (back, ahead) = st.history.depth();
                st.overlays.message = Some(match to {
                    Some(p) => {
                        st.go_to_place(p);
                        format!("jump history: {back} back, {ahead} ahead")
                    }
                    None if action == A::JumpBack => "no jump to go back to".into(),
                    None => "no jump ahead".into(),
                });
            }
            A::ScrollUp
            | A::ScrollDown
            | A::ScrollPageUp
            | A::ScrollPageDown
            | A::PaneUp
            | A::PaneDown => {}
            A::TogglePause | A::NextStep | A::PrevStep | A::Faster | A::Slower => {
                if !self.session.apply(action, st) {
                    st.overlays.message = Some(
                        if action == A::TogglePause {
                            "pause is for live sessions (cidscope live)"
                        } else {
                            "this key steps a demo: cidscope demo"
                        }
                        .into(),
                    );
                }
            }
            A::StepNext => st.set_cursor((st.view.cursor + 1).min(n.saturating_sub(1))),
            A::StepPrev => st.set_cursor(st.view.cursor.saturating_sub(1)),
            A::First => st.set_cursor(0),
            A::Last => st.set_cursor(n.saturating_sub(1)),
            A::PageForward => st.page(true),
            A::PageBack => st.page(false),
            A::ZoomIn => st.zoom_at(0.5, st.cursor_ts()),
            A::ZoomOut => st.zoom_at(2.0, st.cursor_ts()),
            A::NextMm | A::PrevMm => {
                st.sel.cycle_mm(action == A::NextMm);
                st.refresh_search();
                st.refresh_models();
            }
            A::PickProcess => st.overlays.mode = Mode::Picker(super::picker::open(st)),
            A::ToggleThreads => {
                st.view.threads = !st.view.threads;
                st.refresh_threads();
                if st.view.threads && st.sel.selected_mm().is_none() {
                    st.overlays.message = Some("thread lanes show one process: P picks one".into());
                }
            }
            A::Search => {
                st.overlays.mode = Mode::Prompt {
                    kind: PromptKind::Search,
                    text: String::new(),
                }
            }
            A::FilterCpus => {
                st.overlays.mode = Mode::Prompt {
                    kind: PromptKind::Cpus,
                    text: String::new(),
                }
            }
            A::SetMark => st.overlays.mode = Mode::SetMark,
            A::JumpMark => {
                if st.sel.marks.is_empty() {
                    st.overlays.message =
                        Some("no markers yet: press m and a letter to set one".into());
                } else {
                    st.overlays.mode = Mode::JumpMark;
                }
            }
            A::SetA => {
                st.sel.a = Some(st.cursor_ts());
                st.describe_selection();
            }
            A::SetB => {
                st.sel.b = Some(st.cursor_ts());
                st.describe_selection();
            }
            A::ClearSelection => {
                st.sel.a = None;
                st.sel.b = None;
            }
            A::ToggleAccounting => {
                st.overlays.pane_scroll = 0;
                st.overlays.accounting = match st.overlays.accounting {
                    // shown behind the legend: bring it to the front
                    Some(_) if st.overlays.show_legend => {
                        st.overlays.show_legend = false;
                        st.overlays.accounting.take()
                    }
                    Some(_) => None,
                    None => {
                        st.overlays.show_legend = false;
                        Some(st.compute_accounting())
                    }
                };
            }
            A::SearchNext
            | A::SearchPrev
            | A::NextCidChange
            | A::PrevCidChange
            | A::NextTick
            | A::PrevTick
            | A::NextResume
            | A::PrevResume
            | A::NextScan
            | A::PrevScan
            | A::NextAlarm
            | A::PrevAlarm
            | A::NextLost
            | A::PrevLost
            | A::NextTrigger
            | A::PrevTrigger
            | A::NextDiff
            | A::PrevDiff => {
                let jumped = navigate::jump(st, action);
                debug_assert!(jumped, "{action:?} is a jump");
            }
        }
        if st.overlays.accounting.is_some()
            && matches!(action, A::SetA | A::SetB | A::ClearSelection)
        {
            st.overlays.accounting = Some(st.compute_accounting());
        }
    }
}

/// Actions that move the cursor far: the jump history (Ctrl-O, Ctrl-I) remembers where from.
/// Steps, pages and zooms are not jumps.
fn is_jump(a: Action) -> bool {
    use Action as A;
    matches!(
        a,
        A::First
            | A::Last
            | A::SearchNext
            | A::SearchPrev
            | A::NextCidChange
            | A::PrevCidChange
            | A::NextTick
            | A::PrevTick
            | A::NextResume
            | A::PrevResume
            | A::NextTrigger
            | A::PrevTrigger
            | A::NextScan
            | A::PrevScan
            | A::NextAlarm
            | A::PrevAlarm
            | A::NextLost
            | A::PrevLost
            | A::NextDiff
            | A::PrevDiff
            | A::NextStep
            | A::PrevStep
            | A::ZoomRange
    )
}

/// The CPUs the cursor is about, as positions among the visible CPUs: the current scan batch,
/// the tasks of an alarm, else the event's CPU.
fn cpu_focus(st: &State) -> Vec<usize> {
    let mut focus: Vec<usize> = lane_plan::batch_cpus(st)
        .into_iter()
        .map(usize::from)
        .collect();
    if focus.is_empty() {
        focus = alarms::at_cursor(st)
            .iter()
            .flat_map(|b| b.cpus())
            .collect();
    }
    if focus.is_empty() {
        focus.extend(
            st.cursor_event()
                .and_then(|e| e.known_cpu())
                .map(usize::from),
        );
    }
    let visible = st.visible_cpus();
    focus
        .iter()
        .filter_map(|c| visible.iter().position(|v| v == c))
        .collect()
}

/// The threads the cursor is about, as rows of the thread lanes: the tasks of an alarm, else
/// the event's task (the one switched in at a switch).
fn thread_focus(st: &State) -> Vec<usize> {
    let Some(th) = &st.derived.threads else {
        return Vec::new();
    };
    let mut focus: Vec<crate::events::Tid> = alarms::at_cursor(st)
        .iter()
        .flat_map(|b| b.tids())
        .collect();
    if focus.is_empty() {
        focus.extend(st.cursor_event().map(|e| match e.kind {
            crate::events::EventKind::SchedSwitch { next_tid, .. } => next_tid,
            _ => e.tid,
        }));
    }
    focus
        .iter()
        .filter_map(|t| th.tids.binary_search(t).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{LoadOptions, SourceError, load_bytes};
    use crate::ui::selection::MmSel;
    use crate::ui::state::LoadMsg;
    use crate::ui::viewport::MIN_SPAN;

    fn app() -> App {
        let t = load_bytes(
            "x",
            b"a-1 [000] ....  1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n\
              a-1 [000] ....  2.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=1\n\
              b-2 [001] ....  2.500000: rseq_update: cpu_id=1 node_id=0 mm_cid=0\n\
              a-1 [000] ....  3.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=1\n",
            &LoadOptions::default(),
        )
        .unwrap();
        App::new(t)
    }

    fn in_window(a: &App) -> bool {
        let st = &a.state;
        st.cursor_ts() >= st.view.t0 && st.cursor_ts() < st.view.t1()
    }

    #[test]
    fn stepping_and_paging_keep_cursor_visible() {
        let mut a = app();
        assert_eq!(a.state.view.t0, 1_000_000_000);
        a.apply(Action::ZoomIn);
        a.apply(Action::ZoomIn);
        a.apply(Action::Last);
        assert_eq!(a.state.view.cursor, 3);
        assert!(in_window(&a));
        a.apply(Action::StepNext);
        assert_eq!(a.state.view.cursor, 3);
        a.apply(Action::First);
        assert_eq!(a.state.view.cursor, 0);
        assert!(in_window(&a));
        a.apply(Action::PageForward);
        assert!(a.state.cursor_ts() >= a.state.view.t0);
        a.apply(Action::Quit);
        assert!(a.state.quit);
    }

    #[test]
    fn zoom_is_bounded() {
        let mut a = app();
        for _ in 0..80 {
            a.apply(Action::ZoomIn);
        }
        assert_eq!(a.state.view.span, MIN_SPAN);
        for _ in 0..80 {
            a.apply(Action::ZoomOut);
        }
        assert_eq!(a.state.view.span, 2_020_000_000);
    }

    #[test]
    fn search_and_jumps() {
        let mut a = app();
        let msg = |a: &App| a.state.overlays.message.clone();
        a.apply(Action::Search);
        for c in "tid:2".chars() {
            assert!(a.type_char(c));
        }
        a.submit();
        assert_eq!(a.state.view.cursor, 2);
        // the search wraps, and says so
        a.apply(Action::SearchNext);
        assert_eq!(
            msg(&a).as_deref(),
            Some("match 1 of 1 (wrapped past the end)")
        );
        assert_eq!(a.state.view.cursor, 2);
        a.apply(Action::First);
        a.apply(Action::SearchPrev);
        assert_eq!(
            msg(&a).as_deref(),
            Some("match 1 of 1 (wrapped past the start)")
        );
        a.apply(Action::First);
        a.apply(Action::NextCidChange);
        assert_eq!(a.state.view.cursor, 1, "task 1 went 0 -> 1 at event 1");
        a.apply(Action::NextCidChange);
        assert_eq!(
            a.state.view.cursor, 2,
            "task 2's first report counts as a change"
        );
        a.apply(Action::NextCidChange);
        assert_eq!(a.state.view.cursor, 2);
        a.apply(Action::PrevCidChange);
        assert_eq!(a.state.view.cursor, 1);
        a.apply(Action::NextTick);
        assert!(msg(&a).unwrap_or_default().contains("--policy"));
        a.apply(Action::NextLost);
        assert_eq!(msg(&a).as_deref(), Some("no lost-event gap here"));
    }

    /// Esc closes what is open, front first, and never quits; q quits (closing the help first).
    #[test]
    fn esc_closes_and_never_quits() {
        let mut a = app();
        a.apply(Action::ToggleAccounting);
        a.apply(Action::ToggleLegend);
        a.apply(Action::ToggleHelp);
        a.apply(Action::Close);
        assert!(!a.state.overlays.show_help && a.state.overlays.show_legend);
        a.apply(Action::Close);
        assert!(!a.state.overlays.show_legend && a.state.overlays.accounting.is_some());
        a.apply(Action::Close);
        assert!(a.state.overlays.accounting.is_none());
        a.apply(Action::Close);
        assert!(!a.state.quit);
        assert_eq!(
            a.state.overlays.message.as_deref(),
            Some("nothing to close: q quits")
        );
        a.apply(Action::ToggleHelp);
        a.apply(Action::Quit);
        assert!(!a.state.quit && !a.state.overlays.show_help);
        // q closes every overlay as Esc does, front first: the legend and the accounting too
        a.apply(Action::ToggleAccounting);
        a.apply(Action::ToggleLegend);
        a.apply(Action::Quit);
        assert!(!a.state.quit && !a.state.overlays.show_legend);
        a.apply(Action::Quit);
        assert!(!a.state.quit && a.state.overlays.accounting.is_none());
        a.apply(Action::ToggleOverview);
        assert!(a.state.overlays.overview.is_some());
        a.apply(Action::Quit);
        assert!(!a.state.quit && a.state.overlays.overview.is_none());
        a.apply(Action::Quit);
        assert!(a.state.quit);
    }

    /// Jumps are remembered: Ctrl-O goes back, Ctrl-I forward; steps are not jumps.
    #[test]
    fn the_jump_history_walks_back_and_forward() {
        let mut a = app();
        a.apply(Action::Last);
        assert_eq!(a.state.view.cursor, 3);
        a.apply(Action::StepPrev);
        a.apply(Action::First);
        a.apply(Action::JumpBack);
        assert_eq!(
            a.state.view.cursor, 2,
            "back to before the jump to the first"
        );
        a.apply(Action::JumpBack);
        assert_eq!(
            a.state.view.cursor, 0,
            "back to before the jump to the last"
        );
        // forward again: to where each back started
        a.apply(Action::JumpForward);
        assert_eq!(a.state.view.cursor, 2);
        a.apply(Action::JumpForward);
        assert_eq!(a.state.view.cursor, 0);
        a.apply(Action::JumpForward);
        assert_eq!(a.state.overlays.message.as_deref(), Some("no jump ahead"));
        a.apply(Action::JumpBack);
        a.apply(Action::JumpBack);
        a.apply(Action::JumpBack);
        assert_eq!(
            a.state.overlays.message.as_deref(),
            Some("no jump to go back to")
        );
        // go to an event, and A–B zoom
        a.apply(Action::GoTo);
        for c in "#3".chars() {
            a.type_char(c);
        }
        a.submit();
        assert_eq!(a.state.view.cursor, 2);
        a.apply(Action::SetA);
        a.apply(Action::Last);
        a.apply(Action::SetB);
        a.apply(Action::ZoomRange);
        assert!(a.state.view.span < 1_100_000_000 && a.state.view.t0 <= 2_500_000_000);
    }

    #[test]
    fn markers_and_range() {
        let mut a = app();
        a.apply(Action::SetMark);
        assert!(a.type_char('k'));
        a.apply(Action::Last);
        a.apply(Action::SetA);
        a.apply(Action::First);
        a.apply(Action::SetB);
        assert_eq!(a.state.sel.range(), Some((1_000_000_000, 3_000_000_000)));
        assert_eq!(a.state.cid_changes_in(1_000_000_000, 3_000_000_000), 3);
        a.apply(Action::Last);
        a.apply(Action::JumpMark);
        assert!(a.type_char('k'));
        assert_eq!(a.state.view.cursor, 0);
        a.apply(Action::JumpMark);
        a.type_char('z');
        assert_eq!(a.state.overlays.message.as_deref(), Some("no marker z"));
        a.apply(Action::ClearSelection);
        assert_eq!(a.state.sel.range(), None);
    }

    #[test]
    fn cpu_list_parsing() {
        use crate::ui::prompt::parse_cpu_list;
        assert_eq!(parse_cpu_list("", 4), Ok(None));
        assert_eq!(parse_cpu_list("0-1, 3", 4), Ok(Some(vec![0, 1, 3])));
        let e = parse_cpu_list("5", 4).unwrap_err();
        assert_eq!(e.to_string(), "CPU list: 5 is outside 0-3");
        let e = parse_cpu_list("x", 4).unwrap_err();
        assert_eq!(e.to_string(), "CPU list: expected N or N-M, found \"x\"");
        let mut a = app();
        a.apply(Action::FilterCpus);
        a.type_char('1');
        a.submit();
        assert_eq!(a.state.visible_cpus(), vec![1]);
    }

    /// Session keys: a replay has none and says which session does.
    #[test]
    fn session_keys_of_a_replay_name_their_session() {
        let mut a = app();
        a.apply(Action::TogglePause);
        let msg = a.state.overlays.message.clone().unwrap_or_default();
        assert!(msg.contains("cidscope live"), "{msg}");
        a.apply(Action::NextStep);
        let msg = a.state.overlays.message.clone().unwrap_or_default();
        assert!(msg.contains("cidscope demo"), "{msg}");
        // with the help shown, a key only closes it
        a.apply(Action::ToggleHelp);
        a.apply(Action::TogglePause);
        assert!(!a.state.overlays.show_help);
        assert_eq!(a.state.overlays.message, None);
    }

    #[test]
    fn streaming_deltas_build_the_same_view_as_a_whole_load() {
        use crate::sources::open;
        let path = std::path::Path::new("traces/hackbench-pipe.ftrace.txt");
        let whole = App::new(crate::sources::load(path, &LoadOptions::default()).unwrap());
        let opened = open(path, &LoadOptions::default()).unwrap();
        let mut app = App::loading(&opened.name, opened.format, Default::default());
        let opts = LoadOptions {
            segment_bytes: Some(100_000),
            ..Default::default()
        };
        let mut deltas = Vec::new();
        opened
            .stream(&opts, &mut |d| {
                deltas.push(std::mem::take(d));
                true
            })
            .unwrap();
        assert!(deltas.len() > 10);
        for d in deltas {
            app.on_load(LoadMsg::Delta(d));
        }
        app.on_load(LoadMsg::Done(Ok(())));
        let (st, whole) = (&app.state, &whole.state);
        assert!(st.loading.is_none());
        assert_eq!(st.trace.events, whole.trace.events);
        assert_eq!(st.timeline.lanes, whole.timeline.lanes);
        assert_eq!(
            st.timeline.weight_series(None),
            whole.timeline.weight_series(None)
        );
        assert_eq!(st.derived.weights, whole.derived.weights);
        assert_eq!(st.sel.mm_list, whole.sel.mm_list);
        assert_eq!(st.sel.selected(), whole.sel.selected());
        assert_eq!((st.view.t0, st.view.span), (whole.view.t0, whole.view.span));
    }

    #[test]
    fn a_load_error_before_any_event_ends_the_run() {
        let mut app = App::loading("x", crate::sources::formats::FTRACE, Default::default());
        let e = SourceError::at_line("x", 3, "expected ...");
        app.on_load(LoadMsg::Done(Err(e.clone())));
        assert!(app.state.quit);
        assert_eq!(app.state.fatal, Some(e));
    }

    #[test]
    fn tab_cycles_all_and_mms() {
        let mut a = app();
        // no TGIDs in this capture: only "all tasks"
        assert_eq!(a.state.sel.selected(), MmSel::All);
        a.apply(Action::NextMm);
        assert_eq!(a.state.sel.selected(), MmSel::All);
    }
}
