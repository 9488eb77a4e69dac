//! Rust names for the spec's names, as progenitor and typify derive them.

/// `camelCase`/`snake_case` → `PascalCase`, as progenitor names builders and types.
pub fn pascal(s: &str) -> String {
    let mut out = String::new();
    let mut upper = true;
    for c in s.chars() {
        if c == '_' || c == '-' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `camelCase` → `snake_case`, as typify names fields.
pub fn snake(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
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
}
