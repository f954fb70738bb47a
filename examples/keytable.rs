//! Prints the key table of docs/keys.md from the bindings: `cargo run --example keytable`.
fn main() {
    print!(
        "{}",
        cidscope::ui::keys::markdown_table(&cidscope::ui::keys::default_bindings())
    );
}
