//! Warp collectives: matching lanes into groups and resolving a group in one pass when
//! its last lane arrives (the arithmetic is in `warp_ops`, the values of reads from
//! lanes that cannot take part in `device_defined`).
//!
//! Semantics as on sm_70+: collectives are matched by mask, not by call site: lanes that
//! call with the same mask meet in one group, which completes once every lane of the
//! mask has arrived or exited. Values are exchanged only then. Each lane's operands go
//! into its warp's lane slots as it arrives; the last arrival computes every lane's
//! result into the slots, and each resumed lane reads its own.
//!
//! A shuffle that reads a lane outside its mask gets that lane's value when the lane
//! executes the same shuffle (same call site and op, in a group of its own mask), as the
//! H200 does for converged lanes: such a group waits until each of those source lanes
//! has arrived at that shuffle, exited or waits elsewhere, and then completes together
//! with the other groups of the site it reads from.
//!
//! Reported: a caller missing from its own mask, lanes of one mask meeting with
//! different operations, lanes waiting in overlapping different masks (each waits for
//! the other), lanes named in a mask that exited, and shuffles reading a lane outside
//! the mask. Each report names the call site.

use super::device_defined::{self, Absent};
use super::hazard::{format_threads, key_of, Detected, HazardKind, HazardLog};
use super::threads::{site_key, site_text, Arrival, Threads};
use super::warp_ops::{self, lanes, op_name, ShuffleMap, WARP};
use crate::abi;

/// One lane's operands and result.
#[derive(Clone, Copy, Default)]
pub(crate) struct Lane {
    pub value: u64,
    pub result: u64,
    pub arg: i32,
    pub width: i32,
    pub op: u32,
    pub pred: i32,
}

impl Lane {
    /// Records an arriving lane's operands (its result and predicate are written when
    /// its group resolves).
    #[inline(always)]
    fn set_operands(&mut self, op: u32, value: u64, arg: i32, width: i32) {
        (self.value, self.arg, self.width, self.op) = (value, arg, width, op);
    }
}

/// Lanes of one warp that meet in a collective with the same mask.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    pub mask: u32,
    pub arrived: u32,
    pub op: u32,
    /// The call site's key (`site_key`).
    key: u64,
    arg: i32,
    width: i32,
    /// Every lane so far called with the group's op, arg and width.
    uniform: bool,
    pub site: abi::Site,
    kind_reported: bool,
    exit_reported: bool,
}

/// The collectives of one warp of the block. Which lanes have exited is in the thread
/// table (`Threads::gone`); lanes waiting at other rendezvous (a block barrier,
/// `__activemask`, a yield) are known to the block, which tells a warp when it asks
/// (`waiting_elsewhere`: only a shuffle reading lanes outside its mask needs them).
#[derive(Clone)]
#[repr(C)]
pub(crate) struct Warp {
    groups: Vec<Group>,
    /// Some complete shuffle group waits for lanes outside its mask to reach it.
    blocked: bool,
    /// Each lane's operands and result (also the `__activemask` result, see
    /// `convergence`).
    pub lanes: [Lane; WARP as usize],
}

impl Default for Warp {
    fn default() -> Self {
        Warp { groups: Vec::new(), blocked: false, lanes: [Lane::default(); WARP as usize] }
    }
}

impl Warp {
    pub fn reset(&mut self) {
        self.blocked = false;
        self.groups.clear();
    }

    #[inline]
    pub fn has_groups(&self) -> bool {
        !self.groups.is_empty()
    }

    /// A complete shuffle group waits for lanes outside its mask.
    #[inline]
    pub fn is_blocked(&self) -> bool {
        self.blocked
    }

    /// The open collectives.
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// The open collective lane `lane` waits in.
    pub fn group_of(&self, lane: u32) -> Option<&Group> {
        self.groups.iter().find(|g| g.arrived & (1 << lane) != 0)
    }

    /// The lanes waiting in an open collective.
    pub fn waiting(&self) -> u32 {
        self.groups.iter().fold(0, |m, g| m | g.arrived)
    }

    /// The result and predicate a resumed lane of a collective gets.
    #[inline]
    pub fn result(&self, lane: u32) -> (u64, i32) {
        let l = &self.lanes[lane as usize];
        (l.result, l.pred)
    }

