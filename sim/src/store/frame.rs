//! The log's records on disk: `len | crc32(len, payload) | payload`, both numbers
//! little-endian `u32`. A record is whole or it is not; only the last one can be torn.

use bytes::Bytes;

/// CRC-32 (IEEE), the checksum of each record.
const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

pub(crate) fn crc32(parts: &[&[u8]]) -> u32 {
    let mut c = !0u32;
    for part in parts {
        for &b in *part {
            c = CRC_TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8);
        }
    }
    !c
}

/// Bytes before a record's payload: its length and checksum.
pub(crate) const FRAME: usize = 8;
/// No record is larger (a request body is at most 256 MiB).
const MAX_RECORD: usize = 1 << 30;

/// One record: its length and checksum, then `meta` (one JSON object), a newline and
/// `body`.
pub(crate) fn frame(meta: &[u8], body: &[u8]) -> std::io::Result<Vec<u8>> {
    let len = meta.len() + 1 + body.len();
    let len32 = u32::try_from(len)
        .ok()
        .filter(|_| len <= MAX_RECORD)
        .ok_or_else(|| std::io::Error::other("a record larger than 1 GiB"))?;
    let mut record = Vec::with_capacity(FRAME + len);
    record.extend_from_slice(&len32.to_le_bytes());
    record.extend_from_slice(&[0; 4]);
    record.extend_from_slice(meta);
    record.push(b'\n');
    record.extend_from_slice(body);
    let crc = crc32(&[&record[..4], &record[FRAME..]]);
    record[4..FRAME].copy_from_slice(&crc.to_le_bytes());
    Ok(record)
}

/// The whole records of a log (byte offset, payload), and where a torn last record
/// starts.
#[derive(Debug)]
pub(crate) struct Records {
    pub whole: Vec<(usize, Bytes)>,
    pub torn: Option<usize>,
}

/// A record that is damaged where a crash cannot have damaged it: not the last one.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Damage {
    /// The number of the damaged record, from 1.
    pub record: usize,
    /// Where it starts.
    pub offset: usize,
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "record {} at byte {} is damaged (its checksum does not match) and more records \
             follow it; the changes after it cannot be replayed",
            self.record, self.offset
        )
    }
}

/// The payload end of a whole record starting at `rest[0]`, if there is one.
fn whole_at(rest: &[u8]) -> Option<usize> {
    let len = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
    let end = FRAME + len;
    if len == 0 || end > rest.len() {
        return None;
    }
    let crc = u32::from_le_bytes(rest[4..FRAME].try_into().ok()?);
    (crc == crc32(&[&rest[..4], &rest[FRAME..end]])).then_some(end)
}

/// Reads a log's records. A bad record is a torn write only when nothing whole follows
/// it: an append is one write at the end, so a crash can leave a prefix of the last
/// record (or zeros a file system allocated), never a whole record after a broken one.
/// A bad record that a whole one follows is damage: the log is refused.
pub(crate) fn records(bytes: &Bytes) -> Result<Records, Damage> {
    let mut records = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        match whole_at(&bytes[pos..]) {
            Some(end) => {
                records.push((pos, bytes.slice(pos + FRAME..pos + end)));
                pos += end;
            }
            None => {
                // Every payload starts with `{` (its entry), which keeps this scan cheap.
                let later = (pos + 1..bytes.len().saturating_sub(FRAME))
                    .filter(|&at| bytes[at + FRAME] == b'{')
                    .any(|at| whole_at(&bytes[at..]).is_some());
                if later {
                    return Err(Damage {
                        record: records.len() + 1,
                        offset: pos,
                    });
                }
                return Ok(Records {
                    whole: records,
                    torn: Some(pos),
                });
            }
        }
    }
    Ok(Records {
        whole: records,
        torn: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_is_the_ieee_one() {
        assert_eq!(crc32(&[b"123456789"]), 0xCBF4_3926);
        assert_eq!(crc32(&[b"1234", b"56789"]), 0xCBF4_3926);
    }

    #[test]
    fn a_torn_last_record_is_ignored_and_a_damaged_one_before_others_refused() {
        let one = frame(b"{\"a\":1}", b"body").unwrap();
        let two = frame(b"{\"b\":2}", b"").unwrap();
        let log: Vec<u8> = [one.clone(), two.clone()].concat();
        let Records { whole, torn } = records(&Bytes::from(log.clone())).unwrap();
        assert_eq!((whole.len(), torn), (2, None));
        assert_eq!(&whole[0].1[..], b"{\"a\":1}\nbody");

        for cut in 1..two.len() {
            let torn_log = Bytes::from(log[..one.len() + cut].to_vec());
            let Records { whole, torn } = records(&torn_log).unwrap();
            assert_eq!((whole.len(), torn), (1, Some(one.len())), "cut at {cut}");
        }
        let zeros = Bytes::from([one.clone(), vec![0; 64]].concat());
        assert_eq!(records(&zeros).unwrap().torn, Some(one.len()));
        let mut garbled_last = log.clone();
        *garbled_last.last_mut().unwrap() ^= 1;
        assert_eq!(
            records(&Bytes::from(garbled_last)).unwrap().torn,
            Some(one.len())
        );

        let mut damaged = log.clone();
        damaged[FRAME + 2] ^= 1;
        let Err(error) = records(&Bytes::from(damaged)) else {
            panic!("a damaged record before another is refused");
        };
        assert!(
            error
                .to_string()
                .starts_with("record 1 at byte 0 is damaged"),
            "{error}"
        );
    }

    #[test]
    fn a_length_overwritten_in_the_middle_is_damage_not_a_torn_tail() {
        let one = frame(b"{\"a\":1}", b"").unwrap();
        let two = frame(b"{\"b\":2}", b"").unwrap();
        let three = frame(b"{\"c\":3}", b"").unwrap();
        let mut log = [one.clone(), two, three].concat();
        // A length that runs past the end of the file, as a torn record's would.
        log[one.len()..one.len() + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(
            records(&Bytes::from(log)).unwrap_err(),
            Damage {
                record: 2,
                offset: one.len()
            }
        );
        let garbage = Bytes::from(vec![0x5a; 300]);
        assert_eq!(records(&garbage).unwrap().torn, Some(0));
    }
}
