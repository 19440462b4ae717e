//! YAML scalars as ROS 2's tools write them.

/// `text` as a YAML double-quoted scalar: line breaks, tabs and other control characters
/// escaped, so that it reads back exactly (a single-quoted scalar folds line breaks).
pub fn double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `text` as `ros2 param dump` writes a string: single-quoted, the quote written twice;
/// double-quoted when a control character (a line break) would not survive that.
pub fn string_scalar(text: &str) -> String {
    if text.chars().any(char::is_control) {
        return double_quoted(text);
    }
    format!("'{}'", text.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_in_double_quotes() {
        assert_eq!(
            double_quoted("a\"b\\c\nd\te\u{1}"),
            r#""a\"b\\c\nd\te\u0001""#
        );
    }

    #[test]
    fn strings_are_single_quoted_unless_a_line_break_needs_escaping() {
        assert_eq!(string_scalar("it's"), "'it''s'");
        assert_eq!(string_scalar("two\nlines"), r#""two\nlines""#);
    }
}
