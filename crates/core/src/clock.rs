//! Wall-clock helpers. Latency is measured against the wall clock because the service stamps
//! records with wall-clock arrival times; everything internal to a process uses `Instant`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Now as microseconds since the Unix epoch.
pub fn now_micros() -> i64 {
    micros(SystemTime::now())
}

pub fn micros(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_micros() as i64,
        Err(e) => -(e.duration().as_micros() as i64),
    }
}

/// Epoch seconds (as the AWS JSON protocols carry timestamps) to a `SystemTime`.
pub fn from_epoch_secs(secs: f64) -> SystemTime {
    if secs >= 0.0 {
        UNIX_EPOCH + Duration::from_secs_f64(secs)
    } else {
        UNIX_EPOCH - Duration::from_secs_f64(-secs)
    }
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `Tue Jun 20 22:19:49 UTC 2017`, the form the service's messages use.
pub fn http_date_ms(ms: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let tod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} UTC {}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(m - 1) as usize],
        d,
        tod / 3600,
        (tod % 3600) / 60,
        tod % 60,
        y
    )
}

/// `2026-11-30T03:18:48Z` (RFC 3339, UTC), for S3 XML and reports.
pub fn rfc3339_ms(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let tod = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        tod / 3600,
        (tod % 3600) / 60,
        tod % 60,
        ms.rem_euclid(1000)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_format_like_the_service() {
        assert_eq!(
            http_date_ms(1_497_997_189_000),
            "Tue Jun 20 22:19:49 UTC 2017"
        );
        assert_eq!(rfc3339_ms(1_796_008_728_123), "2026-11-30T03:18:48.123Z");
        assert_eq!(http_date_ms(0), "Thu Jan 01 00:00:00 UTC 1970");
    }
}
