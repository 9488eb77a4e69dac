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

/// Milliseconds since the Unix epoch as `2026-01-01 12:00:00.000 UTC`.
pub(crate) fn time(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:03} UTC",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
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
