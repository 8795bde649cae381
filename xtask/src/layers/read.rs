//! Reads one source file of the host crate with syn: every path it names into the crate
//! (`use` trees, paths in code and types, and `crate::…` inside macro calls), which of
//! its `use` items re-export, its functions' lengths and its first `//!` line.

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// A path into the crate, as the file wrote it, made absolute (no `crate`, `self` or
/// `super` left): `crate::registry::Snapshot` is `["registry", "Snapshot"]`.
#[derive(Debug, Clone)]
pub struct Named {
    pub path: Vec<String>,
    pub line: usize,
    /// Inside a `#[cfg(test)]` module.
    pub in_test: bool,
    /// A `pub use` of a folder's face (`mod.rs`, `lib.rs`): it offers the item, it does
    /// not depend on it.
    pub reexport: bool,
}

/// A name a face offers through `pub use`: the name, and the absolute path it stands for.
#[derive(Debug, Clone)]
pub struct Offered {
    pub name: String,
    pub path: Vec<String>,
}

/// What one file says.
#[derive(Debug, Default)]
pub struct FileFacts {
    pub named: Vec<Named>,
    pub offered: Vec<Offered>,
    /// `(name, first line, lines)` of every function with a body.
    pub functions: Vec<(String, usize, usize)>,
    pub summary: Option<String>,
}

/// Reads `text`, the file of module `module` (`["registry", "snapshot"]`), whose folder
/// face it is when `is_face`.
pub fn read(text: &str, module: &[String], is_face: bool) -> Result<FileFacts, String> {
    let file = syn::parse_file(text).map_err(|e| format!("line {}: {e}", e.span().start().line))?;
    let summary = text.lines().find_map(|line| line.trim_start().strip_prefix("//!")).map(|l| l.trim().to_owned());
    let mut visitor =
        Visitor { module: module.to_vec(), is_face, in_test: false, depth: 0, facts: FileFacts::default() };
    visitor.visit_file(&file);
    visitor.facts.summary = summary.filter(|line| !line.is_empty());
    Ok(visitor.facts)
}

struct Visitor {
    /// The module the code being visited is in (the file's, plus inline modules).
    module: Vec<String>,
    is_face: bool,
    in_test: bool,
    /// How many inline modules deep: re-exports count only at a face's top level.
    depth: usize,
    facts: FileFacts,
}

impl Visitor {
    /// `segments` made absolute from the current module; `None` for a path that does
    /// not start in this crate (an extern crate, a local name).
    fn absolute(&self, segments: &[String]) -> Option<Vec<String>> {
        let mut base = self.module.clone();
        let mut rest = segments;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            _ => return None,
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    fn name(&mut self, segments: &[String], line: usize, reexport: bool) {
        if let Some(path) = self.absolute(segments) {
            let in_test = self.in_test;
            self.facts.named.push(Named { path, line, in_test, reexport });
        }
    }

    /// Paths written as `crate :: a :: b` (or `super :: …`) inside a macro's tokens.
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(group) => self.scan_tokens(group.stream()),
                TokenTree::Ident(ident) if ident == "crate" || ident == "super" => {
                    let line = ident.span().start().line;
                    let mut segments = vec![ident.to_string()];
                    let mut j = i + 1;
                    while let (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)), Some(TokenTree::Ident(next))) =
                        (trees.get(j), trees.get(j + 1), trees.get(j + 2))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        segments.push(next.to_string());
                        j += 3;
                    }
                    if segments.len() > 1 {
                        self.name(&segments, line, false);
                    }
                    i = j.max(i + 1);
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree, line: usize, public: bool) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.use_tree(prefix, &path.tree, line, public);
                prefix.pop();
            }
            syn::UseTree::Name(name) => self.use_leaf(prefix, name.ident.to_string(), None, line, public),
            syn::UseTree::Rename(rename) => {
                self.use_leaf(prefix, rename.ident.to_string(), Some(rename.rename.to_string()), line, public)
            }
            syn::UseTree::Glob(_) => {
                let segments = prefix.clone();
                self.name(&segments, line, public && self.is_face && self.depth == 0);
            }
            syn::UseTree::Group(group) => {
                for tree in &group.items {
                    self.use_tree(prefix, tree, line, public);
                }
            }
        }
    }

    fn use_leaf(&mut self, prefix: &[String], leaf: String, alias: Option<String>, line: usize, public: bool) {
        let mut segments = prefix.to_vec();
        // `use crate::registry::{self, Layer}`: `self` is the module itself.
        if leaf != "self" {
            segments.push(leaf.clone());
        }
        // A face may also offer a child module's item by its bare path (`pub use
        // snapshot::Snapshot`): a path whose first segment is no keyword is relative.
        let relative = !matches!(segments.first().map(String::as_str), Some("crate" | "self" | "super"));
        let written = if relative && self.is_face && public {
            std::iter::once("self".to_owned()).chain(segments.iter().cloned()).collect()
        } else {
            segments.clone()
        };
        let reexport = public && self.is_face && self.depth == 0;
        if reexport && let Some(path) = self.absolute(&written) {
            let name = alias.unwrap_or_else(|| segments.last().cloned().unwrap_or(leaf));
            self.facts.offered.push(Offered { name, path });
        }
        self.name(&written, line, reexport);
    }

    fn function(&mut self, name: String, sig: &syn::Signature, block: &syn::Block) {
        let first = sig.fn_token.span.start().line;
        let last = block.brace_token.span.close().end().line;
        self.facts.functions.push((name, first, last + 1 - first));
    }
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg") && attr.meta.require_list().is_ok_and(|list| list.tokens.to_string() == "test")
    })
}

impl<'ast> Visit<'ast> for Visitor {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let public = !matches!(item.vis, syn::Visibility::Inherited);
        let line = item.use_token.span.start().line;
        self.use_tree(&mut Vec::new(), &item.tree, line, public);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        let Some((_, items)) = &item.content else { return };
        let was_test = self.in_test;
        self.in_test |= is_cfg_test(&item.attrs);
        self.module.push(item.ident.to_string());
        self.depth += 1;
        for item in items {
            self.visit_item(item);
        }
        self.depth -= 1;
        self.module.pop();
        self.in_test = was_test;
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|segment| segment.ident.to_string()).collect();
        if matches!(segments.first().map(String::as_str), Some("crate" | "super")) {
            let line = path.segments[0].ident.span().start().line;
            self.name(&segments, line, false);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.scan_tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        self.function(item.sig.ident.to_string(), &item.sig, &item.block);
        syn::visit::visit_item_fn(self, item);
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        self.function(item.sig.ident.to_string(), &item.sig, &item.block);
        syn::visit::visit_impl_item_fn(self, item);
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        if let Some(block) = &item.default {
            self.function(item.sig.ident.to_string(), &item.sig, block);
        }
        syn::visit::visit_trait_item_fn(self, item);
    }
}
