//! Written against `wasi:keyvalue@0.2.0-draft` only, as for wasmCloud before draft2: no
//! toolhost SDK, no toolhost contract. The suite serves its exports as tools.

wit_bindgen::generate!({ path: ["../../../wit/keyvalue-0.2.0-draft", "wit"], world: "test:counter-draft/counter", generate_all });

use wasi::keyvalue::{atomics, batch, store};

struct Component;

fn bucket() -> Result<store::Bucket, String> {
    store::open("default").map_err(|e| format!("{e:?}"))
}

impl Guest for Component {
    fn hit(page: String) -> Result<u64, String> {
        atomics::increment(&bucket()?, &page, 1).map_err(|e| format!("{e:?}"))
    }

    fn hit_quietly(page: String) -> u64 {
        Self::hit(page).unwrap_or(0)
    }

    fn pages() -> Result<Vec<String>, String> {
        let bucket = bucket()?;
        let mut pages = Vec::new();
        let mut cursor = None;
        loop {
            let page = bucket.list_keys(cursor).map_err(|e| format!("{e:?}"))?;
            pages.extend(page.keys);
            match page.cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(pages),
            }
        }
    }

    fn counts(pages: Vec<String>) -> Result<Vec<u64>, String> {
        let found = batch::get_many(&bucket()?, &pages).map_err(|e| format!("{e:?}"))?;
        Ok(found
            .into_iter()
            .map(|pair| pair.and_then(|(_, bytes)| String::from_utf8(bytes).ok()?.parse().ok()).unwrap_or(0))
            .collect())
    }
}

export!(Component);