    /// The common arrival, recorded as `arrive` records it: lane `lane` joins the warp's
    /// only open collective, which has this mask, op and operands, names the lane and
    /// no exited lane, and which the lane does not complete. False, with nothing
    /// changed, in every other case (`arrive` then takes it from the start).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn join_fast(&mut self, lane: u32, op: u32, mask: u32, value: u64, arg: i32, width: i32, gone: u32) -> bool {
        let [g] = self.groups.as_mut_slice() else { return false };
        let bit = 1u32 << lane;
        let arrived = g.arrived | bit;
        let same = (g.mask == mask) & (g.op == op) & (g.arg == arg) & (g.width == width) & g.uniform;
        if !same || mask & bit == 0 || mask & gone != 0 || arrived & mask == mask {
            return false;
        }
        g.arrived = arrived;
        self.lanes[lane as usize].set_operands(op, value, arg, width);
        true
    }

    /// Thread `tid` arrives at warp collective `op` over `mask`: `Wait` when it must
    /// suspend (the block then records it as waiting), `Done` when it completed its group.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn arrive(
        &mut self,
        threads: &mut Threads,
        tid: u32,
        op: u32,
        mask: u32,
        value: u64,
        arg: i32,
        width: i32,
        site: abi::Site,
        waiting_elsewhere: impl Fn(&Threads, u32) -> u32 + Copy,
        log: &mut HazardLog,
    ) -> Arrival {
        let lane = tid % WARP;
        let wi = tid / WARP;
        let bit = 1u32 << lane;
        // The operands; the result and predicate are written when the group resolves.
        self.lanes[lane as usize].set_operands(op, value, arg, width);
        // The common case: the caller is in its mask and joins an open group with the
        // same op; anything else (a new group, a hazard) takes the long way.
        let (gi, mask) = match self.groups.iter().position(|g| g.mask == mask && g.op == op) {
            Some(i) if mask & bit != 0 => (i, mask),
            _ => self.join_group(threads, tid, op, mask, arg, width, site, log),
        };
        let g = &mut self.groups[gi];
        g.arrived |= bit;
        // (Its op is the group's, or join_group cleared `uniform`.)
        g.uniform &= (g.arg == arg) & (g.width == width);
        let gone = threads.gone[wi as usize];
        if mask & gone != 0 && !g.exit_reported {
            g.exit_reported = true;
            threads.stop |= report_exited_lanes(threads.n, wi, threads.gone[wi as usize] & mask, mask, op, site, log);
        }
        if (self.groups[gi].arrived | gone) & mask == mask {
            if let Some((r, p)) = self.complete_group(threads, wi, gi, Some(tid), waiting_elsewhere, log) {
                if threads.stop {
                    return Arrival::Stop;
                }
                return Arrival::Done(r, p);
            }
        }
        if threads.stop {
            return Arrival::Stop;
        }
        Arrival::Wait
    }

    /// Completes group `gi` of this warp (`wi`), whose mask lanes have all arrived or
    /// exited: at once, or (a shuffle reading lanes outside its mask that have not
    /// reached a rendezvous yet) later, together with the groups of its call site.
    /// Returns the caller's result when it completed.
    fn complete_group(
        &mut self,
        threads: &mut Threads,
        wi: u32,
        gi: usize,
        caller: Option<u32>,
        waiting_elsewhere: impl Fn(&Threads, u32) -> u32 + Copy,
        log: &mut HazardLog,
    ) -> Option<(u64, i32)> {
        let gone = threads.gone[wi as usize];
        let g = &self.groups[gi];
        if g.mask == u32::MAX || outside_alive_sources(self, g, gone) == 0 {
            let g = self.groups.swap_remove(gi);
            return Some(self.resolve(threads, wi, g, None, caller, log));
        }
        // Lanes that execute this shuffle: those in an open group of the same site and op.
        let (key, op) = (g.key, g.op);
        let same = |g: &Group| g.key == key && g.op == op;
        let at_site = self.groups.iter().filter(|g| same(g)).fold(0, |m, g| m | g.arrived);
        let elsewhere = (self.waiting() | waiting_elsewhere(threads, wi)) & !at_site;
        let complete = |g: &Group| (g.arrived | gone) & g.mask == g.mask;
        // Ready: every source outside the mask is at this shuffle in a complete group
        // (the groups complete together) or waits elsewhere.
        let ready = |g: &Group| {
            let src = outside_alive_sources(self, g, gone);
            src & !at_site & !elsewhere == 0 && !self.groups.iter().any(|h| same(h) && h.arrived & src != 0 && !complete(h))
        };
        if !ready(g) {
            self.blocked = true;
            threads.rare_waits = true;
            return None;
        }
        // Complete every complete and ready group of the site, reading each other.
        let mut pick: Vec<usize> = (0..self.groups.len())
            .filter(|&i| {
                let h = &self.groups[i];
                i == gi || (same(h) && complete(h) && ready(h))
            })
            .collect();
        pick.sort_unstable_by(|a, b| b.cmp(a));
        let taken: Vec<Group> = pick.into_iter().map(|i| self.groups.swap_remove(i)).collect();
        let mut own = None;
        for g in taken {
            let mine = caller.is_some_and(|t| g.arrived & (1 << (t % WARP)) != 0);
            let r = self.resolve(threads, wi, g, Some(at_site), if mine { caller } else { None }, log);
            if mine {
                own = Some(r);
            }
        }
        own.or(Some((0, 0)))
    }

    /// Retries the shuffle groups that waited for lanes outside their masks (a lane of
    /// the warp now waits somewhere, or exited).
    pub(crate) fn retry_blocked(
        &mut self,
        threads: &mut Threads,
        wi: u32,
        waiting_elsewhere: impl Fn(&Threads, u32) -> u32 + Copy,
        log: &mut HazardLog,
    ) {
        self.blocked = false;
        let mut i = 0;
        while i < self.groups.len() {
            let g = &self.groups[i];
            if (g.arrived | threads.gone[wi as usize]) & g.mask == g.mask {
                let n = self.groups.len();
                if self.complete_group(threads, wi, i, None, waiting_elsewhere, log).is_some() || self.groups.len() != n {
                    i = 0;
                    continue;
                }
            }
            i += 1;
        }
    }

    /// The long way into a group: a caller missing from its own mask, a group over the
    /// same mask with another op, or the first lane of a new group. Returns the group
    /// and the mask the caller takes part with.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn join_group(
        &mut self,
        threads: &mut Threads,
        tid: u32,
        op: u32,
        mask: u32,
        arg: i32,
        width: i32,
        site: abi::Site,
        log: &mut HazardLog,
    ) -> (usize, u32) {
        let wi = tid / WARP;
        let bit = 1u32 << (tid % WARP);
        let mut mask = mask;
        if mask & bit == 0 {
            report_not_in_mask(threads, tid, op, mask, site, log);
            mask |= bit;
        }
        let gi = match self.groups.iter().position(|g| g.mask == mask) {
            Some(i) => {
                if self.groups[i].op != op {
                    self.groups[i].uniform = false;
                    if !self.groups[i].kind_reported {
                        self.groups[i].kind_reported = true;
                        self.report_kind_mismatch(threads, tid, wi, i, op, site, log);
                    }
                }
                i
            }
            None => {
                // A mismatch is certain when a lane this mask names already waits in a
                // collective whose mask names the caller: each waits for the other.
                // (A waiting group that does not name the caller may still complete,
                // and its lanes come here later: divergent sub-warp collectives.)
                if self.groups.iter().any(|g| g.arrived & mask != 0 && g.mask & bit != 0) {
                    self.report_mask_mismatch(threads, tid, wi, op, mask, site, log);
                }
                let key = site_key(&site);
                self.groups.push(Group {
                    mask,
                    arrived: 0,
                    op,
                    key,
                    arg,
                    width,
                    uniform: true,
                    site,
                    kind_reported: false,
                    exit_reported: false,
                });
                self.groups.len() - 1
            }
        };
        (gi, mask)
    }

    /// Lanes `newly` of this warp (`wi`) have just exited (`threads.gone` has them):
    /// report them where a waiting group names them, and complete groups that now only
    /// waited for them.
    pub(crate) fn lanes_gone(
        &mut self,
        threads: &mut Threads,
        wi: u32,
        newly: u32,
        waiting_elsewhere: impl Fn(&Threads, u32) -> u32 + Copy,
        log: &mut HazardLog,
    ) {
        let mut i = 0;
        while i < self.groups.len() {
            let g = &self.groups[i];
            if g.mask & newly != 0 {
                let (mask, op, site) = (g.mask, g.op, g.site);
                if !g.exit_reported {
                    self.groups[i].exit_reported = true;
                    threads.stop |= report_exited_lanes(threads.n, wi, threads.gone[wi as usize] & mask, mask, op, site, log);
                }
                if (self.groups[i].arrived | threads.gone[wi as usize]) & mask == mask {
                    let n = self.groups.len();
                    if self.complete_group(threads, wi, i, None, waiting_elsewhere, log).is_some() || self.groups.len() != n {
                        i = 0; // completing moved groups around
                        continue;
                    }
                }
            }
            i += 1;
        }
    }

    /// Completes group `g` (removed from this warp, `wi`): computes every arrived lane's
    /// result in one pass and makes the lanes runnable (the caller, if it completed the
    /// group, goes on with the returned result). Shuffles read the lanes in `readable`
    /// (the group's own arrivals unless lanes of other groups at its site are given).
    #[inline(never)]
    fn resolve(
        &mut self,
        threads: &mut Threads,
        wi: u32,
        g: Group,
        readable: Option<u32>,
        caller: Option<u32>,
        log: &mut HazardLog,
    ) -> (u64, i32) {
        let base = wi * WARP;
        let arrived = g.arrived;
        let readable = readable.unwrap_or(arrived);
        let gone = threads.gone[wi as usize];
        let outside = if g.uniform && warp_ops::is_shuffle(g.op) {
            resolve_shuffles(self, &g, readable, gone)
        } else {
            resolve_mixed(self, &g, readable, gone)
        };
        let own = match caller {
            Some(t) => self.result(t - base),
            None => (0, 0),
        };
        let released = arrived & !caller.map_or(0, |t| 1 << (t - base));
        if arrived == u32::MAX {
            let skip = caller.map_or(WARP, |t| t - base);
            threads.release_all(released.count_ones() as usize, (0..WARP).filter(|&l| l != skip).map(|l| base + l));
        } else {
            threads.release_all(released.count_ones() as usize, lanes(released).map(|l| base + l));
        }
        if let Some((lane, j, op, read)) = outside {
            report_outside_mask(threads, base + lane, lane, j, op, g.mask, g.site, read, log);
        }
        threads.completed.collectives += 1;
        if g.op == abi::warp::SYNC {
            if let Some(s) = threads.syncwarps.as_mut() {
                s.push((wi, arrived)); // orders the lanes' memory accesses (race detector)
            }
        }
        own
    }

    #[allow(clippy::too_many_arguments)]
    #[cold]
    #[inline(never)]
    fn report_kind_mismatch(&self, threads: &mut Threads, tid: u32, wi: u32, gi: usize, op: u32, site: abi::Site, log: &mut HazardLog) {
        let g = &self.groups[gi];
        let (first, mask, first_site) = (g.op, g.mask, g.site);
        let key = key_of(&[site_key(&first_site), site_key(&site), first as u64, op as u64]);
        threads.stop |= log.note(HazardKind::WarpKindMismatch, key, || Detected {
            kind: HazardKind::WarpKindMismatch,
            key,
            threads: vec![tid],
            operation: format!(
                "{} / {} (mask={:#010x}) at {} / {}",
                op_name(first),
                op_name(op),
                mask,
                site_text(&first_site),
                site_text(&site)
            ),
            message: format!(
                "lanes of warp {wi} met in one collective over mask {mask:#010x} with \
                 different operations: {} and {} (thread {tid}); each lane gets the \
                 result of its own operation over the group's values",
                op_name(first),
                op_name(op)
            ),
        });
    }

    #[allow(clippy::too_many_arguments)]
    #[cold]
    #[inline(never)]
    fn report_mask_mismatch(&self, threads: &mut Threads, tid: u32, wi: u32, op: u32, mask: u32, site: abi::Site, log: &mut HazardLog) {
        let bit = 1u32 << (tid % WARP);
        let overlapping: Vec<(u32, abi::Site)> =
            self.groups.iter().filter(|g| g.arrived & mask != 0 && g.mask & bit != 0).map(|g| (g.mask, g.site)).collect();
        let key = key_of(&[site_key(&site), op as u64]);
        threads.stop |= log.note(HazardKind::WarpMaskMismatch, key, || Detected {
            kind: HazardKind::WarpMaskMismatch,
            key,
            threads: vec![tid],
            operation: format!("{}(mask={:#010x}) at {}", op_name(op), mask, site_text(&site)),
            message: format!(
                "thread {tid} (warp {wi}) waits in a collective over mask {mask:#010x} \
                 while lanes it names wait for it in collectives over masks {}; \
                 the groups are kept apart",
                overlapping.iter().map(|(m, s)| format!("{m:#010x} (at {})", site_text(s))).collect::<Vec<_>>().join(", ")
            ),
        });
    }
}

