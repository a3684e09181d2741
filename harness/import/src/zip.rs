//! Reading the entries of a zip archive (an Inspect AI `.eval` log), bounded.
//!
//! A small reader over the central directory and `flate2`, not the `zip`
//! crate: `.eval` files are written by Python's `zipfile` with `deflate`
//! (or `stored`) entries, and by inspect_ai since 2026 with zstd ones,
//! which is all this needs; flate2 is a dependency already (cassette
//! bodies) and ruzstd has none. The `zip` crate would bring its own feature
//! set (encryption, bzip2, time) to audit for the one path that matters
//! here, the bound on what is inflated.
//!
//! The bound: the archive itself was read within `RELOOP_MAX_INPUT_BYTES`,
//! and the entries inflated from it share one budget of that size too, so
//! a zip bomb (a small entry that inflates to gigabytes) stops at the limit
//! with an error instead of filling memory. Encrypted entries, other
//! compression methods, zip64 archives and archives split over disks are
//! refused with what they are.

use std::io::Read as _;

/// One entry of the central directory.
#[derive(Debug, Clone)]
struct Entry {
    name: String,
    method: u16,
    flags: u16,
    crc: u32,
    compressed: u64,
    size: u64,
    local_offset: u64,
}

/// A zip archive held in memory, read entry by entry within a budget of
/// inflated bytes.
#[derive(Debug)]
pub struct Archive<'b> {
    bytes: &'b [u8],
    entries: Vec<Entry>,
    budget: u64,
}

/// Whether `bytes` start as a zip archive does (a local file header).
pub fn is_zip(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04")
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

const END_OF_DIRECTORY: u32 = 0x0605_4b50;
const DIRECTORY_ENTRY: u32 = 0x0201_4b50;
const LOCAL_HEADER: u32 = 0x0403_4b50;

impl<'b> Archive<'b> {
    /// The archive's central directory; `budget` bounds the bytes all the
    /// entries read from it may inflate to, together.
    pub fn open(bytes: &'b [u8], budget: u64) -> Result<Self, String> {
        // The end record is the last 22 bytes, before a comment of at most 64 KiB.
        let earliest = bytes.len().saturating_sub(22 + usize::from(u16::MAX));
        let end = (earliest..=bytes.len().saturating_sub(22))
            .rev()
            .find(|&at| u32_at(bytes, at) == Some(END_OF_DIRECTORY))
            .ok_or("a zip archive without its end of central directory record (a truncated file?)")?;
        let field = |offset: usize| u16_at(bytes, end + offset).unwrap_or(0);
        let (count, offset) = (field(10), u32_at(bytes, end + 16).unwrap_or(0));
        if field(4) != 0 || field(6) != 0 {
            return Err("a zip archive split over several disks: not read".into());
        }
        if count == u16::MAX || offset == u32::MAX {
            return Err("a zip64 archive (65,535 entries or 4 GiB and more): not read".into());
        }
        let mut entries = Vec::with_capacity(usize::from(count));
        let mut at = offset as usize;
        for index in 0..count {
            let bad = || format!("central directory entry {} of {count} is cut off or not one", index + 1);
            if u32_at(bytes, at) != Some(DIRECTORY_ENTRY) {
                return Err(bad());
            }
            let header = bytes.get(at..at + 46).ok_or_else(bad)?;
            let (name_len, extra_len, comment_len) = (u16_at(header, 28).unwrap_or(0), u16_at(header, 30).unwrap_or(0), u16_at(header, 32).unwrap_or(0));
            let name = bytes.get(at + 46..at + 46 + usize::from(name_len)).ok_or_else(bad)?;
            let entry = Entry {
                name: String::from_utf8_lossy(name).into_owned(),
                flags: u16_at(header, 8).unwrap_or(0),
                method: u16_at(header, 10).unwrap_or(0),
                crc: u32_at(header, 16).unwrap_or(0),
                compressed: u64::from(u32_at(header, 20).unwrap_or(0)),
                size: u64::from(u32_at(header, 24).unwrap_or(0)),
                local_offset: u64::from(u32_at(header, 42).unwrap_or(0)),
            };
            if [entry.compressed, entry.size, entry.local_offset].contains(&u64::from(u32::MAX)) {
                return Err(format!("entry {}: zip64 sizes (4 GiB and more): not read", entry.name));
            }
            entries.push(entry);
            at += 46 + usize::from(name_len) + usize::from(extra_len) + usize::from(comment_len);
        }
        Ok(Self { bytes, entries, budget })
    }

    /// The entries' names, in the central directory's order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|entry| entry.name.as_str())
    }

    /// The bytes of entry `name`, inflated and checked against its CRC-32;
    /// `Err` names the entry and what is wrong, also when the entries read
    /// so far and this one would go over the budget.
    pub fn read(&mut self, name: &str) -> Result<Vec<u8>, String> {
        let entry = self.entries.iter().find(|entry| entry.name == name).ok_or_else(|| format!("no entry {name}"))?.clone();
        let refuse = |why: String| format!("entry {name}: {why}");
        if entry.flags & 1 != 0 {
            return Err(refuse("encrypted: not read".into()));
        }
        if entry.size > self.budget {
            return Err(refuse(format!(
                "inflates to {} bytes, over what is left of the input limit ({} bytes; set RELOOP_MAX_INPUT_BYTES to raise it)",
                entry.size, self.budget
            )));
        }
        let local = usize::try_from(entry.local_offset).map_err(|e| refuse(e.to_string()))?;
        if u32_at(self.bytes, local) != Some(LOCAL_HEADER) {
            return Err(refuse("its local header is missing (a damaged archive)".into()));
        }
        let start = local + 30 + usize::from(u16_at(self.bytes, local + 26).unwrap_or(0)) + usize::from(u16_at(self.bytes, local + 28).unwrap_or(0));
        let data =
            usize::try_from(entry.compressed).ok().and_then(|len| self.bytes.get(start..start.checked_add(len)?)).ok_or_else(|| refuse("cut off".into()))?;
        let out = match entry.method {
            0 => data.to_vec(),
            8 => bounded(flate2::read::DeflateDecoder::new(data), entry.size).map_err(|e| refuse(format!("not valid deflate data: {e}")))?,
            // Inspect AI writes zstd entries since 2026 (`_util/zipfile.py`).
            93 => {
                let decoder = ruzstd::decoding::StreamingDecoder::new(data).map_err(|e| refuse(format!("not valid zstd data: {e}")))?;
                bounded(decoder, entry.size).map_err(|e| refuse(format!("not valid zstd data: {e}")))?
            }
            method => return Err(refuse(format!("compression method {method} (only stored, deflate and zstd are read)"))),
        };
        if out.len() as u64 != entry.size {
            return Err(refuse(format!("inflates to {} bytes or more, not the {} its directory entry says", out.len(), entry.size)));
        }
        let mut crc = flate2::Crc::new();
        crc.update(&out);
        if crc.sum() != entry.crc {
            return Err(refuse("its CRC-32 does not match (a damaged archive)".into()));
        }
        self.budget -= entry.size;
        Ok(out)
    }
}

