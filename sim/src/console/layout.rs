//! How times and tables' heads are shown on the pages; the page itself is the frame's
//! (`licensing_host::console::layout`).

pub(crate) use licensing_host::console::layout::page;
use maud::{Markup, html};

/// The head of a table whose rows end with their buttons: a column for each of
/// `columns`, then the buttons', named for screen readers alone.
pub(crate) fn head_with_actions(columns: &[&str]) -> Markup {
    html! {
        thead {
            tr {
                @for column in columns { th scope="col" { (column) } }
                th scope="col" { span.visually-hidden { "Actions" } }
            }
        }
    }
}

/// Milliseconds since the Unix epoch as `2026-01-01 12:00:00.000 UTC` (a count past
/// chrono's years, ±262,143, as the number).
pub(crate) fn time(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms).map_or_else(
        || format!("{ms} ms"),
        |t| t.format("%Y-%m-%d %H:%M:%S%.3f UTC").to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_ends_with_the_buttons_column() {
        assert_eq!(
            head_with_actions(&["Id", "<b>"]).into_string(),
            r#"<thead><tr><th scope="col">Id</th><th scope="col">&lt;b&gt;</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>"#
        );
    }

    #[test]
    fn times_read_as_dates() {
        assert_eq!(time(0), "1970-01-01 00:00:00.000 UTC");
        assert_eq!(time(1_767_225_600_123), "2026-01-01 00:00:00.123 UTC");
        assert_eq!(
            time(951_782_400_000 + 86_399_999),
            "2000-02-29 23:59:59.999 UTC"
        );
        assert_eq!(time(-1), "1969-12-31 23:59:59.999 UTC");
    }
}
