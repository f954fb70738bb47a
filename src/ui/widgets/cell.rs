//! Cells of the buffer that marks are drawn over.

/// The cell at (`x`, `y`) when it lies inside `area`: marks drawn over cells (cursor, range)
/// are skipped where a tiny terminal leaves no column for them, never indexed out of bounds.
pub fn cell_in(
    buf: &mut ratatui::buffer::Buffer,
    area: ratatui::layout::Rect,
    x: u16,
    y: u16,
) -> Option<&mut ratatui::buffer::Cell> {
    let p = ratatui::layout::Position { x, y };
    if area.contains(p) {
        buf.cell_mut(p)
    } else {
        None
    }
}
