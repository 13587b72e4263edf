//! The `mbarrier` family (PTX ISA, "Parallel Synchronization and Communication
//! Instructions: mbarrier"): init, inval, arrive (with `.noComplete`, a count, `.release`
//! / `.relaxed` at `.cta` / `.cluster` scope), arrive_drop, test_wait and try_wait (the
//! state and the `.parity` forms, try_wait's suspend-time hint), pending_count, on
//! 64-bit objects in the block's shared memory (a `.shared` / `.shared::cta` address, or a
//! generic one into the shared window); and `cp.async.mbarrier.arrive{.noinc}`, exact
//! because `cp.async` copies complete when issued.
//!
//! Semantics live in `runtime/ptx_rt.h` (`mb_*`), which also documents the object's
//! layout and the state token. A wait that is not satisfied yields the thread's fiber
//! (`yield_now`, as `nanosleep` does): a barrier that never completes ends the launch
//! with the watchdog's report like any other spin. Kernels with any of these run on
//! fibers (`uniform::analyse`).
//!
//! Refused (the load fails naming the form): transaction counts (`.expect_tx`,
//! `.complete_tx`, `mbarrier.expect_tx` / `complete_tx`), which only the bulk-copy and
//! tensor hardware completes; remote arrives on `.shared::cluster` objects; 32-bit
//! (`.b32`) objects, which the ISA does not define.

use super::func::FnEmitter;
use crate::ast::Ty;
use crate::resolve::Instr;
use crate::Error;

impl FnEmitter<'_> {
    /// The object's host address: `.shared` / `.shared::cta` or generic.
    fn mb_addr(&mut self, i: &Instr, k: usize) -> Result<String, Error> {
        if i.src.has(".shared::cluster") {
            return Err(self.unsupported(
                "an mbarrier operation on a `.shared::cluster` object (a remote arrive on another block's mbarrier) is not emulated",
            ));
        }
        let a = self.arg(i, k)?.clone();
        self.addr(&a, crate::ast::Space::of_access(&i.src.mods))
    }

    /// `file, line` arguments of the runtime's mbarrier functions (for their traps).
    fn mb_where(&self) -> String {
        format!("{}, {}u", super::c_str(&self.opts.name), self.line())
    }

    /// `mbarrier.*` (and `cp.async.mbarrier.arrive`, `cp_async`).
    pub(super) fn mbarrier(&mut self, i: &Instr) -> Result<String, Error> {
        let at = self.mb_where();
        if i.src.op == "cp" {
            // cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr]: an arrive-on
            // triggered when every prior cp.async of the thread has completed, which they
            // have (they copy when issued). Without .noinc the pending count is raised by
            // one first, so the arrive leaves it as it was: only the object is checked.
            let a = self.mb_addr(i, 0)?;
            return Ok(if i.src.has(".noinc") {
                format!("(void)mb_arrive(T, {a}, 1u, false, false, {at});")
            } else {
                format!("(void)mb_word(T, {a}, {at});")
            });
        }
        for form in [".expect_tx", ".complete_tx"] {
            if i.src.has(form) {
                return Err(self.unsupported(format!(
                    "mbarrier `{form}` (transaction counts, completed by bulk/tensor copy hardware) is not emulated"
                )));
            }
        }
        if i.src.has(".b32") {
            return Err(self.unsupported("mbarrier objects are 64-bit (.b64)"));
        }
        let sub = i.src.mods.first().map(String::as_str).unwrap_or("");
        match sub {
            ".init" => {
                let a = self.mb_addr(i, 0)?;
                let n = self.val(self.arg(i, 1)?, Ty::U32)?;
                Ok(format!("mb_init(T, {a}, {n}, {at});"))
            }
            ".inval" => {
                let a = self.mb_addr(i, 0)?;
                Ok(format!("mb_inval(T, {a}, {at});"))
            }
            ".arrive" | ".arrive_drop" => {
                let drop = sub == ".arrive_drop";
                let no_complete = i.src.has(".noComplete");
                let a = self.mb_addr(i, 1)?;
                let n = match i.args.get(2) {
                    Some(op) => self.val(op, Ty::U32)?,
                    None if no_complete => return Err(self.unsupported("mbarrier.arrive.noComplete without a count")),
                    None => "1u".into(),
                };
                let d = self.arg(i, 0)?.clone();
                self.set(&d, Ty::B64, &format!("mb_arrive(T, {a}, {n}, {drop}, {no_complete}, {at})"))
            }
            ".test_wait" | ".try_wait" => {
                let a = self.mb_addr(i, 1)?;
                let parity = if i.src.has(".parity") {
                    let p = self.val(self.arg(i, 2)?, Ty::U32)?;
                    format!("mb_parity_phase({p})")
                } else {
                    let s = self.val(self.arg(i, 2)?, Ty::B64)?;
                    format!("mb_state_phase({s})")
                };
                // try_wait's optional suspend-time hint (nanoseconds) only bounds how long
                // the device may suspend the thread: one yield here.
                if let Some(h) = i.args.get(3) {
                    if sub == ".test_wait" {
                        return Err(self.unsupported("mbarrier.test_wait takes no suspend-time hint"));
                    }
                    self.val(h, Ty::U32)?;
                }
                let site = self.site();
                let f = if sub == ".try_wait" { "mb_try_wait" } else { "mb_test_wait" };
                let d = self.arg(i, 0)?.clone();
                self.set(&d, Ty::Pred, &format!("{f}(T, {a}, {parity}, {site}, {at})"))
            }
            ".pending_count" => {
                let s = self.val(self.arg(i, 1)?, Ty::B64)?;
                let d = self.arg(i, 0)?.clone();
                self.set(&d, Ty::U32, &format!("mb_pending_count({s})"))
            }
            _ => Err(self.unsupported(format!("`mbarrier{sub}` is not an mbarrier operation PTX mode knows"))),
        }
    }

    /// Whether `cp` instruction `i` is `cp.async.mbarrier.arrive` (handled here).
    pub(super) fn is_cp_mbarrier_arrive(i: &Instr) -> bool {
        i.src.has(".async") && i.src.has(".mbarrier") && i.src.has(".arrive")
    }
}
