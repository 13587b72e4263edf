//! The launch trace (`EMU_CUDA_TRACE`), schema `simtwin-trace/1`: what the driver
//! writes and `parity bisect` reads. The format is documented in `emu-driver/TRACE_FORMAT.md`
//! at the repository's root; this module is its one definition.
//!
//! A trace is JSON Lines: a [`Header`] line, then one [`Record`] per traced kernel
//! launch or device-to-host copy in the order they completed (stream order on one
//! stream; completion order across streams), then an [`End`] record written at exit.
//! A trace without its end record was cut short (the process was killed); readers say
//! so. Buffer contents asked for with `EMU_CUDA_TRACE_DUMP` go to a sidecar file
//! (`PATH.dump`), referenced by offset and length.

use serde::{Deserialize, Serialize};

/// The schema name of the header line.
pub const SCHEMA: &str = "simtwin-trace/1";
/// The hash function's name in the header.
pub const HASH_NAME: &str = "st64";

/// The first line of a trace.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Header {
    /// [`SCHEMA`].
    pub schema: String,
    /// `emulated` or `pass-through PATH`.
    pub driver: String,
    /// [`HASH_NAME`]: the hash of every `hash` field.
    pub hash: String,
    /// The process id.
    pub pid: u32,
    /// How frames are told apart: `htod-after-dtoh` (the first host-to-device copy
    /// after a device-to-host copy starts a new frame: the next picture's upload after
    /// the previous results came back) or `kernel:PATTERN` (each launch of a matching
    /// kernel starts one, except a first launch of the trace).
    pub frame_rule: String,
    /// The settings that shaped the run and the trace (EMU_CUDA_EXEC,
    /// EMU_CUDA_BLOCK_ORDER, EMU_CUDA_TRACE_FRAMES/KERNELS/DUMP), as given.
    #[serde(default)]
    pub settings: std::collections::BTreeMap<String, String>,
}

/// One buffer a launch could have written, hashed after the launch completed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Buffer {
    /// Stable name: `aN` for the N-th allocation of the process (0-based, every kind of
    /// allocation counted in the order the program made them), `gM:SYMBOL` for module
    /// global SYMBOL of the M-th module the trace saw launched, `host` for memory
    /// the driver does not track.
    pub name: String,
    /// Allocation kind (`device`, `pitched`, `managed`, `pinned host`, `global`, ...).
    pub kind: String,
    /// Bytes hashed (the whole allocation or global).
    pub size: u64,
    /// [`hash`] of its bytes, 16 hex digits.
    pub hash: String,
    /// The parameters (by index) whose value, or a pointer-sized word of it, points
    /// into the buffer; empty for module globals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<u32>,
    /// Where its bytes are in the dump file, when dumped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dump: Option<Dump>,
}

/// A range of the dump file (`PATH.dump`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct Dump {
    /// Byte offset in the dump file.
    pub offset: u64,
    /// Bytes.
    pub len: u64,
}

/// A kernel launch.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Launch {
    /// The launch's number in the process (0-based, every launch counted, traced or not).
    pub n: u64,
    /// The frame it belongs to (see [`Header::frame_rule`]).
    pub frame: u64,
    /// The kernel's symbol.
    pub kernel: String,
    /// Grid dimensions.
    pub grid: [u32; 3],
    /// Block dimensions.
    pub block: [u32; 3],
    /// Dynamic shared memory bytes.
    pub shared: u32,
    /// Each parameter's (offset, size) in `args`; empty when the layout is unknown.
    pub params: Vec<[u32; 2]>,
    /// The argument bytes laid out at the parameter offsets, as hex.
    pub args: String,
    /// The buffers the launch could write (see `emu-driver/TRACE_FORMAT.md` for the rule).
    pub written: Vec<Buffer>,
    /// `ok`, or the error the launch ended with (e.g. `CUDA_ERROR_ILLEGAL_ADDRESS`).
    pub result: String,
}

/// A device-to-host copy.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Copy {
    /// The copy's number in the process (0-based, device-to-host copies only).
    pub n: u64,
    /// The frame it belongs to.
    pub frame: u64,
    /// The source buffer's name (see [`Buffer::name`]) and `+OFFSET`.
    pub src: String,
    /// Bytes copied.
    pub bytes: u64,
    /// [`hash`] of the bytes that arrived, 16 hex digits.
    pub hash: String,
    /// Where the bytes are in the dump file, when dumped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dump: Option<Dump>,
}

