//! The date on fio's job status line, in ctime(3)'s form
//! (`Sun Dec  6 11:10:00 2026` and a newline), in UTC.

const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `secs` since the epoch as ctime(3) writes it, UTC.
pub fn ctime(secs: u64) -> String {
    let days = secs / 86_400;
    let in_day = secs % 86_400;
    let (year, month, day) = civil(days);
    format!(
        "{} {} {day:2} {:02}:{:02}:{:02} {year}\n",
        DAYS[(days % 7) as usize],
        MONTHS[month as usize - 1],
        in_day / 3600,
        in_day / 60 % 60,
        in_day % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01: eras of
/// 400 years (146097 days) counted from 0000-03-01, so the leap day ends
/// a year.
fn civil(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_as_ctime_writes_them() {
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970\n");
        // `date -u -d @1796555400`.
        assert_eq!(ctime(1_796_555_400), "Sun Dec  6 11:10:00 2026\n");
        // A leap day, and the day after.
        assert_eq!(ctime(951_782_400), "Tue Feb 29 00:00:00 2000\n");
        assert_eq!(ctime(951_868_799), "Tue Feb 29 23:59:59 2000\n");
        assert_eq!(ctime(951_868_800), "Wed Mar  1 00:00:00 2000\n");
    }
}