/// The `warp-lane-exited` hazard of a collective over `mask` in warp `wi` of a block of
/// `n` threads, whose lanes `gone` (in the mask) exited or do not exist: once per group,
/// by the fibers' collectives and the loop path's. True when the launch stops.
#[cold]
#[inline(never)]
pub(crate) fn report_exited_lanes(n: u32, wi: u32, gone: u32, mask: u32, op: u32, site: abi::Site, log: &mut HazardLog) -> bool {
    let key = key_of(&[site_key(&site), op as u64]);
    log.note(HazardKind::WarpLaneExited, key, || {
        let mut exited = Vec::new();
        let mut missing = Vec::new();
        for lane in lanes(gone) {
            let t = wi * WARP + lane;
            if t < n {
                exited.push(t);
            } else {
                missing.push(lane);
            }
        }
        let mut what = Vec::new();
        if !exited.is_empty() {
            what.push(format!("threads {} have exited", format_threads(&exited)));
        }
        if !missing.is_empty() {
            what.push(format!("lanes {} do not exist (the block has {} threads)", format_threads(&missing), n));
        }
        Detected {
            kind: HazardKind::WarpLaneExited,
            key,
            threads: exited,
            operation: format!("{}(mask={:#010x}) at {}", op_name(op), mask, site_text(&site)),
            message: format!(
                "the mask of a collective in warp {wi} names lanes that cannot take part: {}; \
                 the collective completes without them and {}",
                what.join(" and "),
                device_defined::exited_read_note(op)
            ),
        }
    })
}

