//! The README's key table is generated from the key bindings; this keeps them in step.

use cidscope::ui::keys::{default_bindings, markdown_table};

#[test]
fn readme_key_table_matches_the_bindings() {
    let readme = std::fs::read_to_string("README.md").expect("README.md");
    let table = markdown_table(&default_bindings());
    assert!(
        readme.contains(&table),
        "README.md's key table differs from the bindings; expected:\n{table}"
    );
}
