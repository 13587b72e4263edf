//! The `waves` pass on hand-written kernels: which shuffles it fuses, what it leaves in
//! place, and when it does nothing.

use simtwin_ptx::resolve::{Module, Node, Op};
use simtwin_ptx::{link, parse, resolve, waves};

fn front(src: &str) -> (Module, usize) {
    let mut m = resolve::resolve(link::link(vec![parse::parse(src).unwrap()]).unwrap()).unwrap();
    let fused = waves::fuse(&mut m);
    (m, fused)
}

/// The body of kernel `k` as (opcode, members of a fused shuffle or 1).
fn ops(m: &Module, k: &str) -> Vec<(String, usize)> {
    let f = &m.funcs[m.func(k).unwrap()];
    f.body
        .iter()
        .filter_map(|n| match n {
            Node::Instr(i) => Some((i.src.op.clone(), waves::members(i).map_or(1, |(d, _)| d.len()))),
            Node::Label(_) => None,
        })
        .collect()
}

const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Two sums reduced one after another, two levels each, nvcc's 64-bit shape (the halves
/// shuffled apart, a literal zero's shuffle beside them), a float add between them.
fn two_sums(extra: &str) -> String {
    format!(
        r#"{HEAD}
.visible .entry k(.param .u64 out)
{{
    .reg .b32 %r<40>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<40>;
    .reg .pred %p<8>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    cvt.u64.u32 %rd2, %r1;
    mul.wide.u32 %rd3, %r1, %r1;
    mov.u32 %r9, 0;
    shfl.sync.down.b32 %r10|%p1, %r9, 16, 31, -1;
    mov.b64 {{%r11, %r12}}, %rd2;
    shfl.sync.down.b32 %r13|%p2, %r11, 16, 31, -1;
    shfl.sync.down.b32 %r14|%p3, %r12, 16, 31, -1;
    mov.b64 %rd4, {{%r13, %r14}};
    add.s64 %rd5, %rd2, %rd4;
    mov.b64 {{%r15, %r16}}, %rd5;
    shfl.sync.down.b32 %r17, %r15, 8, 31, -1;
    shfl.sync.down.b32 %r18, %r16, 8, 31, -1;
    mov.b64 %rd6, {{%r17, %r18}};
    add.s64 %rd7, %rd5, %rd6;
    cvt.rn.f32.u32 %f1, %r1;
    add.f32 %f2, %f1, %f1;
    mov.b64 {{%r21, %r22}}, %rd3;
    shfl.sync.down.b32 %r23, %r21, 16, 31, -1;
    shfl.sync.down.b32 %r24, %r22, 16, 31, -1;
    mov.b64 %rd8, {{%r23, %r24}};
    add.s64 %rd9, %rd3, %rd8;
    mov.b64 {{%r25, %r26}}, %rd9;
    shfl.sync.down.b32 %r27, %r25, 8, 31, -1;
    shfl.sync.down.b32 %r28, %r26, 8, 31, -1;
    mov.b64 %rd10, {{%r27, %r28}};
    add.s64 %rd11, %rd9, %rd10;
    {extra}
    add.s64 %rd12, %rd7, %rd11;
    st.global.u64 [%rd1], %rd12;
    st.global.f32 [%rd1+8], %f2;
    ret;
}}
"#
    )
}

#[test]
fn each_level_of_independent_sums_becomes_one_shuffle() {
    let (m, fused) = front(&two_sums(""));
    // The float add is fixed: it splits the kernel into two runs, each one sum's two
    // levels (two dependent shuffle pairs): each pair fused, the levels apart.
    let shfl: Vec<usize> = ops(&m, "k").iter().filter(|(o, _)| o == "shfl").map(|(_, n)| *n).collect();
    assert_eq!(shfl, vec![1, 2, 2, 2, 2], "the literal's shuffle alone, then pairs");
    assert_eq!(fused, 4);
    // Without the float code between them, the two sums' levels meet: one shuffle of
    // four values a level.
    let src = two_sums("").replace("    cvt.rn.f32.u32 %f1, %r1;\n    add.f32 %f2, %f1, %f1;\n", "");
    let src = src.replace("    st.global.f32 [%rd1+8], %f2;\n", "");
    let (m, fused) = front(&src);
    let body = ops(&m, "k");
    let shfl: Vec<usize> = body.iter().filter(|(o, _)| o == "shfl").map(|(_, n)| *n).collect();
    assert_eq!(shfl, vec![1, 4, 4]);
    assert_eq!(fused, 6);
    // The fused shuffle has no predicate result; its members' values and results are
    // vectors in their order.
    let f = &m.funcs[m.func("k").unwrap()];
    let first = f.body.iter().find_map(|n| match n {
        Node::Instr(i) if waves::members(i).is_some() => Some(i),
        _ => None,
    });
    let (d, a) = waves::members(first.unwrap()).unwrap();
    assert_eq!((d.len(), a.len()), (4, 4));
    assert!(d.iter().all(|o| matches!(o, Op::Reg(_))), "{d:?}");
    // Memory stays in place: the stores are still last, after every shuffle.
    let last_shfl = body.iter().rposition(|(o, _)| o == "shfl").unwrap();
    let first_st = body.iter().position(|(o, _)| o == "st").unwrap();
    assert!(last_shfl < first_st);
}

#[test]
fn nothing_fuses_where_the_threads_order_shows_or_a_predicate_is_read() {
    // An atomic whose old value is read: the order of the lanes shows.
    let src = two_sums("atom.global.add.u32 %r30, [%rd1+16], 1;\n    st.global.u32 [%rd1+20], %r30;")
        .replace("    cvt.rn.f32.u32 %f1, %r1;\n    add.f32 %f2, %f1, %f1;\n", "")
        .replace("    st.global.f32 [%rd1+8], %f2;\n", "");
    let (m, fused) = front(&src);
    assert_eq!(fused, 0);
    assert!(ops(&m, "k").iter().all(|(_, n)| *n == 1));
    // A shuffle whose predicate result is read keeps its own exchange; its partner
    // (the other half) has no other to fuse with at its level.
    let src = two_sums("selp.u64 %rd13, 1, 0, %p3;\n    st.global.u64 [%rd1+24], %rd13;");
    let (m, _) = front(&src);
    let shfl: Vec<usize> = ops(&m, "k").iter().filter(|(o, _)| o == "shfl").map(|(_, n)| *n).collect();
    assert_eq!(shfl, vec![1, 1, 1, 2, 2, 2]);
}