#[cold]
#[inline(never)]
fn report_not_in_mask(threads: &mut Threads, tid: u32, op: u32, mask: u32, site: abi::Site, log: &mut HazardLog) {
    let (lane, wi) = (tid % WARP, tid / WARP);
    let key = key_of(&[site_key(&site), op as u64]);
    threads.stop |= log.note(HazardKind::WarpCallerNotInMask, key, || Detected {
        kind: HazardKind::WarpCallerNotInMask,
        key,
        threads: vec![tid],
        operation: format!("{}(mask={:#010x}) at {}", op_name(op), mask, site_text(&site)),
        message: format!(
            "thread {tid} (lane {lane} of warp {wi}) called a warp collective with a mask \
             that does not name it; it takes part as if its lane were in the mask"
        ),
    });
}

#[allow(clippy::too_many_arguments)]
#[cold]
#[inline(never)]
fn report_outside_mask(
    threads: &mut Threads,
    tid: u32,
    lane: u32,
    j: u32,
    op: u32,
    mask: u32,
    site: abi::Site,
    read: bool,
    log: &mut HazardLog,
) {
    let wi = tid / WARP;
    let key = key_of(&[site_key(&site), op as u64]);
    let alive = threads.gone[wi as usize] & (1 << j) == 0;
    let why = if alive { Absent::OutsideMaskAlive } else { Absent::OutsideMaskExited };
    let fill = if read {
        "that lane's value (it executes the same shuffle, as converged lanes do on the device)"
    } else {
        device_defined::shuffle_fill(op, why).describe()
    };
    threads.stop |= log.note(HazardKind::ShuffleSourceOutsideMask, key, || Detected {
        kind: HazardKind::ShuffleSourceOutsideMask,
        key,
        threads: vec![tid],
        operation: format!("{}(mask={:#010x}) at {}", op_name(op), mask, site_text(&site)),
        message: format!(
            "thread {tid} (lane {lane} of warp {wi}) reads lane {j}, which is \
             not in the mask; it gets {fill}"
        ),
    });
}

