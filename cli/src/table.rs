//! Aligned text tables for people.

/// The rows under the header, columns padded to their widest cell; the first column is
/// left-aligned, the rest right-aligned.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let cells: Vec<String> = cells
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, &width))| {
                if i == 0 {
                    format!("{cell:<width$}")
                } else {
                    format!("{cell:>width$}")
                }
            })
            .collect();
        cells.join("  ").trim_end().to_string() + "\n"
    };
    let mut text = line(&mut header.iter().copied());
    for row in rows {
        text += &line(&mut row.iter().map(String::as_str));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up() {
        let text = table(
            &["topic", "n"],
            &[
                vec!["/a".into(), "1000".into()],
                vec!["/camera".into(), "2".into()],
            ],
        );
        assert_eq!(text, "topic       n\n/a       1000\n/camera     2\n");
    }
}