/// The last record, written at exit: totals and what tracing cost.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct End {
    /// Launches the process made (traced or not).
    pub launches: u64,
    /// Launches recorded.
    pub traced_launches: u64,
    /// Device-to-host copies recorded.
    pub copies: u64,
    /// Frames seen.
    pub frames: u64,
    /// Bytes hashed.
    pub hashed_bytes: u64,
    /// Microseconds spent tracing (hashing, copying back, writing), summed.
    pub trace_us: u64,
    /// Pass-through only: microseconds of the synchronisations and copies back that
    /// tracing added (included in `trace_us`).
    #[serde(default)]
    pub copy_back_us: u64,
}

/// One line after the header.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "t", rename_all = "lowercase")]
pub enum Record {
    /// A kernel launch.
    Launch(Launch),
    /// A device-to-host copy.
    Copy(Copy),
    /// The end of the trace.
    End(End),
}

/// `st64`: a streaming 64-bit hash of bytes (four lanes of 64-bit words, each word
/// xored in and multiplied by an odd constant, so a change in one word always changes
/// its lane; lanes and length mixed at the end). Not cryptographic: it tells buffers
/// apart, it does not resist crafted collisions.
#[derive(Clone)]
pub struct Hasher {
    lanes: [u64; 4],
    buf: [u8; 32],
    fill: usize,
    total: u64,
}

const MUL: u64 = 0x9E37_79B9_7F4A_7C15;
const SEEDS: [u64; 4] = [0x243F_6A88_85A3_08D3, 0x1319_8A2E_0370_7344, 0xA409_3822_299F_31D0, 0x082E_FA98_EC4E_6C89];

impl Default for Hasher {
    fn default() -> Self {
        Hasher { lanes: SEEDS, buf: [0; 32], fill: 0, total: 0 }
    }
}

impl Hasher {
    fn block(&mut self, b: &[u8]) {
        for (i, lane) in self.lanes.iter_mut().enumerate() {
            let w = u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
            *lane = ((*lane ^ w).wrapping_mul(MUL)).rotate_left(31);
        }
    }

    /// Adds bytes.
    pub fn update(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        if self.fill > 0 {
            let take = (32 - self.fill).min(data.len());
            self.buf[self.fill..self.fill + take].copy_from_slice(&data[..take]);
            self.fill += take;
            data = &data[take..];
            if self.fill < 32 {
                return;
            }
            let b = self.buf;
            self.block(&b);
            self.fill = 0;
        }
        let mut chunks = data.chunks_exact(32);
        for c in &mut chunks {
            self.block(c);
        }
        let rest = chunks.remainder();
        self.buf[..rest.len()].copy_from_slice(rest);
        self.fill = rest.len();
    }

    /// The hash of everything added.
    pub fn finish(mut self) -> u64 {
        if self.fill > 0 {
            self.buf[self.fill..].fill(0);
            let b = self.buf;
            self.block(&b);
        }
        let mut h = self.total.wrapping_mul(MUL);
        for (i, l) in self.lanes.iter().enumerate() {
            h = mix(h ^ l.rotate_left(i as u32 * 16));
        }
        h
    }
}

/// splitmix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// [`Hasher`] over one slice, as the 16 hex digits the trace writes.
pub fn hash(data: &[u8]) -> String {
    let mut h = Hasher::default();
    h.update(data);
    format!("{:016x}", h.finish())
}

/// Bytes as lowercase hex.
pub fn to_hex(data: &[u8]) -> String {
    let mut s = String::with_capacity(data.len() * 2);
    for b in data {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Hex back to bytes; None for odd length or a non-hex digit.
pub fn from_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_equals_one_shot_and_changes_with_any_byte() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        let one = hash(&data);
        for split in [0, 1, 31, 32, 33, 500, 999, 1000] {
            let mut h = Hasher::default();
            h.update(&data[..split]);
            h.update(&data[split..]);
            assert_eq!(format!("{:016x}", h.finish()), one, "split at {split}");
        }
        for i in [0, 31, 32, 517, 999] {
            let mut d = data.clone();
            d[i] ^= 1;
            assert_ne!(hash(&d), one, "byte {i}");
        }
        // Trailing zeros are not the same as a shorter buffer.
        assert_ne!(hash(&[1, 2, 3]), hash(&[1, 2, 3, 0]));
        assert_eq!(hash(&[]).len(), 16);
    }

    #[test]
    fn hex_round_trips_and_rejects_garbage() {
        assert_eq!(from_hex(&to_hex(&[0, 1, 0xab, 0xff])).unwrap(), vec![0, 1, 0xab, 0xff]);
        assert!(from_hex("abc").is_none());
        assert!(from_hex("zz").is_none());
    }

    #[test]
    fn records_round_trip_through_json() {
        let r = Record::Copy(Copy { n: 3, frame: 1, src: "a2+0".into(), bytes: 8, hash: hash(&[0; 8]), dump: None });
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.starts_with("{\"t\":\"copy\""), "{text}");
        assert_eq!(serde_json::from_str::<Record>(&text).unwrap(), r);
    }
}
