//! What the model's code printed, kept up to a fixed number of bytes.
//!
//! The printed text travels back inside the tool's JSON output, so it must stay well
//! under the host's `max_output`; a script that prints without end keeps running (the
//! host's fuel and clock stop it) but costs no memory past the bound.

use std::cell::RefCell;

/// Bytes of printed text a call keeps; the rest is dropped and `truncated` is set.
pub const MAX_PRINTED: usize = 64 * 1024;

#[derive(Default)]
struct Printed {
    text: String,
    truncated: bool,
}

thread_local! {
    // The console's functions are plain function pointers called by the interpreter,
    // so the call's printed text lives here rather than in a value they could capture.
    static PRINTED: RefCell<Printed> = RefCell::new(Printed::default());
}

/// Forgets what an earlier call printed.
pub fn reset() {
    PRINTED.with_borrow_mut(|printed| *printed = Printed::default());
}

/// Appends `text`, cut on a character boundary when it would pass [`MAX_PRINTED`].
pub fn print(text: &str) {
    PRINTED.with_borrow_mut(|printed| {
        if printed.truncated {
            return;
        }
        let room = MAX_PRINTED - printed.text.len();
        if text.len() <= room {
            printed.text.push_str(text);
            return;
        }
        let mut cut = room;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        printed.text.push_str(&text[..cut]);
        printed.truncated = true;
    });
}

/// Takes what was printed and whether some of it was dropped.
pub fn take() -> (String, bool) {
    PRINTED.with_borrow_mut(|printed| {
        let taken = std::mem::take(printed);
        (taken.text, taken.truncated)
    })
}

/// The last `bytes` (about) of what was printed so far, for a failure message.
pub fn tail(bytes: usize) -> String {
    PRINTED.with_borrow(|printed| {
        let mut start = printed.text.len().saturating_sub(bytes);
        while !printed.text.is_char_boundary(start) {
            start += 1;
        }
        printed.text[start..].to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::{MAX_PRINTED, print, reset, tail, take};

    #[test]
    fn text_past_the_bound_is_cut_on_a_character_and_marked() {
        reset();
        print(&"a".repeat(MAX_PRINTED - 1));
        print("éé");
        print("more");
        let (text, truncated) = take();
        assert_eq!(text.len(), MAX_PRINTED - 1, "a two-byte character does not fit in one byte");
        assert!(truncated);
    }

    #[test]
    fn what_fits_is_kept_whole_and_the_tail_starts_on_a_character() {
        reset();
        print("héllo\n");
        assert_eq!(tail(6), "éllo\n");
        assert_eq!(tail(5), "llo\n", "the cut moves past the second byte of é");
        assert_eq!(take(), ("héllo\n".to_owned(), false));
    }
}
