//! What every console page shares: the document, the navigation, the sign-in form, and
//! how times are shown.

use axum::{http::StatusCode, response::Response};
use maud::{DOCTYPE, Markup, html};

use super::{PAGES_STYLE, ROOT, Request, html};

/// A whole page: `current` is the section's path below the root.
pub(crate) fn page(request: &Request, current: &str, title: &str, main: Markup) -> Response {
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            (head(request, title))
            body {
                a.skip href="#main" { "Skip to content" }
                header {
                    p.brand { (request.mode.brand) }
                    nav aria-label="Console sections" {
                        ul {
                            @for &(path, name) in request.mode.sections.iter() {
                                li {
                                    a href=(format!("{ROOT}{path}"))
                                        aria-current=[(path == current).then_some("page")] { (name) }
                                }
                            }
                        }
                    }
                    @if request.session.csrf.is_some() {
                        form.sign-out method="post" action=(format!("{ROOT}sign-out")) {
                            button type="submit" data-sign-out { "Sign out" }
                        }
                    }
                }
                main #main tabindex="-1" {
                    h1 { (title) }
                    (main)
                }
                div #status role="status" aria-live="polite" {}
            }
        }
    };
    html(StatusCode::OK, markup)
}

fn head(request: &Request, title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (title) " · " (request.mode.brand) }
            @if let Some(csrf) = &request.session.csrf {
                meta name="sandbox-csrf" content=(csrf);
            }
            link rel="stylesheet" href=(format!("{ROOT}console.css"));
            @if request.mode.style.is_some() {
                link rel="stylesheet" href=(format!("{ROOT}{PAGES_STYLE}"));
            }
            script src=(format!("{ROOT}console.js")) defer {}
        }
    }
}

/// The answer to a page request without the admin token: a sign-in form, and nothing of
/// the sandbox.
pub(crate) fn sign_in_page(request: &Request, note: Option<&str>) -> Response {
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            (head(request, "Sign in"))
            body {
                main #main {
                    h1 { "Sign in to the sandbox console" }
                    p { "This " (request.mode.server) "'s admin API needs its admin token (" code { "--admin-token" } ")." }
                    @if let Some(note) = note {
                        p.error role="alert" { (note) }
                    }
                    form method="post" action=(format!("{ROOT}sign-in")) {
                        label for="token" { "Admin token" }
                        input #token type="password" name="token" autocomplete="current-password" required;
                        button type="submit" { "Sign in" }
                    }
                }
            }
        }
    };
    html(StatusCode::UNAUTHORIZED, markup)
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
