//! The man pages of `cidscope man`: from the same clap definitions as `--help`, with what `--help`
//! cannot say: the commands, the examples verbatim (they paste), the keys (from the key table
//! the TUI binds) and the exit statuses. `--dir DIR` writes a page per command too, and only
//! then does cidscope.1 name them.

use super::command::{CAPTURE, EXAMPLES};
use std::path::{Path, PathBuf};

/// Text for a roff line: backslashes and dashes escaped, no leading control character.
fn esc(s: &str) -> String {
    let t = s
        .replace('\\', "\\e")
        .replace('-', "\\-")
        .replace('\'', "\\*(Aq");
    if t.starts_with('.') || t.starts_with('\'') {
        format!("\\&{t}")
    } else {
        t
    }
}

/// The command line with its subcommands' names and bin names set (as `--help` sees them).
fn built() -> clap::Command {
    let mut cmd = super::command::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// The visible commands, in the order of `--help`.
fn commands(cmd: &clap::Command) -> Vec<&clap::Command> {
    cmd.get_subcommands().filter(|s| !s.is_hide_set()).collect()
}

/// A page's file name (`cidscope-stats.1`) and the name its references use.
fn page_name(sub: &clap::Command) -> String {
    format!("cidscope-{}", sub.get_name())
}

/// `clap_mangen`'s page for `cmd` without its after-help, and with `sections` inserted before
/// its VERSION section (or at the end).
fn render(cmd: clap::Command, sections: &str) -> String {
    let cmd = cmd.after_help(None::<&str>).after_long_help(None::<&str>);
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .source(format!("cidscope {}", env!("CARGO_PKG_VERSION")))
        .render(&mut buf)
        .expect("invariant: rendering into a Vec cannot fail");
    let page = String::from_utf8_lossy(&buf).into_owned();
    match page.find("\n.SH VERSION\n") {
        Some(i) => format!("{}\n{sections}{}", &page[..i], &page[i + 1..]),
        None => format!("{page}{sections}"),
    }
}

/// A section of lines shown as they are (no filling: commands stay pasteable).
fn verbatim(title: &str, text: &str) -> String {
    let mut s = format!(".SH {title}\n.nf\n");
    for line in text.lines() {
        s.push_str(&esc(line));
        s.push('\n');
    }
    s.push_str(".fi\n");
    s
}

/// The exit statuses; `check`: the top-level page, where `--check` exits 1 on a finding.
fn exit_status(check: bool) -> String {
    let mut entries = vec![("0", "ok")];
    if check {
        entries.push((
            "1",
            "--check found something: an observed duplicate CID among concurrently running \
             threads of one process, or a CID at or above its bound",
        ));
    }
    entries.push((
        "2",
        "bad input or usage: the message names the file, line or byte offset, or the flag",
    ));
    if check {
        entries.push((
            "3",
            "--check could check nothing (no events, no rseq_update, or neither the duplicate \
             nor the bound check possible): the report says NOTHING CHECKED and why",
        ));
        entries.push((
            "4",
            "--check: one of the two checks could not run and the other found nothing",
        ));
    }
    entries.push((
        "128+N",
        "the TUI ended by signal N (TERM 143, HUP 129, QUIT 131, ...), its terminal restored first (a stream read until Ctrl-C and a headless live run ended by a signal end normally)",
    ));
    let mut s = String::from(".SH \"EXIT STATUS\"\n");
    for (code, what) in entries {
        s.push_str(&format!(".TP\n{code}\n{}\n", esc(what)));
    }
    s
}

/// Every action of the key table with its default keys and its name in keys.json.
fn keys() -> String {
    let mut s = String::from(
        ".SH KEYS\nThe TUI's default bindings (rebind them in ~/.config/cidscope/keys.json or \
         with \\fB\\-\\-keys\\fR \\fIPATH\\fR; \\fB?\\fR shows the bindings in force):\n",
    );
    for b in crate::ui::keys::default_bindings() {
        let keys: Vec<String> = b.keys.iter().map(|k| k.name()).collect();
        s.push_str(&format!(
            ".TP\n\\fB{}\\fR\n{} (\\fI{}\\fR)\n",
            esc(&keys.join("  ")),
            esc(b.action.describe()),
            esc(b.action.name())
        ));
    }
    s
}

/// cidscope.1; with `pages`, naming the per-command pages written beside it.
pub fn main_page(pages: bool) -> String {
    let cmd = built();
    let mut cmds = String::from(".SH COMMANDS\n");
    for sub in commands(&cmd) {
        cmds.push_str(&format!(".TP\n\\fBcidscope {}\\fR\n", esc(sub.get_name())));
        if let Some(about) = sub.get_about() {
            cmds.push_str(&esc(&about.to_string()));
            cmds.push('\n');
        }
        if pages {
            cmds.push_str(&format!("See \\fB{}\\fR(1).\n", esc(&page_name(sub))));
        }
    }
    cmds.push_str(if pages {
        ".PP\nEach command lists its own options with \\fBcidscope\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR.\n"
    } else {
        ".PP\nEach command lists its own options with \\fBcidscope\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR; \
         \\fBcidscope man \\-\\-dir\\fR \\fIDIR\\fR writes a page for each.\n"
    });
    let mut sections = cmds;
    sections.push_str(&verbatim(
        "EXAMPLES",
        &format!("{EXAMPLES}\n\nCapture on a test box (as root):\n{CAPTURE}"),
    ));
    sections.push_str(&keys());
    sections.push_str(&exit_status(true));
    if pages {
        let refs: Vec<String> = commands(&cmd)
            .iter()
            .map(|s| format!("\\fB{}\\fR(1)", esc(&page_name(s))))
            .collect();
        sections.push_str(&format!(".SH \"SEE ALSO\"\n{}\n", refs.join(", ")));
    }
    let mut top = cmd.clone();
    for sub in commands(&cmd) {
        top = top.mut_subcommand(sub.get_name(), |s| s.hide(true));
    }
    let top = top.override_usage("cidscope [OPTIONS] [FILE]\ncidscope COMMAND [OPTIONS] [ARGS]");
    render(top, &sections)
}

/// The page of one command (`cidscope-stats.1`): its options, its notes verbatim, the exit
/// statuses, and cidscope(1).
fn command_page(sub: &clap::Command) -> String {
    let mut sections = String::new();
    if let Some(notes) = sub.get_after_help() {
        sections.push_str(&verbatim("DETAILS", &notes.to_string()));
    }
    sections.push_str(&exit_status(false));
    sections.push_str(".SH \"SEE ALSO\"\n\\fBcidscope\\fR(1)\n");
    // a built subcommand is displayed as `cidscope-stats`: the page's title and NAME
    render(sub.clone(), &sections)
}

/// Writes cidscope.1 and a page per command into `dir`; returns the files written.
pub fn write_pages(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    let mut write = |name: &str, text: String| -> std::io::Result<()> {
        let p = dir.join(format!("{name}.1"));
        std::fs::write(&p, text)?;
        written.push(p);
        Ok(())
    };
    write("cidscope", main_page(true))?;
    let cmd = built();
    for sub in commands(&cmd) {
        write(&page_name(sub), command_page(sub))?;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_for_roff() {
        assert_eq!(esc("a \\ b-c"), "a \\e b\\-c");
        assert_eq!(esc(".x"), "\\&.x");
    }
}