/// What `decoder` inflates, at most one byte more than the `size` the
/// entry claims: a lying size is caught without inflating past the budget.
fn bounded(decoder: impl std::io::Read, size: u64) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    decoder.take(size + 1).read_to_end(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    /// A one-entry archive as Python's `zipfile` writes it.
    fn archive(name: &str, content: &[u8], method: u16) -> Vec<u8> {
        let data = if method == 8 {
            let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
            encoder.write_all(content).unwrap();
            encoder.finish().unwrap()
        } else {
            content.to_vec()
        };
        let mut crc = flate2::Crc::new();
        crc.update(content);
        let common = |out: &mut Vec<u8>| {
            out.extend(20u16.to_le_bytes());
            out.extend(0u16.to_le_bytes());
            out.extend(method.to_le_bytes());
            out.extend([0; 4]);
            out.extend(crc.sum().to_le_bytes());
            out.extend((data.len() as u32).to_le_bytes());
            out.extend((content.len() as u32).to_le_bytes());
            out.extend((name.len() as u16).to_le_bytes());
            out.extend(0u16.to_le_bytes());
        };
        let mut out = LOCAL_HEADER.to_le_bytes().to_vec();
        common(&mut out);
        out.extend(name.as_bytes());
        out.extend(&data);
        let directory = out.len();
        out.extend(DIRECTORY_ENTRY.to_le_bytes());
        out.extend(20u16.to_le_bytes());
        common(&mut out);
        out.extend([0; 14]);
        out.extend(name.as_bytes());
        let size = out.len() - directory;
        out.extend(END_OF_DIRECTORY.to_le_bytes());
        out.extend([0, 0, 0, 0, 1, 0, 1, 0]);
        out.extend((size as u32).to_le_bytes());
        out.extend((directory as u32).to_le_bytes());
        out.extend([0, 0]);
        out
    }

    #[test]
    fn stored_and_deflated_entries_read_back() {
        for method in [0, 8] {
            let bytes = archive("header.json", b"{\"version\": 2}", method);
            assert!(is_zip(&bytes));
            let mut zip = Archive::open(&bytes, 1000).unwrap();
            assert_eq!(zip.names().collect::<Vec<_>>(), ["header.json"]);
            assert_eq!(zip.read("header.json").unwrap(), b"{\"version\": 2}");
            assert!(zip.read("samples/1_epoch_1.json").unwrap_err().contains("no entry samples/1_epoch_1.json"));
        }
    }

    #[test]
    fn a_bomb_stops_at_the_budget_and_damage_is_named() {
        let bomb = archive("samples/1_epoch_1.json", &vec![b' '; 1 << 20], 8);
        assert!(bomb.len() < 5000, "a megabyte of spaces deflates to {} bytes", bomb.len());
        let error = Archive::open(&bomb, 1 << 16).unwrap().read("samples/1_epoch_1.json").unwrap_err();
        assert!(error.contains("entry samples/1_epoch_1.json: inflates to 1048576 bytes, over what is left of the input limit"), "{error}");
        // A directory entry that understates the size does not get past it either.
        let mut lying = bomb.clone();
        let directory = lying.windows(4).position(|w| w == DIRECTORY_ENTRY.to_le_bytes()).unwrap();
        lying[directory + 24..directory + 28].copy_from_slice(&100u32.to_le_bytes());
        let error = Archive::open(&lying, 1 << 16).unwrap().read("samples/1_epoch_1.json").unwrap_err();
        assert!(error.contains("inflates to 101 bytes or more, not the 100"), "{error}");
        let mut damaged = archive("a.json", b"{}", 0);
        damaged[30 + 6] = b'[';
        assert!(Archive::open(&damaged, 100).unwrap().read("a.json").unwrap_err().contains("CRC-32"));
        assert!(Archive::open(&damaged[..damaged.len() - 30], 100).unwrap_err().contains("end of central directory"));
    }
}
