//! Media as plain exports: functions returning a record shaped like a content block
//! (`data: list<u8>`, `mime-type: string`), written for any host.

wit_bindgen::generate!({ path: "wit", world: "plain-media" });

use exports::example::media::studio::{Guest, Media};

struct Component;

impl Guest for Component {
    fn pixel(level: u8) -> Media {
        // Not a valid PNG beyond its signature: the bytes' origin is what is checked.
        let mut data = b"\x89PNG\r\n\x1a\n".to_vec();
        data.push(level);
        Media { data, mime_type: "image/png".into() }
    }

    fn silence(samples: u32) -> Result<Media, String> {
        if samples > 1_000_000 {
            return Err(format!("{samples} samples is too long"));
        }
        let mut data = b"RIFF\0\0\0\0WAVE".to_vec();
        data.resize(12 + samples as usize, 0);
        Ok(Media { data, mime_type: "audio/wav".into() })
    }

    fn document() -> Media {
        Media { data: b"%PDF-1.7".to_vec(), mime_type: "application/pdf".into() }
    }
}

export!(Component);