/// The first read from outside a group's mask: (lane, source, op, whether the source's
/// value was read).
type Outside = Option<(u32, u32, u32, bool)>;

/// The lanes outside `g`'s mask, alive (not in `gone`), that its lanes' shuffles read
/// from.
fn outside_alive_sources(w: &Warp, g: &Group, gone: u32) -> u32 {
    lanes(g.arrived)
        .filter_map(|l| {
            let t = &w.lanes[l as usize];
            warp_ops::is_shuffle(t.op).then(|| warp_ops::shuffle_source(t.op, l, t.arg, t.width)).flatten()
        })
        .fold(0, |m, j| m | 1 << j)
        & !g.mask
        & !gone
}

/// A source lane that cannot supply its value: what the reader gets.
fn absent_read(g: &Group, gone: u32, op: u32, j: u32, own: u64) -> u64 {
    let why = if g.mask & (1 << j) != 0 {
        Absent::Exited
    } else if gone & (1 << j) != 0 {
        Absent::OutsideMaskExited
    } else {
        Absent::OutsideMaskAlive
    };
    device_defined::shuffle_fill(op, why).value(own)
}

/// A group whose lanes all called the same shuffle with the same lane operand and
/// width: the source mapping is computed once; lanes in `readable` supply values.
#[inline(always)]
fn resolve_shuffles(w: &mut Warp, g: &Group, readable: u32, gone: u32) -> Outside {
    let arrived = g.arrived;
    let map = ShuffleMap::new(g.op, g.arg, g.width);
    if arrived == u32::MAX {
        resolve_full_warp(w, map);
        return None;
    }
    let mut outside = None;
    for lane in lanes(arrived) {
        let own = w.lanes[lane as usize].value;
        let (result, pred) = match map.source(lane) {
            None => (own, 0),
            Some(j) if arrived & (1 << j) != 0 => (w.lanes[j as usize].value, 1),
            Some(j) => {
                let read = readable & (1 << j) != 0;
                if g.mask & (1 << j) == 0 {
                    outside.get_or_insert((lane, j, g.op, read));
                }
                if read {
                    (w.lanes[j as usize].value, 1)
                } else {
                    (absent_read(g, gone, g.op, j, own), 0)
                }
            }
        };
        let slot = &mut w.lanes[lane as usize];
        slot.result = result;
        slot.pred = pred;
    }
    outside
}

