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

/// Orders names as people count: `topic_6` before `topic_56`; runs of digits compare as
/// numbers, everything else as text.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut a, mut b) = (a, b);
    loop {
        let (Some(x), Some(y)) = (a.chars().next(), b.chars().next()) else {
            return a.len().cmp(&b.len());
        };
        let ordering = if x.is_ascii_digit() && y.is_ascii_digit() {
            let (number_a, rest_a) = split_digits(a);
            let (number_b, rest_b) = split_digits(b);
            a = rest_a;
            b = rest_b;
            let (trimmed_a, trimmed_b) = (
                number_a.trim_start_matches('0'),
                number_b.trim_start_matches('0'),
            );
            trimmed_a
                .len()
                .cmp(&trimmed_b.len())
                .then_with(|| trimmed_a.cmp(trimmed_b))
                .then_with(|| number_a.len().cmp(&number_b.len()))
        } else {
            a = &a[x.len_utf8()..];
            b = &b[y.len_utf8()..];
            x.cmp(&y)
        };
        if ordering.is_ne() {
            return ordering;
        }
    }
}

fn split_digits(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_as_people_count() {
        let mut names = vec![
            "topic_56",
            "topic_6",
            "topic_10",
            "camera",
            "topic_06x",
            "topic_6a",
        ];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            names,
            [
                "camera",
                "topic_6",
                "topic_6a",
                "topic_06x",
                "topic_10",
                "topic_56"
            ]
        );
    }

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
