//! The asset-number allocator and its region markers.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

use super::Invalid;

/// The region marker: the first digit of every asset number. In an exported state (see
/// [`Simulator::export_state`](crate::Simulator::export_state)) it is written `domestic` or
/// `singapore`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Region {
    /// `8`, domestic.
    #[default]
    Domestic,
    /// `6`, Singapore.
    Singapore,
}

impl Region {
    /// The marker digit.
    pub fn marker(self) -> char {
        match self {
            Region::Domestic => '8',
            Region::Singapore => '6',
        }
    }

    fn index(self) -> usize {
        match self {
            Region::Domestic => 0,
            Region::Singapore => 1,
        }
    }

    fn of_marker(marker: char) -> Option<Self> {
        match marker {
            '8' => Some(Region::Domestic),
            '6' => Some(Region::Singapore),
            _ => None,
        }
    }
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Region::Domestic => "domestic",
            Region::Singapore => "singapore",
        })
    }
}

/// A region name that is neither `domestic`/`8` nor `singapore`/`6`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseRegionError(String);

impl fmt::Display for ParseRegionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown region {:?} (expected domestic, 8, singapore or 6)",
            self.0
        )
    }
}

impl std::error::Error for ParseRegionError {}

impl FromStr for Region {
    type Err = ParseRegionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "domestic" | "8" => Ok(Region::Domestic),
            "singapore" | "6" => Ok(Region::Singapore),
            _ => Err(ParseRegionError(s.to_string())),
        }
    }
}

/// The largest 9-digit sequence number.
const LAST_SEQUENCE: u32 = 999_999_999;

/// Hands out asset numbers: the region marker and a 9-digit sequence of its own per
/// region, so a number is never handed out twice.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(from = "AllocatorDoc", into = "AllocatorDoc")]
pub(crate) struct Allocator {
    region: Region,
    last: [u32; 2],
}

/// The allocator as exported: the last number handed out in each region.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AllocatorDoc {
    region: Region,
    last: LastNumbers,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LastNumbers {
    domestic: u32,
    singapore: u32,
}

impl From<AllocatorDoc> for Allocator {
    fn from(doc: AllocatorDoc) -> Self {
        Self {
            region: doc.region,
            last: [doc.last.domestic, doc.last.singapore],
        }
    }
}

impl From<Allocator> for AllocatorDoc {
    fn from(a: Allocator) -> Self {
        Self {
            region: a.region,
            last: LastNumbers {
                domestic: a.last[0],
                singapore: a.last[1],
            },
        }
    }
}

impl Allocator {
    pub fn new(region: Region) -> Self {
        Self {
            region,
            last: [0, 0],
        }
    }

    pub fn region(&self) -> Region {
        self.region
    }

    pub fn set_region(&mut self, region: Region) {
        self.region = region;
    }

    /// Whether every sequence is within the 9 digits; the JSON path of the first that is not.
    pub fn check(&self) -> Result<(), Invalid> {
        for region in [Region::Domestic, Region::Singapore] {
            let last = self.last[region.index()];
            if last > LAST_SEQUENCE {
                return Err(Invalid::new(
                    format!("allocator.last.{region}"),
                    format!("{last} is more than 9 digits"),
                ));
            }
        }
        Ok(())
    }

    /// The next `size` numbers of the current region, or `None` once the 9-digit
    /// sequence would run out.
    pub fn allocate(&mut self, size: u32) -> Option<Vec<String>> {
        let last = &mut self.last[self.region.index()];
        let end = last.checked_add(size).filter(|&end| end <= LAST_SEQUENCE)?;
        let marker = self.region.marker() as u8;
        let numbers = (*last + 1..=end).map(|n| asset_number(marker, n)).collect();
        *last = end;
        Some(numbers)
    }

    /// Whether `number` is a 10-digit number this allocator has handed out.
    pub fn allocated(&self, number: &str) -> bool {
        let mut chars = number.chars();
        let Some(region) = chars.next().and_then(Region::of_marker) else {
            return false;
        };
        let rest = chars.as_str();
        rest.len() == 9
            && rest.bytes().all(|b| b.is_ascii_digit())
            && rest
                .parse::<u32>()
                .is_ok_and(|n| n >= 1 && n <= self.last[region.index()])
    }
}

/// `marker` then `n` in 9 digits, zero-padded (`n` < 10⁹): what `format!("{marker}{n:09}")`
/// writes, without the formatting machinery, which cost about a thousand instructions per
/// number (a batch of numbers is allocated per call).
fn asset_number(marker: u8, mut n: u32) -> String {
    let mut digits = [b'0'; 10];
    digits[0] = marker;
    for d in digits[1..].iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
    debug_assert_eq!(n, 0, "a sequence number has at most 9 digits");
    std::str::from_utf8(&digits)
        .expect("ASCII digits")
        .to_owned()
}

/// Whether a string is an asset number's shape: exactly 10 ASCII digits.
pub(crate) fn is_asset_number(s: &str) -> bool {
    s.len() == 10 && s.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asset_numbers_are_written_as_format_writes_them() {
        for n in [
            1,
            9,
            10,
            99,
            12_345,
            100_000_000,
            987_654_321,
            LAST_SEQUENCE,
        ] {
            for marker in ['8', '6'] {
                assert_eq!(asset_number(marker as u8, n), format!("{marker}{n:09}"));
            }
        }
    }

    #[test]
    fn allocation_per_region() {
        let mut a = Allocator::new(Region::Domestic);
        assert_eq!(a.allocate(2).unwrap(), ["8000000001", "8000000002"]);
        a.set_region(Region::Singapore);
        assert_eq!(a.allocate(1).unwrap(), ["6000000001"]);
        assert!(a.allocated("8000000002"));
        assert!(!a.allocated("8000000003"));
        assert!(a.allocated("6000000001"));
        assert!(!a.allocated("9000000001"));
        assert!(!a.allocated("800000001"));
        a.last[1] = LAST_SEQUENCE - 1;
        assert!(a.allocate(2).is_none(), "sequence exhausted");
        assert_eq!(a.allocate(1).unwrap(), ["6999999999"]);
    }

    #[test]
    fn regions_parse() {
        assert_eq!("8".parse(), Ok(Region::Domestic));
        assert_eq!("Singapore".parse(), Ok(Region::Singapore));
        assert!("mars".parse::<Region>().is_err());
    }
}