/// A uniform shuffle that every lane of the warp joined (the common case): every
/// source is a member, so each lane gets its source's value, or its own when the
/// source is out of range. One loop per op (the lane mapping decided outside it).
fn resolve_full_warp(w: &mut Warp, map: ShuffleMap) {
    if map.whole_warp() {
        fill_by_op(w, map.with_whole_warp());
    } else {
        fill_by_op(w, map);
    }
}

/// `resolve_full_warp` for one map (inlined twice: with the segment width a constant
/// 32, and any width).
#[inline(always)]
fn fill_by_op(w: &mut Warp, map: ShuffleMap) {
    let values: [u64; WARP as usize] = std::array::from_fn(|l| w.lanes[l].value);
    match map.op() {
        abi::warp::SHFL_IDX => fill_full_warp(w, &values, |l| map.source_idx(l)),
        abi::warp::SHFL_UP => fill_full_warp(w, &values, |l| map.source_up(l)),
        abi::warp::SHFL_DOWN => fill_full_warp(w, &values, |l| map.source_down(l)),
        _ => fill_full_warp(w, &values, |l| map.source_xor(l)),
    }
}

#[inline(always)]
fn fill_full_warp(w: &mut Warp, values: &[u64; WARP as usize], source: impl Fn(u32) -> Option<u32>) {
    for lane in 0..WARP {
        let (result, pred) = match source(lane) {
            Some(j) => (values[(j % WARP) as usize], 1),
            None => (values[lane as usize], 0),
        };
        let slot = &mut w.lanes[lane as usize];
        slot.result = result;
        slot.pred = pred;
    }
}

