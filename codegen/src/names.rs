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
}
