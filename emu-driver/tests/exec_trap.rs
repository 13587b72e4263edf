//! Device assert / __trap and faults in kernel code end the launch with the device's
//! error codes; the process and the executor survive.

mod exec_support;
use cuda::abi::*;
use cuda::exec::{self, ExecOptions};
use exec_support::*;
use std::ffi::{c_void, CString};

unsafe fn assert_body(p: *const *mut c_void) {
    let c = ctx();
    let t = c.linear_tid;
    let mode: u64 = param(p, 1);
    // Every thread waits at a barrier first so that others are suspended on fibers
    // when the trap comes.
    if mode & 4 != 0 {
        syncthreads();
    }
    *out::<u32>(p, 0).add((c.block_idx.x * 128 + t) as usize) = 1;
    if c.block_idx.x == 1 && t == 70 && mode & 3 != 0 {
        let msg = CString::new("x < n").unwrap();
        let file = CString::new("kernel.cu").unwrap();
        let kind = (mode & 3) as u32;
        (rt().trap)(kind, msg.as_ptr(), file.as_ptr(), 42);
        unreachable!();
    }
}
kernel!(assert_run, assert_body);

fn trap_launch(mode: u64) -> (exec::LaunchOutcome, Vec<u32>) {
    let k = kref("checked", assert_run);
    let mut res = vec![0u32; 4 * 128];
    let p = params(&[addr(&mut res), mode]);
    let o = run(&k, cfg([4, 1, 1], [64, 2, 1], 0), &p.ptrs);
    (o, res)
}

#[test]
fn a_device_assert_fails_the_launch_with_710_and_stops_it() {
    let (o, res) = trap_launch(trap::ASSERT as u64);
    let e = o.result.unwrap_err();
    assert_eq!(e.code, 710);
    assert!(e.message.contains("kernel checked block (1,0,0) thread (6,1,0)"), "{}", e.message);
    assert!(e.message.contains("`x < n`") && e.message.contains("kernel.cu:42"), "{}", e.message);
    // Block 0 ran, block 1 up to the failing thread, later blocks not at all.
    assert!(res[..128].iter().all(|&r| r == 1));
    assert!(res[128..128 + 71].iter().all(|&r| r == 1));
    assert!(res[128 + 71..].iter().all(|&r| r == 0));
}

#[test]
fn trap_and_unsupported_fail_with_719() {
    let (o, _) = trap_launch(trap::TRAP as u64);
    let e = o.result.unwrap_err();
    assert_eq!(e.code, 719);
    assert!(e.message.contains("__trap()"), "{}", e.message);
    let (o, _) = trap_launch(trap::UNSUPPORTED as u64);
    let e = o.result.unwrap_err();
    assert_eq!(e.code, 719);
    assert!(e.message.contains("unsupported operation"), "{}", e.message);
}

#[test]
fn a_trap_while_other_threads_wait_discards_their_fibers_and_the_next_launch_runs() {
    let (o, res) = trap_launch(trap::ASSERT as u64 | 4);
    assert_eq!(o.result.unwrap_err().code, 710);
    // All 128 threads of block 1 passed the barrier; thread 70 trapped after writing.
    assert!(res[128..256].iter().take(71).all(|&r| r == 1));
    let s0 = exec::stats();
    let (o, res) = trap_launch(4); // kind 0: no trap, the launch completes
    assert_eq!(o.result, Ok(()));
    assert!(res.iter().all(|&r| r == 1));
    assert_eq!(exec::stats().fibers_created, s0.fibers_created, "stacks were reused");
}

unsafe fn fault_body(p: *const *mut c_void) {
    let c = ctx();
    let t = c.linear_tid;
    let what: u64 = param(p, 0);
    if what & 8 != 0 {
        syncthreads();
    }
    if c.block_idx.x == 1 && t == 37 {
        match what & 7 {
            1 => {
                std::ptr::read_volatile(0x10 as *const u32);
            }
            2 => {
                let zero = std::hint::black_box(0u32);
                let r: u32;
                std::arch::asm!("xor edx, edx", "div {z:e}", z = in(reg) zero, inout("eax") 7u32 => r, out("edx") _);
                std::hint::black_box(r);
            }
            3 => {
                recurse(0);
            }
            4 => {
                std::ptr::read_volatile(std::hint::black_box(0x8000_0000_0000_1000u64) as *const u32);
            }
            _ => {}
        }
    }
}
kernel!(fault_run, fault_body);

#[inline(never)]
fn recurse(depth: u64) -> u64 {
    let buf = std::hint::black_box([depth; 512]);
    if std::hint::black_box(true) {
        recurse(depth + 1) + buf[3]
    } else {
        0
    }
}

fn fault_launch(what: u64, stack: usize) -> exec::LaunchOutcome {
    let k = kref("faulty", fault_run);
    let p = params(&[what]);
    exec::launch(&k, &cfg([3, 1, 1], [64, 1, 1], 0), &p.ptrs, &ExecOptions { stack_size: stack, ..ExecOptions::default() })
}

#[test]
fn a_wild_pointer_is_an_illegal_address_report() {
    for barrier in [0, 8] {
        let o = fault_launch(1 | barrier, 256 * 1024);
        let e = o.result.unwrap_err();
        assert_eq!(e.code, 700);
        assert!(e.message.contains("kernel faulty block (1,0,0) thread (37,0,0)"), "{}", e.message);
        assert!(e.message.contains("at 0x10 "), "{}", e.message);
        assert_eq!(fault_launch(barrier, 256 * 1024).result, Ok(()), "the executor still works");
    }
}

#[test]
fn a_non_canonical_address_is_named_as_such_not_as_0x0() {
    let e = fault_launch(4, 256 * 1024).result.unwrap_err();
    assert_eq!((e.code, e.address), (700, None));
    assert!(e.message.contains("through a non-canonical address") && !e.message.contains("at 0x0 "), "{}", e.message);
}

#[test]
fn an_integer_division_by_zero_fails_with_719() {
    let e = fault_launch(2, 256 * 1024).result.unwrap_err();
    assert_eq!(e.code, 719);
    assert!(e.message.contains("integer division by zero") && e.message.contains("thread (37,0,0)"), "{}", e.message);
    assert_eq!(fault_launch(8, 256 * 1024).result, Ok(()));
}

#[test]
fn a_stack_overflow_is_reported_with_the_stack_size() {
    let e = fault_launch(3, 64 * 1024).result.unwrap_err();
    assert_eq!(e.code, 700);
    assert!(e.message.contains("stack overflow") && e.message.contains("65536 bytes"), "{}", e.message);
    assert_eq!(fault_launch(8, 64 * 1024).result, Ok(()));
}

#[test]
fn faults_on_another_os_thread_are_handled_there() {
    let h = std::thread::spawn(|| fault_launch(1, 128 * 1024).result.unwrap_err().code);
    assert_eq!(h.join().unwrap(), 700);
}
