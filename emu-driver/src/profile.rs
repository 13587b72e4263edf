//! Device profiles: what cuDeviceGet* answer, each the exact record of a real device.
//! Two are an NVIDIA H200 (profiles/h200.txt, read from the device with its driver
//! 580.159.04): `h200-580` is that machine as it was, refusing PTX newer than its
//! driver's ISA 9.0; `h200` (the default) is the same device answering every attribute
//! alike but loading every PTX version the translator reads ([`MAX_TRANSLATED_PTX`]), so
//! images made by a newer nvcc (the pinned 13.5 writes ISA 9.5) run in PTX mode. `h100`
//! is an H100 80GB HBM3 (profiles/h100.txt, same driver; `scripts/device-profile/record`)
//! loading PTX as `h200` does: the same sm_90 chip, so every result is the same, only the
//! name, memory, clocks and L2 size differ, and a program that prints them reads the
//! H100's.

use crate::cu::*;
use std::collections::BTreeMap;
use std::sync::OnceLock;

pub struct Profile {
    pub key: &'static str,
    pub name: String,
    pub total_mem: u64,
    pub driver_version: i32,
    /// The newest PTX ISA version the driver JIT-compiles (major, minor).
    pub max_ptx_version: (u32, u32),
    /// attribute id -> value, or the error code the device answers for that id.
    pub attrs: BTreeMap<i32, Result<i32, CUresult>>,
    pub uuid: [u8; 16],
    /// cuMemGetAllocationGranularity of a pinned device allocation: (minimum,
    /// recommended) bytes.
    pub vmm_granularity: (u64, u64),
}

impl Profile {
    pub fn attr(&self, id: i32) -> Result<i32, CUresult> {
        self.attrs.get(&id).copied().unwrap_or(Err(CUDA_ERROR_INVALID_VALUE))
    }
    fn a(&self, id: i32) -> i32 {
        self.attr(id).unwrap_or(0)
    }
    pub fn max_threads_per_block(&self) -> u32 {
        self.a(1) as u32
    }
    pub fn max_block(&self) -> [u32; 3] {
        [self.a(2) as u32, self.a(3) as u32, self.a(4) as u32]
    }
    pub fn max_grid(&self) -> [u32; 3] {
        [self.a(5) as u32, self.a(6) as u32, self.a(7) as u32]
    }
    /// Static shared memory per block without opt-in (48 KiB).
    pub fn shared_per_block(&self) -> u32 {
        self.a(8) as u32
    }
    /// CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN (97).
    pub fn shared_per_block_optin(&self) -> u32 {
        self.a(97) as u32
    }
    pub fn regs_per_block(&self) -> u32 {
        self.a(12) as u32
    }
    pub fn sm_count(&self) -> u32 {
        self.a(16) as u32
    }
    pub fn compute_capability(&self) -> (i32, i32) {
        (self.a(75), self.a(76))
    }
    /// cuDeviceGetProperties' legacy record, from the attributes it repeats.
    pub fn devprop(&self) -> CUdevprop {
        CUdevprop {
            max_threads_per_block: self.a(1),
            max_threads_dim: [self.a(2), self.a(3), self.a(4)],
            max_grid_size: [self.a(5), self.a(6), self.a(7)],
            shared_mem_per_block: self.a(8),
            total_constant_memory: self.a(9),
            simd_width: self.a(10),
            mem_pitch: self.a(11),
            regs_per_block: self.a(12),
            clock_rate: self.a(13),
            texture_align: self.a(14),
        }
    }
    pub fn sm(&self) -> u32 {
        let (a, b) = self.compute_capability();
        (a * 10 + b) as u32
    }
}

