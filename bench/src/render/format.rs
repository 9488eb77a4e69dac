//! How figures are written: sizes, times, ratios, counts.

/// `2.5 MiB`, `67.3 KiB`.
pub fn kib(bytes: f64) -> String {
    if bytes.is_nan() {
        "—".into()
    } else if bytes >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", bytes / 1024.0 / 1024.0)
    } else {
        format!("{:.1} KiB", bytes / 1024.0)
    }
}

/// `5.2 ms`, `428 µs`, from microseconds.
pub fn ms(us: f64) -> String {
    if us.is_nan() {
        "—".into()
    } else if us >= 1000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else {
        format!("{us:.0} µs")
    }
}

/// `1.84×`, or `—` when nothing was measured.
pub fn times(ratio: f64) -> String {
    if ratio.is_finite() {
        format!("{ratio:.2}×")
    } else {
        "—".into()
    }
}

/// `1.84× (1.70–2.10× over 21 runs)`.
pub fn times_over(med: f64, lo: f64, hi: f64, n: usize, what: &str) -> String {
    if n > 1 {
        format!("{med:.2}× ({lo:.2}–{hi:.2}× over {n} {what})")
    } else {
        times(med)
    }
}

/// Seconds with two decimals.
pub fn fmt_secs(s: f64) -> String {
    format!("{s:.2}")
}

/// `30,000,000`.
pub fn thousands(n: f64) -> String {
    let n = n as u64;
    if n >= 1000 {
        format!("{},{:03}", thousands((n / 1000) as f64), n % 1000)
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::{kib, ms, thousands, times, times_over};

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(1_000.0), "1,000");
        assert_eq!(thousands(50_000.0), "50,000");
        assert_eq!(thousands(30_000_000.0), "30,000,000");
        assert_eq!(thousands(1_002_003.0), "1,002,003");
    }

    #[test]
    fn sizes_times_and_ratios() {
        assert_eq!(kib(2048.0), "2.0 KiB");
        assert_eq!(kib(3.0 * 1024.0 * 1024.0), "3.0 MiB");
        assert_eq!(kib(f64::NAN), "—");
        assert_eq!(
            (ms(250.0), ms(1500.0), ms(f64::NAN)),
            ("250 µs".into(), "1.5 ms".into(), "—".into())
        );
        assert_eq!(times(f64::INFINITY), "—");
        assert_eq!(
            times_over(1.2, 1.0, 1.5, 3, "runs"),
            "1.20× (1.00–1.50× over 3 runs)"
        );
        assert_eq!(times_over(1.2, 1.2, 1.2, 1, "runs"), "1.20×");
    }
}