/// Any other group: votes, matches and reductions (computed once where every lane gets
/// the same), and groups whose lanes met with different operations (each lane gets the
/// result of its own operation over the group's values).
fn resolve_mixed(w: &mut Warp, g: &Group, readable: u32, gone: u32) -> Outside {
    let arrived = g.arrived;
    let contrib = device_defined::contributing_lanes(arrived, g.mask);
    let mut ballot = 0u32;
    for l in lanes(contrib) {
        if w.lanes[l as usize].value != 0 {
            ballot |= 1 << l;
        }
    }
    let mut reduced: Option<(u32, i32, u64)> = None;
    let mut outside = None;
    for lane in lanes(arrived) {
        let t = w.lanes[lane as usize];
        let (result, pred) = match t.op {
            op if warp_ops::is_shuffle(op) => match warp_ops::shuffle_source(op, lane, t.arg, t.width) {
                None => (t.value, 0),
                Some(j) if arrived & (1 << j) != 0 => (w.lanes[j as usize].value, 1),
                Some(j) => {
                    let read = readable & (1 << j) != 0;
                    if g.mask & (1 << j) == 0 {
                        outside.get_or_insert((lane, j, op, read));
                    }
                    if read {
                        (w.lanes[j as usize].value, 1)
                    } else {
                        (absent_read(g, gone, op, j, t.value), 0)
                    }
                }
            },
            abi::warp::BALLOT => (ballot as u64, 0),
            abi::warp::ANY => ((ballot != 0) as u64, 0),
            abi::warp::ALL => ((ballot == contrib) as u64, 0),
            abi::warp::MATCH_ANY => {
                let key = warp_ops::match_key(t.value, t.arg);
                let m =
                    lanes(contrib).filter(|&l| warp_ops::match_key(w.lanes[l as usize].value, t.arg) == key).fold(0u32, |m, l| m | 1 << l);
                (m as u64, 0)
            }
            abi::warp::MATCH_ALL => {
                let key = warp_ops::match_key(t.value, t.arg);
                if lanes(contrib).all(|l| warp_ops::match_key(w.lanes[l as usize].value, t.arg) == key) {
                    (device_defined::match_all_mask(g.mask, arrived) as u64, 1)
                } else {
                    (0, 0)
                }
            }
            op if (abi::warp::REDUCE_ADD..=abi::warp::REDUCE_XOR).contains(&op) => match reduced {
                Some((o, a, r)) if o == op && a == t.arg => (r, 0),
                _ => {
                    let r = warp_ops::reduce(op, t.arg == 1, lanes(contrib).map(|l| w.lanes[l as usize].value));
                    reduced = Some((op, t.arg, r));
                    (r, 0)
                }
            },
            _ => (0, 0),
        };
        let slot = &mut w.lanes[lane as usize];
        slot.result = result;
        slot.pred = pred;
    }
    outside
}

#[cfg(test)]
mod tests {
    use crate::abi;
    use crate::exec::hazard::{HazardLog, HazardMode};
    use crate::exec::threads::tests::threads;
    use crate::exec::threads::{Arrival, Threads};
    use crate::exec::warp::Warp;

    #[test]
    fn a_shuffle_resolves_when_the_last_lane_arrives() {
        let (mut t, mut w, mut log) = (threads(32), Warp::default(), HazardLog::new(HazardMode::Warn, "k"));
        let nobody_elsewhere = |_: &Threads, _: u32| 0;
        for l in 0..31 {
            let r =
                w.arrive(&mut t, l, abi::warp::SHFL_DOWN, u32::MAX, 100 + l as u64, 1, 32, abi::Site::UNKNOWN, nobody_elsewhere, &mut log);
            assert_eq!(r, Arrival::Wait);
        }
        let r = w.arrive(&mut t, 31, abi::warp::SHFL_DOWN, u32::MAX, 131, 1, 32, abi::Site::UNKNOWN, nobody_elsewhere, &mut log);
        assert_eq!(r, Arrival::Done(131, 0));
        assert_eq!(w.result(0), (101, 1));
        assert_eq!(w.result(30), (131, 1));
        assert_eq!(t.queues.runnable().len(), 31);
    }
}