fn parse(key: &'static str, text: &str, uuid_seed: u8) -> Profile {
    let mut p = Profile {
        key,
        name: String::new(),
        total_mem: 0,
        driver_version: 0,
        max_ptx_version: (0, 0),
        attrs: BTreeMap::new(),
        uuid: [0; 16],
        vmm_granularity: (0, 0),
    };
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let mut it = line.splitn(2, ' ');
        let (k, v) = (it.next().unwrap_or(""), it.next().unwrap_or("").trim());
        match k {
            "name" => p.name = v.to_string(),
            "total_mem" => p.total_mem = v.parse().expect("profile total_mem"),
            "driver_version" => p.driver_version = v.parse().expect("profile driver_version"),
            "max_ptx_version" => {
                let (a, b) = v.split_once('.').expect("profile max_ptx_version MAJOR.MINOR");
                p.max_ptx_version = (a.parse().expect("ptx major"), b.parse().expect("ptx minor"));
            }
            "vmm_granularity" => {
                let mut f = v.split_whitespace().map(|x| x.parse().expect("profile vmm_granularity MIN RECOMMENDED"));
                p.vmm_granularity = (f.next().expect("vmm_granularity minimum"), f.next().expect("vmm_granularity recommended"));
            }
            "attr" => {
                let mut f = v.split_whitespace();
                let id: i32 = f.next().and_then(|s| s.parse().ok()).expect("profile attr id");
                let val = f.next().expect("profile attr value");
                let entry = match val.strip_prefix("rc=") {
                    Some(rc) => Err(rc.parse().expect("profile attr rc")),
                    None => Ok(val.parse().expect("profile attr value")),
                };
                p.attrs.insert(id, entry);
            }
            _ => panic!("profile {key}: unknown line {line}"),
        }
    }
    // A stable, recognisable UUID: "simtwin" + profile seed.
    p.uuid[..7].copy_from_slice(b"simtwin");
    p.uuid[15] = uuid_seed;
    p
}

static H200: &str = include_str!("../profiles/h200.txt");
static H100: &str = include_str!("../profiles/h100.txt");

/// The newest PTX ISA the translator (simtwin-ptx) reads.
pub const MAX_TRANSLATED_PTX: (u32, u32) = (9, 9);

pub fn all() -> &'static [Profile] {
    static ALL: OnceLock<Vec<Profile>> = OnceLock::new();
    ALL.get_or_init(|| {
        // A device record loading every PTX version the translator reads.
        let current = |key, text, seed| Profile { max_ptx_version: MAX_TRANSLATED_PTX, ..parse(key, text, seed) };
        vec![current("h200", H200, 1), parse("h200-580", H200, 1), current("h100", H100, 2)]
    })
}

pub fn names() -> Vec<&'static str> {
    all().iter().map(|p| p.key).collect()
}

pub fn by_name(name: &str) -> Option<&'static Profile> {
    all().iter().find(|p| p.key.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    #[test]
    fn h200_profile_reads_the_device_record() {
        let p = super::by_name("h200").unwrap();
        assert_eq!(p.name, "NVIDIA H200");
        assert_eq!(p.total_mem, 150109880320);
        assert_eq!(p.driver_version, 13000);
        assert_eq!(p.max_threads_per_block(), 1024);
        assert_eq!(p.max_block(), [1024, 1024, 64]);
        assert_eq!(p.max_grid(), [2147483647, 65535, 65535]);
        assert_eq!(p.shared_per_block(), 49152);
        assert_eq!(p.shared_per_block_optin(), 232448);
        assert_eq!(p.compute_capability(), (9, 0));
        assert_eq!(p.sm_count(), 132);
        assert_eq!(p.attr(148), Err(1));
        assert_eq!(p.attr(0), Err(1));
        assert_eq!(p.attrs.len(), 199);
        assert_eq!(p.vmm_granularity, (2 << 20, 2 << 20));
        assert_eq!(p.max_ptx_version, super::MAX_TRANSLATED_PTX);
        let exact = super::by_name("h200-580").unwrap();
        assert_eq!(exact.max_ptx_version, (9, 0));
        assert_eq!(exact.attrs, p.attrs);
        assert_eq!(exact.vmm_granularity, p.vmm_granularity);
    }

    #[test]
    fn h100_profile_reads_its_device_record() {
        let p = super::by_name("H100").unwrap();
        assert_eq!(p.name, "NVIDIA H100 80GB HBM3");
        assert_eq!(p.total_mem, 85017493504);
        assert_eq!(p.driver_version, 13000);
        assert_eq!(p.attrs.len(), 199);
        assert_eq!((p.compute_capability(), p.sm_count(), p.max_threads_per_block()), ((9, 0), 132, 1024));
        // The same chip as the H200: only memory clock, bus width, L2 size, the largest
        // persisting L2 window and the PCI ids differ.
        let h200 = super::by_name("h200").unwrap();
        let differ: Vec<i32> = p.attrs.keys().copied().filter(|id| p.attrs[id] != h200.attrs[id]).collect();
        assert_eq!(differ, [36, 37, 38, 108, 139, 140]);
        assert_eq!(p.attr(38), Ok(52428800));
        assert_eq!(p.max_ptx_version, super::MAX_TRANSLATED_PTX);
        assert_ne!(p.uuid, h200.uuid);
    }
}
