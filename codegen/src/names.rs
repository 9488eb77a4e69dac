//! Rust names for the spec's names, as progenitor and typify derive them.

/// `camelCase`/`snake_case` → `PascalCase`, as progenitor names builders and types: with
/// heck, which progenitor and typify name with.
pub fn pascal(s: &str) -> String {
    heck::ToUpperCamelCase::to_upper_camel_case(s)
}

/// `camelCase` → `snake_case`, as typify names fields (with heck, as typify does).
pub fn snake(s: &str) -> String {
    heck::ToSnakeCase::to_snake_case(s)
}

/// `camelCase` → `SCREAMING_SNAKE_CASE`, for the operation table's statics.
pub fn screaming(s: &str) -> String {
    snake(s).to_uppercase()
}

/// The Rust field name for a wire name, as a Rust developer would write it: words split at
/// case changes, an acronym kept as one word, including its plural (`assetIDs` →
/// `asset_ids`, `HTTPServer` → `http_server`, `pageNum` → `page_num`). typify splits an
/// acronym's plural into letters (`asset_i_ds`); [`field_renames`] lists where it differs.
pub fn rust_field(wire: &str) -> String {
    let chars: Vec<char> = wire.chars().collect();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1).copied();
        let boundary = match prev {
            None => false,
            Some(_) if c == '_' || c == '-' => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                continue;
            }
            Some(p) if c.is_uppercase() && (p.is_lowercase() || p.is_ascii_digit()) => true,
            // The last capital of an acronym starts the next word (`HTTPServer`), unless
            // what follows is the acronym's plural `s` (`IDs`).
            Some(p) if c.is_uppercase() && p.is_uppercase() => next.is_some_and(|n| {
                n.is_lowercase()
                    && !(n == 's' && chars.get(i + 2).is_none_or(|a| !a.is_lowercase()))
            }),
            _ => false,
        };
        if boundary && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words.join("_")
}

/// `(typify's name, the Rust name)` for every wire name where they differ.
pub fn field_renames<'a>(wire_names: impl IntoIterator<Item = &'a str>) -> Vec<(String, String)> {
    use heck::ToSnakeCase;
    let mut out: Vec<(String, String)> = wire_names
        .into_iter()
        .filter_map(|w| {
            let typify = w.to_snake_case();
            let ours = rust_field(w);
            (typify != ours).then_some((typify, ours))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Every property name of the spec's schemas, at any depth.
pub fn wire_names(spec: &openapiv3::OpenAPI) -> Vec<String> {
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::Object(props)) = map.get("properties") {
                    out.extend(props.keys().cloned());
                }
                map.values().for_each(|c| walk(c, out));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|c| walk(c, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(
        &serde_json::to_value(spec).expect("an OpenAPI document serialises"),
        &mut out,
    );
    out
}

/// Renames typify's field names to [`rust_field`]'s wherever they differ: the fields,
/// the builders' fields and setters, and the builders' messages that name them. Returns
/// how many identifiers it changed.
pub fn apply_field_renames(items: &mut [syn::Item], renames: &[(String, String)]) -> usize {
    use syn::visit_mut::VisitMut;
    struct Renamer<'a> {
        renames: &'a [(String, String)],
        changed: usize,
    }
    impl VisitMut for Renamer<'_> {
        fn visit_ident_mut(&mut self, ident: &mut syn::Ident) {
            if let Some((_, to)) = self.renames.iter().find(|(from, _)| ident == from) {
                *ident = syn::Ident::new(to, ident.span());
                self.changed += 1;
            }
        }
        // Macro arguments (`format!("… for asset_i_ds: {e}")`) are tokens, not expressions.
        fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
            mac.tokens = self.tokens(std::mem::take(&mut mac.tokens));
        }
        fn visit_lit_str_mut(&mut self, lit: &mut syn::LitStr) {
            let value = lit.value();
            let mut new = value.clone();
            for (from, to) in self.renames {
                // Only whole words: "no value supplied for asset_i_ds".
                new = new
                    .split_inclusive(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .map(|part| {
                        let word =
                            part.trim_end_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
                        if word == from {
                            format!("{to}{}", &part[word.len()..])
                        } else {
                            part.to_string()
                        }
                    })
                    .collect();
            }
            if new != value {
                *lit = syn::LitStr::new(&new, lit.span());
            }
        }
    }
    impl Renamer<'_> {
        fn tokens(&self, tokens: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
            use proc_macro2::{Group, Literal, TokenTree};
            tokens
                .into_iter()
                .map(|t| match t {
                    TokenTree::Group(g) => {
                        let mut new = Group::new(g.delimiter(), self.tokens(g.stream()));
                        new.set_span(g.span());
                        TokenTree::Group(new)
                    }
                    TokenTree::Literal(l) => match syn::parse_str::<syn::LitStr>(&l.to_string()) {
                        Ok(mut lit) => {
                            let mut copy = Renamer {
                                renames: self.renames,
                                changed: 0,
                            };
                            copy.visit_lit_str_mut(&mut lit);
                            let mut new = Literal::string(&lit.value());
                            new.set_span(l.span());
                            TokenTree::Literal(new)
                        }
                        Err(_) => TokenTree::Literal(l),
                    },
                    other => other,
                })
                .collect()
        }
    }
    let mut renamer = Renamer {
        renames,
        changed: 0,
    };
    for item in items {
        renamer.visit_item_mut(item);
    }
    renamer.changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(pascal("bindEnterprise"), "BindEnterprise");
        assert_eq!(pascal("new_buy"), "NewBuy");
        assert_eq!(pascal("Y"), "Y");
        assert_eq!(snake("pageNum"), "page_num");
        assert_eq!(snake("hasNextPage"), "has_next_page");
        assert_eq!(screaming("listMembers"), "LIST_MEMBERS");
    }

    #[test]
    fn rust_field_names() {
        for (wire, rust) in [
            ("assetIDs", "asset_ids"),
            ("pageNum", "page_num"),
            ("cloudAccountGlobalId", "cloud_account_global_id"),
            ("HTTPServer", "http_server"),
            ("userIDsList", "user_ids_list"),
            ("gmsPid", "gms_pid"),
            ("g_nonce", "g_nonce"),
            ("isDefault", "is_default"),
            ("keyShellNumber", "key_shell_number"),
            ("v2Name", "v2_name"),
        ] {
            assert_eq!(rust_field(wire), rust, "{wire}");
        }
        assert_eq!(
            field_renames(["assetIDs", "pageNum", "assetIDs"]),
            [("asset_i_ds".to_string(), "asset_ids".to_string())]
        );
    }

    #[test]
    fn renames_reach_fields_setters_and_messages() {
        let mut items: Vec<syn::Item> = vec![
            syn::parse_quote! { pub struct A { pub asset_i_ds: Vec<String> } },
            syn::parse_quote! {
                impl B {
                    pub fn asset_i_ds<T>(mut self, value: T) -> Self {
                        self.asset_i_ds = Err("no value supplied for asset_i_ds".to_string());
                        let _ = format!("error converting supplied value for asset_i_ds: {e}");
                        self
                    }
                }
            },
        ];
        let renames = field_renames(["assetIDs"]);
        assert_eq!(apply_field_renames(&mut items, &renames), 3);
        let code = quote::quote!(#(#items)*).to_string();
        assert!(!code.contains("asset_i_ds"), "{code}");
        assert!(code.contains("no value supplied for asset_ids"), "{code}");
        assert!(code.contains("supplied value for asset_ids: {e}"), "{code}");
    }
}
