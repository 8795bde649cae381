//! A traceback as text a model can act on: runs of identical frames (a runaway
//! recursion) folded, and bounded. Pure text, so that it is tested natively without the
//! interpreter that writes the traceback (`code/python`).

/// Identical lines in a row kept before the rest of the run is folded into one note.
const REPEATS_KEPT: usize = 3;

/// Bytes of traceback kept: its first line and its end, where the exception is named.
/// The host keeps 4 KiB of a failure message, and the printed output comes after this.
const MAX_TRACEBACK: usize = 2048;

/// Folds each run of more than [`REPEATS_KEPT`] identical lines.
pub fn fold_repeats(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut folded = String::new();
    let mut i = 0;
    while i < lines.len() {
        let run = lines[i..].iter().take_while(|line| **line == lines[i]).count();
        for line in &lines[i..i + run.min(REPEATS_KEPT)] {
            folded.push_str(line);
            folded.push('\n');
        }
        if run > REPEATS_KEPT {
            folded.push_str(&format!("  [the line above repeated {} more times]\n", run - REPEATS_KEPT));
        }
        i += run;
    }
    folded.truncate(folded.trim_end().len());
    folded
}

/// Keeps the first line and as much of the end as fits in [`MAX_TRACEBACK`].
pub fn bound(text: &str) -> String {
    if text.len() <= MAX_TRACEBACK {
        return text.to_owned();
    }
    let first_line = text.lines().next().unwrap_or_default();
    let mut start = text.len() - MAX_TRACEBACK.saturating_sub(first_line.len()).min(text.len());
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("{first_line}\n  [... earlier frames left out ...]\n{}", &text[start..])
}

#[cfg(test)]
mod tests {
    use super::{MAX_TRACEBACK, bound, fold_repeats};

    #[test]
    fn a_run_of_identical_frames_is_folded_after_three() {
        let text = "Traceback (most recent call last):\n  f\n  f\n  f\n  f\n  f\nRecursionError: deep";
        assert_eq!(
            fold_repeats(text),
            "Traceback (most recent call last):\n  f\n  f\n  f\n  [the line above repeated 2 more times]\nRecursionError: deep"
        );
    }

    #[test]
    fn a_long_traceback_keeps_its_first_line_and_its_end() {
        let text = format!("Traceback:\n{}ValueError: bad", "  frame ü\n".repeat(1000));
        let bounded = bound(&text);
        assert!(bounded.starts_with("Traceback:\n  [... earlier frames left out ...]\n"));
        assert!(bounded.ends_with("ValueError: bad"));
        assert!(bounded.len() <= MAX_TRACEBACK + 64);
    }

    #[test]
    fn a_first_line_longer_than_the_bound_is_kept_with_nothing_after_it() {
        let text = format!("{}\nValueError: bad", "x".repeat(MAX_TRACEBACK + 10));
        let bounded = bound(&text);
        assert!(bounded.starts_with("xxx"), "{bounded:.40}");
        assert!(bounded.ends_with("[... earlier frames left out ...]\n"), "{bounded:.40}");
        assert!(bounded.len() <= text.len() + 64);
    }
}
