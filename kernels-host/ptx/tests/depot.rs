//! The `depot` pass on hand-written kernels in nvcc's shape: a by-value structure copied
//! into the `.local` depot and read there at a computed offset is read from the parameter
//! buffer instead; anything else that touches the depot keeps it.

use simtwin_ptx::resolve::{AddrBase, Module, Node, Op, VarRef};
use simtwin_ptx::{depot, link, parse, resolve};

fn front(src: &str) -> (Module, usize) {
    let mut m = resolve::resolve(link::link(vec![parse::parse(src).unwrap()]).unwrap()).unwrap();
    let n = depot::forward(&mut m);
    (m, n)
}

/// Kernel `k`'s instructions as text (opcode with modifiers).
fn ops(m: &Module) -> Vec<String> {
    let f = &m.funcs[m.func("k").unwrap()];
    f.body
        .iter()
        .filter_map(|n| match n {
            Node::Instr(i) => Some(i.src.text()),
            Node::Label(_) => None,
        })
        .collect()
}

/// nvcc's copy of two 24-byte structures (`{u32 w, h; u64 stride[2]}`) into a 48-byte
/// depot and a read of `stride[plane]` from each; `body` goes after the copy, `more` is
/// extra code at the end of the copy.
fn kernel(more: &str, body: &str) -> String {
    format!(
        r#".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .align 8 .b8 k_param_0[24], .param .align 8 .b8 k_param_1[24], .param .u32 k_param_2, .param .u64 k_param_3)
{{
    .local .align 8 .b8 __local_depot0[48];
    .reg .b64 %SP;
    .reg .b64 %SPL;
    .reg .b32 %r<20>;
    .reg .b64 %rd<40>;
    .reg .pred %p<4>;
    mov.u64 %SPL, __local_depot0;
    ld.param.u32 %r1, [k_param_2];
    ld.param.u64 %rd30, [k_param_3];
    add.u64 %rd1, %SPL, 0;
    add.u64 %rd2, %SPL, 24;
    ld.param.v2.u32 {{%r2, %r3}}, [k_param_0];
    st.local.v2.u32 [%rd1], {{%r2, %r3}};
    ld.param.u64 %rd3, [k_param_0+8];
    ld.param.u64 %rd4, [k_param_0+16];
    st.local.u64 [%rd1+8], %rd3;
    st.local.u64 [%rd1+16], %rd4;
    ld.param.v2.u32 {{%r4, %r5}}, [k_param_1];
    st.local.v2.u32 [%rd2], {{%r4, %r5}};
    ld.param.u64 %rd5, [k_param_1+8];
    ld.param.u64 %rd6, [k_param_1+16];
    st.local.u64 [%rd2+8], %rd5;
    st.local.u64 [%rd2+16], %rd6;
{more}
    mul.wide.u32 %rd7, %r1, 8;
    add.s64 %rd8, %rd1, %rd7;
    add.s64 %rd9, %rd2, %rd7;
{body}
    ld.local.u64 %rd10, [%rd8+8];
    ld.local.u64 %rd11, [%rd9+8];
    add.s64 %rd12, %rd10, %rd11;
    cvta.to.global.u64 %rd31, %rd30;
    st.global.u64 [%rd31], %rd12;
    ret;
}}
"#
    )
}

#[test]
fn a_copy_of_by_value_parameters_is_read_from_the_buffer() {
    let (m, n) = front(&kernel("", ""));
    assert_eq!(n, 1);
    let f = &m.funcs[m.func("k").unwrap()];
    assert!(f.frame.is_empty(), "the depot is gone: {:?}", f.frame);
    let text = ops(&m);
    assert!(!text.iter().any(|t| t.starts_with("st.local")), "the copy is gone: {text:?}");
    assert!(!text.iter().any(|t| t.starts_with("ld.local")), "the reads are parameter reads: {text:?}");
    // The depot's base is the buffer's start (the copy is the buffer byte for byte:
    // k_param_0 at 0, k_param_1 at 24), and its two loads read through it.
    let base = f.body.iter().find_map(|n| match n {
        Node::Instr(i) if i.src.op == "mov" => Some(i.args[1].clone()),
        _ => None,
    });
    assert_eq!(base, Some(Op::Var(VarRef::Param(0), 0)));
    let through: Vec<&Op> = f
        .body
        .iter()
        .filter_map(|n| match n {
            Node::Instr(i) if i.src.op == "ld" && matches!(i.args[1], Op::Addr(AddrBase::Reg(_), _)) => Some(&i.args[1]),
            _ => None,
        })
        .collect();
    assert_eq!(through.len(), 2, "{text:?}");
}

#[test]
fn a_shifted_copy_reads_the_buffer_at_its_distance() {
    // Only k_param_1 copied, to the depot's start: the buffer is 24 bytes further on.
    let src = r#".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .align 8 .b8 k_param_0[24], .param .align 8 .b8 k_param_1[16], .param .u32 k_param_2)
{
    .local .align 8 .b8 __local_depot0[16];
    .reg .b64 %SPL;
    .reg .b32 %r<8>;
    .reg .b64 %rd<20>;
    mov.u64 %SPL, __local_depot0;
    ld.param.u32 %r1, [k_param_2];
    ld.param.u64 %rd3, [k_param_1];
    ld.param.u64 %rd4, [k_param_1+8];
    st.local.u64 [%SPL], %rd3;
    st.local.u64 [%SPL+8], %rd4;
    mul.wide.u32 %rd7, %r1, 8;
    add.s64 %rd8, %SPL, %rd7;
    ld.local.u64 %rd10, [%rd8];
    st.global.u64 [%rd10], %rd10;
    ret;
}
"#;
    let (m, n) = front(src);
    assert_eq!(n, 1);
    let f = &m.funcs[m.func("k").unwrap()];
    let base = f.body.iter().find_map(|n| match n {
        Node::Instr(i) if i.src.op == "mov" => Some(i.args[1].clone()),
        _ => None,
    });
    assert_eq!(base, Some(Op::Var(VarRef::Param(0), 24)));
}

#[test]
fn a_depot_used_otherwise_stays() {
    let cases = [
        // Written again after the copy.
        ("", "    st.local.u32 [%rd8], %r1;"),
        // Its address escapes as a generic pointer.
        ("", "    cvta.local.u64 %SP, %rd8;\n    st.global.u64 [%rd30], %SP;"),
        // A byte of the copy from a register no parameter load wrote.
        ("    add.u32 %r6, %r1, 1;\n    st.local.u32 [%rd1+4], %r6;", ""),
        // Its address stored to memory.
        ("", "    st.global.u64 [%rd30], %rd8;"),
    ];
    for (more, body) in cases {
        let (m, n) = front(&kernel(more, body));
        assert_eq!(n, 0, "{more} {body}");
        assert_eq!(m.funcs[m.func("k").unwrap()].frame.len(), 1, "{more} {body}");
        assert!(ops(&m).iter().any(|t| t.starts_with("st.local")), "{more} {body}");
    }
    // A copy under a branch (not the code every path runs first), and one that covers
    // only part of the depot.
    let guarded = kernel("", "").replace("    st.local.u64 [%rd2+16], %rd6;", "    @%p1 st.local.u64 [%rd2+16], %rd6;");
    assert_eq!(front(&guarded).1, 0);
    let partial = kernel("", "").replace("    st.local.u64 [%rd2+16], %rd6;\n", "");
    assert_eq!(front(&partial).1, 0);
}
