"""The contraction corpus: one case per question about ptxas's mul+add -> fma rule.

Each case is (name, doc, body[, options]); ptxgen.py wraps the body into a kernel of the
same name that loads the inputs it names (%f1.., %fd1.., %h1.., %r1..) from global memory.
"""
import re

CASES = []


def case(name, doc, body=None, **kw):
    CASES.append(dict(name=name, doc=doc, body=body, **kw))


ST = "st.global.f32 [%rd2+{}], {};"

# --- f32 basics ------------------------------------------------------------------------
case("f32_mul_add", "mul.f32 then add.f32 (product first): the basic pair", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("f32_mul_add_second", "add.f32 with the product as second operand", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f3, %f20;
st.global.f32 [%rd2], %f21;
""")
case("f32_mul_sub_minuend", "sub.f32 product - c", """
mul.f32 %f20, %f1, %f2;
sub.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("f32_mul_sub_subtrahend", "sub.f32 c - product", """
mul.f32 %f20, %f1, %f2;
sub.f32 %f21, %f3, %f20;
st.global.f32 [%rd2], %f21;
""")
case("f32_rn_both", "mul.rn.f32 + add.rn.f32 (explicit rounding): expected unfused", """
mul.rn.f32 %f20, %f1, %f2;
add.rn.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("f32_mul_rn_add", "mul.rn.f32 + add.f32", """
mul.rn.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("f32_mul_add_rn", "mul.f32 + add.rn.f32", """
mul.f32 %f20, %f1, %f2;
add.rn.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("f32_mul_add_rz", "mul.f32 + add.rz.f32", """
mul.f32 %f20, %f1, %f2;
add.rz.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("f32_neg_product", "neg.f32 of the product, then add", """
mul.f32 %f20, %f1, %f2;
neg.f32 %f22, %f20;
add.f32 %f21, %f22, %f3;
st.global.f32 [%rd2], %f21;
""")
case("f32_neg_input", "mul of a negated input, then add", """
neg.f32 %f22, %f1;
mul.f32 %f20, %f22, %f2;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("f32_neg_addend_sub", "(-c) - a*b", """
neg.f32 %f22, %f3;
mul.f32 %f20, %f1, %f2;
sub.f32 %f21, %f22, %f20;
st.global.f32 [%rd2], %f21;
""")
case("f32_abs_product", "abs.f32 of the product, then add", """
mul.f32 %f20, %f1, %f2;
abs.f32 %f22, %f20;
add.f32 %f21, %f22, %f3;
st.global.f32 [%rd2], %f21;
""")

# --- f32 ftz / sat / rounding modifiers ----------------------------------------------------
for m, a, doc in [
    ("ftz", "", "mul.ftz.f32 + add.f32"),
    ("", "ftz", "mul.f32 + add.ftz.f32"),
    ("ftz", "ftz", "mul.ftz.f32 + add.ftz.f32"),
    ("sat", "", "mul.sat.f32 + add.f32"),
    ("", "sat", "mul.f32 + add.sat.f32"),
    ("sat", "sat", "mul.sat.f32 + add.sat.f32"),
    ("ftz", "ftz.sat", "mul.ftz.f32 + add.ftz.sat.f32"),
    ("", "ftz.sat", "mul.f32 + add.ftz.sat.f32"),
    ("rz", "", "mul.rz.f32 + add.f32"),
    ("rn.ftz", "ftz", "mul.rn.ftz.f32 + add.ftz.f32"),
]:
    mm = "." + m if m else ""
    aa = "." + a if a else ""
    nm = "f32_mod_mul_%s_add_%s" % (m.replace(".", "_") or "none", a.replace(".", "_") or "none")
    case(nm, doc, f"""
mul{mm}.f32 %f20, %f1, %f2;
add{aa}.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
for m, a, doc in [
    ("ftz", "", "mul.ftz.f32 + sub.f32"),
    ("", "ftz", "mul.f32 + sub.ftz.f32"),
    ("", "sat", "mul.f32 + sub.sat.f32"),
    ("", "rn", "mul.f32 + sub.rn.f32"),
]:
    mm = "." + m if m else ""
    aa = "." + a if a else ""
    nm = "f32_mod_mul_%s_sub_%s" % (m or "none", a or "none")
    case(nm, doc, f"""
mul{mm}.f32 %f20, %f1, %f2;
sub{aa}.f32 %f21, %f3, %f20;
st.global.f32 [%rd2], %f21;
""")
case("f32_mad_rn", "mad.rn.f32 (is fma.rn.f32)", """
mad.rn.f32 %f21, %f1, %f2, %f3;
st.global.f32 [%rd2], %f21;
""")
case("f32_fma_rn", "fma.rn.f32 as written", """
fma.rn.f32 %f21, %f1, %f2, %f3;
st.global.f32 [%rd2], %f21;
""")
case("f32_fma_rz_ftz_sat", "fma.rz.ftz.sat.f32 as written", """
fma.rz.ftz.sat.f32 %f21, %f1, %f2, %f3;
st.global.f32 [%rd2], %f21;
""")

# --- f64 ---------------------------------------------------------------------------------
case("f64_mul_add", "mul.f64 + add.f64", """
mul.f64 %fd20, %fd1, %fd2;
add.f64 %fd21, %fd20, %fd3;
st.global.f64 [%rd2], %fd21;
""")
case("f64_mul_sub", "mul.f64 + sub.f64 (c - ab)", """
mul.f64 %fd20, %fd1, %fd2;
sub.f64 %fd21, %fd3, %fd20;
st.global.f64 [%rd2], %fd21;
""")
case("f64_rn", "mul.rn.f64 + add.rn.f64", """
mul.rn.f64 %fd20, %fd1, %fd2;
add.rn.f64 %fd21, %fd20, %fd3;
st.global.f64 [%rd2], %fd21;
""")
case("f64_mul_rn_add", "mul.rn.f64 + add.f64", """
mul.rn.f64 %fd20, %fd1, %fd2;
add.f64 %fd21, %fd20, %fd3;
st.global.f64 [%rd2], %fd21;
""")
case("f64_mul_add_rn", "mul.f64 + add.rn.f64", """
mul.f64 %fd20, %fd1, %fd2;
add.rn.f64 %fd21, %fd20, %fd3;
st.global.f64 [%rd2], %fd21;
""")

# --- f16 / bf16 --------------------------------------------------------------------------
for ty, v in [("f16", "8.0"), ("bf16", "8.0")]:
    case(f"{ty}_mul_add", f"mul.{ty} + add.{ty}", f"""
mul.{ty} %h20, %h1, %h2;
add.{ty} %h21, %h20, %h3;
st.global.b16 [%rd2], %h21;
""", version=v)
    case(f"{ty}_mul_sub", f"mul.{ty} + sub.{ty} (c - ab)", f"""
mul.{ty} %h20, %h1, %h2;
sub.{ty} %h21, %h3, %h20;
st.global.b16 [%rd2], %h21;
""", version=v)
    case(f"{ty}_rn", f"mul.rn.{ty} + add.rn.{ty}", f"""
mul.rn.{ty} %h20, %h1, %h2;
add.rn.{ty} %h21, %h20, %h3;
st.global.b16 [%rd2], %h21;
""", version=v)
    case(f"{ty}x2_mul_add", f"mul.{ty}x2 + add.{ty}x2", f"""
mul.{ty}x2 %r20, %r1, %r2;
add.{ty}x2 %r21, %r20, %r3;
st.global.b32 [%rd2], %r21;
""", version=v)
    case(f"{ty}x2_rn", f"mul.rn.{ty}x2 + add.rn.{ty}x2", f"""
mul.rn.{ty}x2 %r20, %r1, %r2;
add.rn.{ty}x2 %r21, %r20, %r3;
st.global.b32 [%rd2], %r21;
""", version=v)
case("f16_mul_ftz_add", "mul.ftz.f16 + add.f16", """
mul.ftz.f16 %h20, %h1, %h2;
add.f16 %h21, %h20, %h3;
st.global.b16 [%rd2], %h21;
""")
case("f16_mul_add_sat", "mul.f16 + add.sat.f16", """
mul.f16 %h20, %h1, %h2;
add.sat.f16 %h21, %h20, %h3;
st.global.b16 [%rd2], %h21;
""")
case("f16_mul_add_ftz", "mul.f16 + add.ftz.f16", """
mul.f16 %h20, %h1, %h2;
add.ftz.f16 %h21, %h20, %h3;
st.global.b16 [%rd2], %h21;
""")

# --- uses of the product -----------------------------------------------------------------
case("use_two_adds", "one product used by two adds", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
add.f32 %f22, %f20, %f4;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f22;
""")
case("use_three_adds", "one product used by three adds", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
add.f32 %f22, %f20, %f4;
add.f32 %f23, %f20, %f5;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f22;
st.global.f32 [%rd2+8], %f23;
""")
case("use_add_sub", "one product used by an add and a sub", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
sub.f32 %f22, %f4, %f20;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f22;
""")
case("use_add_store", "product used by an add and stored", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f20;
""")
case("use_add_setp", "product used by an add and a compare", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
setp.gt.f32 %p1, %f20, %f4;
selp.f32 %f22, %f21, %f5, %p1;
st.global.f32 [%rd2], %f22;
""")
case("use_add_mul", "product used by an add and by another mul", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
mul.f32 %f22, %f20, %f4;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f22;
""")
case("use_add_rnadd", "product used by add.f32 and add.rn.f32", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
add.rn.f32 %f22, %f20, %f4;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f22;
""")
case("use_add_fma_addend", "product used by an add and as the addend of fma.rn", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
fma.rn.f32 %f22, %f4, %f5, %f20;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f22;
""")
case("fma_addend_only", "product used only as the addend of fma.rn (not a contraction)", """
mul.f32 %f20, %f1, %f2;
fma.rn.f32 %f22, %f4, %f5, %f20;
st.global.f32 [%rd2], %f22;
""")
case("use_sum_many", "the fused sum used by several instructions", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
mul.f32 %f22, %f21, %f4;
add.f32 %f23, %f21, %f5;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f22;
st.global.f32 [%rd2+8], %f23;
""")
case("use_p_plus_p", "product added to itself: add p, p", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f20;
st.global.f32 [%rd2], %f21;
""")
case("use_p_minus_p", "product minus itself: sub p, p", """
mul.f32 %f20, %f1, %f2;
sub.f32 %f21, %f20, %f20;
st.global.f32 [%rd2], %f21;
""")
case("use_same_product_twice", "the same product computed twice (CSE?) and summed: ab + ab", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f22, %f1, %f2;
add.f32 %f21, %f20, %f22;
st.global.f32 [%rd2], %f21;
""")
case("use_two_adds_ftz_mismatch", "product used by add.f32 and add.ftz.f32", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
add.ftz.f32 %f22, %f20, %f4;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f22;
""")

# --- two products ------------------------------------------------------------------------
case("two_products_ab_cd", "a*b + c*d, muls in order, add(p1, p2)", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f22, %f20, %f21;
st.global.f32 [%rd2], %f22;
""")
case("two_products_swapped_operands", "a*b + c*d, muls in order, add(p2, p1)", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f22, %f21, %f20;
st.global.f32 [%rd2], %f22;
""")
case("two_products_swapped_defs", "c*d defined first, add(p1, p2)", """
mul.f32 %f21, %f3, %f4;
mul.f32 %f20, %f1, %f2;
add.f32 %f22, %f20, %f21;
st.global.f32 [%rd2], %f22;
""")
case("two_products_swapped_both", "c*d defined first, add(p2, p1)", """
mul.f32 %f21, %f3, %f4;
mul.f32 %f20, %f1, %f2;
add.f32 %f22, %f21, %f20;
st.global.f32 [%rd2], %f22;
""")
case("two_products_regnum", "register numbers reversed: %f30 defined first", """
mul.f32 %f30, %f1, %f2;
mul.f32 %f20, %f3, %f4;
add.f32 %f22, %f30, %f20;
st.global.f32 [%rd2], %f22;
""")
case("two_products_sub", "a*b - c*d", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
sub.f32 %f22, %f20, %f21;
st.global.f32 [%rd2], %f22;
""")
case("two_products_sub_rev", "c*d defined first; a*b - c*d", """
mul.f32 %f21, %f3, %f4;
mul.f32 %f20, %f1, %f2;
sub.f32 %f22, %f20, %f21;
st.global.f32 [%rd2], %f22;
""")
case("two_products_one_shared", "a*b + c*d where c*d is also stored", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f22, %f20, %f21;
st.global.f32 [%rd2], %f22;
st.global.f32 [%rd2+4], %f21;
""")
case("two_products_other_shared", "a*b + c*d where a*b is also stored", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f22, %f20, %f21;
st.global.f32 [%rd2], %f22;
st.global.f32 [%rd2+4], %f20;
""")
case("two_products_one_rn", "a*b (mul.rn) + c*d (mul)", """
mul.rn.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f22, %f20, %f21;
st.global.f32 [%rd2], %f22;
""")
case("dot3", "a*b + c*d + e*f, left to right", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f22, %f20, %f21;
mul.f32 %f23, %f5, %f6;
add.f32 %f24, %f22, %f23;
st.global.f32 [%rd2], %f24;
""")
case("dot4_tree", "(a*b + c*d) + (e*f + g*h)", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f22, %f20, %f21;
mul.f32 %f23, %f5, %f6;
mul.f32 %f24, %f7, %f8;
add.f32 %f25, %f23, %f24;
add.f32 %f26, %f22, %f25;
st.global.f32 [%rd2], %f26;
""")
case("mul_mul_add", "(a*b)*c + d: only the second product can fuse", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f20, %f3;
add.f32 %f22, %f21, %f4;
st.global.f32 [%rd2], %f22;
""")
case("add_chain", "(a*b + c) + d", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
add.f32 %f22, %f21, %f4;
st.global.f32 [%rd2], %f22;
""")

# --- which product, when both operands qualify and uses differ -------------------------------
case("choice_first_used_twice", "add(p, q): p = a*b also used by another add, q = c*d single use", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f22, %f20, %f21;
add.f32 %f23, %f20, %f5;
st.global.f32 [%rd2], %f22;
st.global.f32 [%rd2+4], %f23;
""")
case("choice_second_used_twice", "add(p, q): q = c*d also used by another add, p single use", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f22, %f20, %f21;
add.f32 %f23, %f21, %f5;
st.global.f32 [%rd2], %f22;
st.global.f32 [%rd2+4], %f23;
""")
case("choice_conflict_addend", "add(q, p) and add(p, e): p is the addend of the first (q fused there)", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f22, %f21, %f20;
add.f32 %f23, %f20, %f5;
st.global.f32 [%rd2], %f22;
st.global.f32 [%rd2+4], %f23;
""")
case("choice_conflict_addend_rev", "add(p, e) first, then add(q, p)", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f23, %f20, %f5;
add.f32 %f22, %f21, %f20;
st.global.f32 [%rd2], %f22;
st.global.f32 [%rd2+4], %f23;
""")
case("choice_both_shared", "add(p, q) and add(q, p): both products used by both adds", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f22, %f20, %f21;
add.f32 %f23, %f21, %f20;
st.global.f32 [%rd2], %f22;
st.global.f32 [%rd2+4], %f23;
""")
case("choice_sub_both", "sub(p, q) and sub(q, p)", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
sub.f32 %f22, %f20, %f21;
sub.f32 %f23, %f21, %f20;
st.global.f32 [%rd2], %f22;
st.global.f32 [%rd2+4], %f23;
""")
case("cse_then_store", "two identical muls: one used by an add, one stored (CSE first?)", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
mul.f32 %f22, %f1, %f2;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f22;
""")
case("cse_commuted_then_store", "a*b used by an add, b*a stored", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
mul.f32 %f22, %f2, %f1;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f22;
""")
case("cse_rn_then_store", "a*b (mul.f32) used by an add, a*b (mul.rn.f32) stored", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
mul.rn.f32 %f22, %f1, %f2;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f22;
""")
case("cse_two_adds_same", "a*b + c computed twice (CSE of the adds)", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
mul.f32 %f22, %f1, %f2;
add.f32 %f23, %f22, %f3;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f23;
""")
case("choice_fallback", "A=add(p,q) ties (p,q two uses each) and picks p; p's other use B=add(r,p) picks r: does A fall back to q?", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
mul.f32 %f22, %f5, %f6;
add.f32 %f23, %f20, %f21;
add.f32 %f24, %f22, %f20;
add.f32 %f25, %f21, %f7;
st.global.f32 [%rd2], %f23;
st.global.f32 [%rd2+4], %f24;
st.global.f32 [%rd2+8], %f25;
""")
case("choice_three_vs_two", "add(p,q): p used by 3 adds, q by 2 adds", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f23, %f20, %f21;
add.f32 %f24, %f20, %f5;
add.f32 %f25, %f20, %f6;
add.f32 %f26, %f21, %f7;
st.global.f32 [%rd2], %f23;
st.global.f32 [%rd2+4], %f24;
st.global.f32 [%rd2+8], %f25;
st.global.f32 [%rd2+12], %f26;
""")
case("choice_fewer_uses_nonfusable", "add(p,q): q has 1 use, p 2 uses but its other use is a store", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f23, %f21, %f20;
st.global.f32 [%rd2], %f23;
st.global.f32 [%rd2+4], %f20;
""")
case("choice_first_nonfusable_more", "add(p,q): p has 1 use, q 2 uses, both fusable only in this add... q's other use a store", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f23, %f20, %f21;
st.global.f32 [%rd2], %f23;
st.global.f32 [%rd2+4], %f21;
""")
case("choice_uses_count_store", "add(p,q): p 2 uses (add + store), q 3 uses (3 adds): which is picked?", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f23, %f20, %f21;
add.f32 %f24, %f21, %f5;
add.f32 %f25, %f21, %f6;
st.global.f32 [%rd2], %f23;
st.global.f32 [%rd2+4], %f24;
st.global.f32 [%rd2+8], %f25;
st.global.f32 [%rd2+12], %f20;
""")
case("tie_order_first_use", "B=add(p,e) before A=add(q,p); p and q both have two add uses (q also in C=add(q,e2))", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f23, %f20, %f5;
add.f32 %f24, %f21, %f20;
add.f32 %f25, %f21, %f6;
st.global.f32 [%rd2], %f23;
st.global.f32 [%rd2+4], %f24;
st.global.f32 [%rd2+8], %f25;
""")
case("tie_order_first_use_b", "as tie_order_first_use with q's other add first: C=add(q,e2), B=add(p,e), A=add(q,p)", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f25, %f21, %f6;
add.f32 %f23, %f20, %f5;
add.f32 %f24, %f21, %f20;
st.global.f32 [%rd2], %f23;
st.global.f32 [%rd2+4], %f24;
st.global.f32 [%rd2+8], %f25;
""")
case("tie_order_first_use_c", "B=add(e,p) before A=add(q,p): p appears first, but as second operand", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
add.f32 %f23, %f5, %f20;
add.f32 %f24, %f21, %f20;
add.f32 %f25, %f21, %f6;
st.global.f32 [%rd2], %f23;
st.global.f32 [%rd2+4], %f24;
st.global.f32 [%rd2+8], %f25;
""")
case("tie_order_defs_reversed", "q defined before p; B=add(p,e), A=add(q,p), C=add(q,e2)", """
mul.f32 %f21, %f3, %f4;
mul.f32 %f20, %f1, %f2;
add.f32 %f23, %f20, %f5;
add.f32 %f24, %f21, %f20;
add.f32 %f25, %f21, %f6;
st.global.f32 [%rd2], %f23;
st.global.f32 [%rd2+4], %f24;
st.global.f32 [%rd2+8], %f25;
""")

# --- distance: other instructions, blocks, loops, barriers, copies ------------------------
case("dist_other_insns", "unrelated integer and memory instructions between mul and add", """
mul.f32 %f20, %f1, %f2;
add.s32 %r20, %r1, %r2;
mul.lo.s32 %r21, %r20, %r3;
st.global.u32 [%rd2+8], %r21;
ld.global.f32 %f30, [%rd1+60];
st.global.f32 [%rd2+12], %f30;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("dist_other_float", "unrelated float mul and add between the pair", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f30, %f5, %f6;
add.f32 %f31, %f30, %f7;
st.global.f32 [%rd2+4], %f31;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("dist_branch_diamond", "mul before a branch, add in one arm", """
mul.f32 %f20, %f1, %f2;
setp.gt.s32 %p1, %r1, 0;
@%p1 bra THEN;
st.global.f32 [%rd2+4], %f4;
bra.uni DONE;
THEN:
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
DONE:
""")
case("dist_branch_join", "mul before a branch, add after the join", """
mul.f32 %f20, %f1, %f2;
setp.gt.s32 %p1, %r1, 0;
@%p1 bra SKIP;
st.global.f32 [%rd2+4], %f4;
SKIP:
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("dist_branch_both_arms", "mul before a branch, an add in each arm", """
mul.f32 %f20, %f1, %f2;
setp.gt.s32 %p1, %r1, 0;
@%p1 bra THEN;
add.f32 %f22, %f20, %f4;
st.global.f32 [%rd2+4], %f22;
bra.uni DONE;
THEN:
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
DONE:
""")
case("dist_mul_in_arm", "mul in one arm, add after the join (phi of product and other value)", """
mov.f32 %f20, %f4;
setp.gt.s32 %p1, %r1, 0;
@!%p1 bra SKIP;
mul.f32 %f20, %f1, %f2;
SKIP:
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("dist_mul_in_arm_add_in_arm", "mul and add in the same arm of a branch", """
setp.gt.s32 %p1, %r1, 0;
@!%p1 bra SKIP;
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
SKIP:
""")
case("dist_loop_mul_outside", "loop-invariant mul before a loop, add inside the loop", """
mul.f32 %f20, %f1, %f2;
mov.f32 %f21, %f3;
mov.u32 %r20, 0;
LOOP:
add.f32 %f21, %f21, %f20;
add.s32 %r20, %r20, 1;
setp.lt.s32 %p1, %r20, %r1;
@%p1 bra LOOP;
st.global.f32 [%rd2], %f21;
""")
case("dist_loop_both_inside", "mul and add in the loop body (accumulation)", """
mov.f32 %f21, %f3;
mov.f32 %f22, %f1;
mov.u32 %r20, 0;
LOOP:
mul.f32 %f20, %f22, %f2;
add.f32 %f21, %f21, %f20;
add.f32 %f22, %f22, %f4;
add.s32 %r20, %r20, 1;
setp.lt.s32 %p1, %r20, %r1;
@%p1 bra LOOP;
st.global.f32 [%rd2], %f21;
""")
case("dist_loop_mul_inside_add_after", "mul in the loop, add after it (last iteration's product)", """
mov.f32 %f22, %f1;
mov.u32 %r20, 0;
LOOP:
mul.f32 %f20, %f22, %f2;
add.f32 %f22, %f22, %f4;
add.s32 %r20, %r20, 1;
setp.lt.s32 %p1, %r20, %r1;
@%p1 bra LOOP;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("dist_loop_carried", "product of one iteration added in the next (loop-carried)", """
mov.f32 %f20, %f4;
mov.f32 %f21, %f3;
mov.f32 %f22, %f1;
mov.u32 %r20, 0;
LOOP:
add.f32 %f21, %f21, %f20;
mul.f32 %f20, %f22, %f2;
add.f32 %f22, %f22, %f5;
add.s32 %r20, %r20, 1;
setp.lt.s32 %p1, %r20, %r1;
@%p1 bra LOOP;
st.global.f32 [%rd2], %f21;
""")
case("dist_bar_sync", "bar.sync between mul and add", """
mul.f32 %f20, %f1, %f2;
bar.sync 0;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("dist_membar", "membar.gl and an atomic between mul and add", """
mul.f32 %f20, %f1, %f2;
membar.gl;
atom.global.add.u32 %r20, [%rd2+8], 1;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
st.global.u32 [%rd2+4], %r20;
""")
case("dist_mov", "product copied with mov.f32, the copy added", """
mul.f32 %f20, %f1, %f2;
mov.f32 %f22, %f20;
add.f32 %f21, %f22, %f3;
st.global.f32 [%rd2], %f21;
""")
case("dist_mov_b32", "product reinterpreted through mov.b32 to an integer register and back", """
mul.f32 %f20, %f1, %f2;
mov.b32 %r20, %f20;
mov.b32 %f22, %r20;
add.f32 %f21, %f22, %f3;
st.global.f32 [%rd2], %f21;
""")
case("dist_selp", "selp between the product and another value, then add", """
mul.f32 %f20, %f1, %f2;
setp.gt.s32 %p1, %r1, 0;
selp.f32 %f22, %f20, %f4, %p1;
add.f32 %f21, %f22, %f3;
st.global.f32 [%rd2], %f21;
""")
case("dist_selp_same", "selp of the product with itself", """
mul.f32 %f20, %f1, %f2;
setp.gt.s32 %p1, %r1, 0;
selp.f32 %f22, %f20, %f20, %p1;
add.f32 %f21, %f22, %f3;
st.global.f32 [%rd2], %f21;
""")
case("dist_redefined", "product register redefined after the add (non-SSA reuse)", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
mul.f32 %f20, %f4, %f5;
add.f32 %f22, %f20, %f6;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f22;
""")
case("dist_redefined_between", "the add's other operand redefined between mul and add", """
mul.f32 %f20, %f1, %f2;
add.f32 %f3, %f3, %f4;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("dist_multiplicand_redefined", "a multiplicand register redefined between mul and add", """
mov.f32 %f22, %f1;
mul.f32 %f20, %f22, %f2;
add.f32 %f22, %f22, %f4;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f22;
""")
case("dist_local", "product stored to .local and loaded back, then added", """
.local .align 4 .b8 buf[16];
mul.f32 %f20, %f1, %f2;
st.local.f32 [buf], %f20;
ld.local.f32 %f22, [buf];
add.f32 %f21, %f22, %f3;
st.global.f32 [%rd2], %f21;
""")
case("dist_shared_volatile", "product through a volatile .shared slot", """
.shared .align 4 .b8 sh[16];
mul.f32 %f20, %f1, %f2;
st.volatile.shared.f32 [sh], %f20;
ld.volatile.shared.f32 %f22, [sh];
add.f32 %f21, %f22, %f3;
st.global.f32 [%rd2], %f21;
""")
case("dist_shared", "product stored to .shared and loaded back (no barrier)", """
.shared .align 4 .b8 sh[16];
mul.f32 %f20, %f1, %f2;
st.shared.f32 [sh], %f20;
ld.shared.f32 %f22, [sh];
add.f32 %f21, %f22, %f3;
st.global.f32 [%rd2], %f21;
""")
case("pred_mul", "predicated mul (guard), unguarded add", """
mov.f32 %f20, %f4;
setp.gt.s32 %p1, %r1, 0;
@%p1 mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("pred_both_same", "mul and add under the same guard", """
mov.f32 %f21, %f4;
setp.gt.s32 %p1, %r1, 0;
@%p1 mul.f32 %f20, %f1, %f2;
@%p1 add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("pred_add", "unguarded mul, predicated add", """
mov.f32 %f21, %f4;
setp.gt.s32 %p1, %r1, 0;
mul.f32 %f20, %f1, %f2;
@%p1 add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("block_unused_label", "a label nobody branches to between mul and add", """
mul.f32 %f20, %f1, %f2;
UNUSED:
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("block_bra_next", "an unconditional bra to the very next label between mul and add", """
mul.f32 %f20, %f1, %f2;
bra.uni NEXT;
NEXT:
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("block_label_later_target", "a label between mul and add that a later branch targets (loop head)", """
mul.f32 %f20, %f1, %f2;
mov.u32 %r20, 0;
HEAD:
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
add.s32 %r20, %r20, 1;
setp.lt.s32 %p1, %r20, %r1;
@%p1 bra HEAD;
""")
case("block_cond_branch_out", "a conditional branch out (early exit) between mul and add", """
mul.f32 %f20, %f1, %f2;
setp.gt.s32 %p1, %r1, 0;
@%p1 bra OUT;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
OUT:
""")
case("block_membar_only", "membar.gl between mul and add", """
mul.f32 %f20, %f1, %f2;
membar.gl;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("block_fence_sc", "fence.sc.gpu between mul and add", """
mul.f32 %f20, %f1, %f2;
fence.sc.gpu;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("block_atom_only", "atom.global.add.u32 (result used) between mul and add", """
mul.f32 %f20, %f1, %f2;
atom.global.add.u32 %r20, [%rd2+8], %r1;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
st.global.u32 [%rd2+4], %r20;
""")
case("block_atom_const", "atom.global.add.u32 of a constant 1 (warp-aggregated by ptxas) between mul and add", """
mul.f32 %f20, %f1, %f2;
atom.global.add.u32 %r20, [%rd2+8], 1;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
st.global.u32 [%rd2+4], %r20;
""")
case("block_shfl", "shfl.sync between mul and add", """
mul.f32 %f20, %f1, %f2;
shfl.sync.bfly.b32 %r20, %r1, 1, 31, -1;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
st.global.u32 [%rd2+4], %r20;
""")
case("block_shfl_product", "the product itself goes through shfl.sync, the shuffled value is added", """
mul.f32 %f20, %f1, %f2;
mov.b32 %r21, %f20;
shfl.sync.bfly.b32 %r20, %r21, 1, 31, -1;
mov.b32 %f22, %r20;
add.f32 %f21, %f22, %f3;
st.global.f32 [%rd2], %f21;
""")
case("block_div_between", "div.rn.f32 (a called subroutine in SASS) between mul and add", """
mul.f32 %f20, %f1, %f2;
div.rn.f32 %f22, %f4, %f5;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f22;
""")

# --- constants -----------------------------------------------------------------------------
def _k(name, doc, body):
    case(name, doc, body + "st.global.f32 [%rd2], %f21;\n")
_k("const_mul_imm", "mul by an immediate (3.0), then add", "mul.f32 %f20, %f1, 0f40400000;\nadd.f32 %f21, %f20, %f3;\n")
_k("const_add_imm", "mul, then add of an immediate (3.0)", "mul.f32 %f20, %f1, %f2;\nadd.f32 %f21, %f20, 0f40400000;\n")
_k("const_both_imm", "mul by 3.0, add 5.0", "mul.f32 %f20, %f1, 0f40400000;\nadd.f32 %f21, %f20, 0f40A00000;\n")
_k("const_mul_two", "mul by 2.0, then add", "mul.f32 %f20, %f1, 0f40000000;\nadd.f32 %f21, %f20, %f3;\n")
_k("const_mul_two_alone", "mul by 2.0 alone", "mul.f32 %f21, %f1, 0f40000000;\n")
_k("const_mul_one", "mul by 1.0, then add", "mul.f32 %f20, %f1, 0f3F800000;\nadd.f32 %f21, %f20, %f3;\n")
_k("const_mul_one_alone", "mul by 1.0 alone (FMUL, MOV or nothing?)", "mul.f32 %f21, %f1, 0f3F800000;\n")
_k("const_mul_one_ftz_alone", "mul.ftz by 1.0 alone (flushes subnormals: must stay)", "mul.ftz.f32 %f21, %f1, 0f3F800000;\n")
_k("const_mul_negone_alone", "mul by -1.0 alone", "mul.f32 %f21, %f1, 0fBF800000;\n")
_k("const_mul_zero_alone", "mul by 0.0 alone", "mul.f32 %f21, %f1, 0f00000000;\n")
_k("const_mul_half", "mul by 0.5, then add", "mul.f32 %f20, %f1, 0f3F000000;\nadd.f32 %f21, %f20, %f3;\n")
_k("const_add_zero_alone", "add of +0.0 alone (x + 0 is not x for x = -0)", "add.f32 %f21, %f1, 0f00000000;\n")
_k("const_add_negzero_alone", "add of -0.0 alone (x + -0 is x)", "add.f32 %f21, %f1, 0f80000000;\n")
_k("const_sub_zero_alone", "sub of +0.0 alone (x - 0 is x)", "sub.f32 %f21, %f1, 0f00000000;\n")
_k("const_add_zero_after_mul", "mul, then add of +0.0", "mul.f32 %f20, %f1, %f2;\nadd.f32 %f21, %f20, 0f00000000;\n")
_k("const_add_negzero_after_mul", "mul, then add of -0.0", "mul.f32 %f20, %f1, %f2;\nadd.f32 %f21, %f20, 0f80000000;\n")
_k("const_fold_mul_mul", "(x * 3.0) * 5.0: folded to x * 15.0?", "mul.f32 %f20, %f1, 0f40400000;\nmul.f32 %f21, %f20, 0f40A00000;\n")
_k("const_fold_mul_mul_rn", "(x *rn 3.0) *rn 5.0", "mul.rn.f32 %f20, %f1, 0f40400000;\nmul.rn.f32 %f21, %f20, 0f40A00000;\n")
_k("const_fold_mul_pow2", "(x * 3.0) * 2.0", "mul.f32 %f20, %f1, 0f40400000;\nmul.f32 %f21, %f20, 0f40000000;\n")
_k("const_fold_add_add", "(x + 1.0) + 2.0: folded to x + 3.0?", "add.f32 %f20, %f1, 0f3F800000;\nadd.f32 %f21, %f20, 0f40000000;\n")
_k("const_fold_add_sub", "(x + 1.0) - 1.0: folded to x?", "add.f32 %f20, %f1, 0f3F800000;\nsub.f32 %f21, %f20, 0f3F800000;\n")
_k("const_fold_x_minus_x", "x - x (0, or NaN for inf/NaN)", "sub.f32 %f21, %f1, %f1;\n")
_k("const_fold_x_plus_x", "x + x", "add.f32 %f21, %f1, %f1;\n")
_k("const_fold_x_times_x_plus", "x*x + x", "mul.f32 %f20, %f1, %f1;\nadd.f32 %f21, %f20, %f1;\n")
_k("const_both_operands_imm", "3.0 * 5.0 + x: constant product", "mov.f32 %f22, 0f40400000;\nmul.f32 %f20, %f22, 0f40A00000;\nadd.f32 %f21, %f20, %f1;\n")
_k("const_inexact_product", "0.1 * 0.3 + x: constant product not exact in f32 (folded with which rounding?)", "mov.f32 %f22, 0f3DCCCCCD;\nmul.f32 %f20, %f22, 0f3E99999A;\nadd.f32 %f21, %f20, %f1;\n")
_k("const_inexact_fold_all", "0.1 * 0.3 + 0.7 all constant: folded as fma or as mul-then-add?", "mov.f32 %f22, 0f3DCCCCCD;\nmov.f32 %f23, 0f3F333333;\nmul.f32 %f20, %f22, 0f3E99999A;\nadd.f32 %f21, %f20, %f23;\n")
_k("const_fold_all_distinguishing", "(1+2^-12)*(1+2^-12) + -1.0 all constant: fused gives 2^-11+2^-24 (0x3A001000), unfused 2^-11 (0x3A000000)", "mov.f32 %f22, 0f3F800800;\nmov.f32 %f23, 0fBF800000;\nmul.f32 %f20, %f22, %f22;\nadd.f32 %f21, %f20, %f23;\n")
_k("const_fold_one_var", "(1+2^-12)*(1+2^-12) (constant product) + x", "mov.f32 %f22, 0f3F800800;\nmul.f32 %f20, %f22, %f22;\nadd.f32 %f21, %f20, %f1;\n")
_k("const_fold_mulconst_addconst_var", "x * (1+2^-12) + -1.0 (both constants, x variable)", "mul.f32 %f20, %f1, 0f3F800800;\nadd.f32 %f21, %f20, 0fBF800000;\n")
_k("const_fma_rn_all", "fma.rn of constants", "mov.f32 %f22, 0f3DCCCCCD;\nmov.f32 %f23, 0f3F333333;\nfma.rn.f32 %f21, %f22, 0f3E99999A, %f23;\n")
_k("const_mulrn_addrn_all", "mul.rn then add.rn of constants", "mov.f32 %f22, 0f3DCCCCCD;\nmov.f32 %f23, 0f3F333333;\nmul.rn.f32 %f20, %f22, 0f3E99999A;\nadd.rn.f32 %f21, %f20, %f23;\n")
_k("const_neg_mul", "neg then mul by constant: -x * 3", "neg.f32 %f22, %f1;\nmul.f32 %f21, %f22, 0f40400000;\n")
_k("const_mul_subnormal_ftz", "mul.ftz by a subnormal immediate", "mul.ftz.f32 %f20, %f1, 0f00000001;\nadd.ftz.f32 %f21, %f20, %f3;\n")
_k("const_sub_self_product", "a*b - a*b written as two muls (same operands)", "mul.f32 %f20, %f1, %f2;\nmul.f32 %f22, %f1, %f2;\nsub.f32 %f21, %f20, %f22;\n")
_k("const_div_by_pow2", "div.rn.f32 by 2.0 (becomes a multiply by 0.5?)", "div.rn.f32 %f21, %f1, 0f40000000;\n")
_k("const_div_by_pow2_then_add", "div.rn.f32 by 4.0, then add (a multiply that ptxas could fuse?)", "div.rn.f32 %f20, %f1, 0f40800000;\nadd.f32 %f21, %f20, %f3;\n")
_k("const_div_by_three", "div.rn.f32 by 3.0", "div.rn.f32 %f21, %f1, 0f40400000;\n")
_k("const_div_full_by_pow2_then_add", "div.full.f32 by 4.0, then add", "div.full.f32 %f20, %f1, 0f40800000;\nadd.f32 %f21, %f20, %f3;\n")
_k("const_div_approx_by_pow2_then_add", "div.approx.f32 by 4.0, then add", "div.approx.f32 %f20, %f1, 0f40800000;\nadd.f32 %f21, %f20, %f3;\n")
_k("const_mul_by_pow2_then_sub_rn", "mul by 4.0 (exact), sub.rn", "mul.f32 %f20, %f1, 0f40800000;\nsub.rn.f32 %f21, %f3, %f20;\n")

# --- division and other sequences whose last step is a multiply ------------------------------
_k("div_approx_var_then_add", "div.approx.f32 a/b (a * rcp.approx b), then add: is the final multiply contracted?", "div.approx.f32 %f20, %f1, %f2;\nadd.f32 %f21, %f20, %f3;\n")
_k("div_full_var_then_add", "div.full.f32 a/b, then add", "div.full.f32 %f20, %f1, %f2;\nadd.f32 %f21, %f20, %f3;\n")
_k("div_approx_three_then_add", "div.approx.f32 a/3.0, then add", "div.approx.f32 %f20, %f1, 0f40400000;\nadd.f32 %f21, %f20, %f3;\n")
_k("div_full_three_then_add", "div.full.f32 a/3.0, then add", "div.full.f32 %f20, %f1, 0f40400000;\nadd.f32 %f21, %f20, %f3;\n")
_k("div_approx_ftz_var_then_add_ftz", "div.approx.ftz.f32 a/b, then add.ftz", "div.approx.ftz.f32 %f20, %f1, %f2;\nadd.ftz.f32 %f21, %f20, %f3;\n")
_k("div_rn_var_then_add", "div.rn.f32 a/b, then add", "div.rn.f32 %f20, %f1, %f2;\nadd.f32 %f21, %f20, %f3;\n")
_k("rcp_approx_mul_add", "rcp.approx then mul.f32 then add.f32", "rcp.approx.f32 %f22, %f2;\nmul.f32 %f20, %f1, %f22;\nadd.f32 %f21, %f20, %f3;\n")
_k("mul_then_sqrt_approx", "mul.f32 feeding sqrt.approx (not an add)", "mul.f32 %f20, %f1, %f2;\nsqrt.approx.f32 %f21, %f20;\n")
_k("mul_then_ex2", "mul.f32 feeding ex2.approx (not an add)", "mul.f32 %f20, %f1, %f2;\nex2.approx.ftz.f32 %f21, %f20;\n")
_k("lg2_mul_add", "lg2.approx result multiplied then added", "lg2.approx.f32 %f22, %f1;\nmul.f32 %f20, %f22, %f2;\nadd.f32 %f21, %f20, %f3;\n")
_k("div_approx_then_sub", "c - div.approx(a, b)", "div.approx.f32 %f20, %f1, %f2;\nsub.f32 %f21, %f3, %f20;\n")
_k("div_f64_then_add", "div.rn.f64 then add.f64", "div.rn.f64 %fd20, %fd1, %fd2;\nadd.f64 %fd21, %fd20, %fd3;\nst.global.f64 [%rd2+8], %fd21;\nmov.f32 %f21, 0f00000000;\n")
_k("mad_lo_s32", "mad.lo.s32 and mul.lo+add.s32 (integer: exact either way)", "mad.lo.s32 %r20, %r1, %r2, %r3;\nmul.lo.s32 %r21, %r1, %r2;\nadd.s32 %r22, %r21, %r4;\nst.global.u32 [%rd2+4], %r20;\nst.global.u32 [%rd2+8], %r22;\nmov.f32 %f21, 0f00000000;\n")
_k("fma_chain", "fma.rn chain: reassociated or fused further?", "fma.rn.f32 %f20, %f1, %f2, %f3;\nfma.rn.f32 %f22, %f4, %f5, %f20;\nmul.rn.f32 %f23, %f22, %f6;\nadd.rn.f32 %f21, %f23, %f7;\n")
_k("fma_then_add", "fma.rn.f32 result added (add.f32): nothing to contract", "fma.rn.f32 %f20, %f1, %f2, %f3;\nadd.f32 %f21, %f20, %f4;\n")
_k("mul_fma_addend_contract", "mul.f32 as addend of fma.rn.f32 (single use)", "mul.f32 %f20, %f1, %f2;\nfma.rn.f32 %f21, %f4, %f5, %f20;\n")
_k("sub_neg_zero", "sub of product from -0.0 and from +0.0", "mul.f32 %f20, %f1, %f2;\nsub.f32 %f21, 0f80000000, %f20;\n")
_k("sub_pos_zero", "0.0 - a*b (fma(-a,b,0) differs from -(ab) only for sign of zero)", "mul.f32 %f20, %f1, %f2;\nsub.f32 %f21, 0f00000000, %f20;\n")
case("cross_block_use", "mul used by an add in its block and by an add in a later block", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
setp.gt.s32 %p1, %r1, 0;
@%p1 bra SKIP;
st.global.f32 [%rd2+8], %f5;
SKIP:
add.f32 %f22, %f20, %f4;
st.global.f32 [%rd2+4], %f22;
""")
case("cross_block_use_single_first", "mul used by an add in its block (single other use in a later block is a store)", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
setp.gt.s32 %p1, %r1, 0;
@%p1 bra SKIP;
st.global.f32 [%rd2+4], %f20;
SKIP:
""")
case("cross_block_two_products", "add(p, q) where p is from an earlier block and q from this block", """
mul.f32 %f20, %f1, %f2;
setp.gt.s32 %p1, %r1, 0;
@%p1 bra SKIP;
st.global.f32 [%rd2+8], %f5;
SKIP:
mul.f32 %f21, %f3, %f4;
add.f32 %f22, %f20, %f21;
st.global.f32 [%rd2], %f22;
""")


# --- calls and .param ----------------------------------------------------------------------
def _callcase(name, doc, func, body):
    """A kernel with a .func beside it (the func's name is prefixed with the case's)."""
    case(name, doc, body, extra=func)


_callcase("call_between", "a call of an unrelated .func between mul and add",
    """.func (.param .b32 {n}_r) {n}_f(.param .b32 {n}_a)
{{
	.reg .b32 %t<4>;
	ld.param.b32 %t1, [{n}_a];
	mul.lo.s32 %t2, %t1, %t1;
	st.param.b32 [{n}_r], %t2;
	ret;
}}
""".format(n="call_between"), """
mul.f32 %f20, %f1, %f2;
{
.param .b32 pa;
.param .b32 pr;
st.param.b32 [pa], %r1;
call.uni (pr), call_between_f, (pa);
ld.param.b32 %r20, [pr];
}
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
st.global.u32 [%rd2+4], %r20;
""")
_callcase("call_product_param", "the product passed to a .func that adds it (.param in, .param out)",
    """.func (.param .b32 {n}_r) {n}_f(.param .b32 {n}_a, .param .b32 {n}_b)
{{
	.reg .f32 %t<4>;
	ld.param.f32 %t1, [{n}_a];
	ld.param.f32 %t2, [{n}_b];
	add.f32 %t3, %t1, %t2;
	st.param.f32 [{n}_r], %t3;
	ret;
}}
""".format(n="call_product_param"), """
mul.f32 %f20, %f1, %f2;
{
.param .b32 pa;
.param .b32 pb;
.param .b32 pr;
st.param.f32 [pa], %f20;
st.param.f32 [pb], %f3;
call.uni (pr), call_product_param_f, (pa, pb);
ld.param.f32 %f21, [pr];
}
st.global.f32 [%rd2], %f21;
""")
_callcase("call_returns_product", "a .func returns a*b, the caller adds",
    """.func (.param .b32 {n}_r) {n}_f(.param .b32 {n}_a, .param .b32 {n}_b)
{{
	.reg .f32 %t<4>;
	ld.param.f32 %t1, [{n}_a];
	ld.param.f32 %t2, [{n}_b];
	mul.f32 %t3, %t1, %t2;
	st.param.f32 [{n}_r], %t3;
	ret;
}}
""".format(n="call_returns_product"), """
{
.param .b32 pa;
.param .b32 pb;
.param .b32 pr;
st.param.f32 [pa], %f1;
st.param.f32 [pb], %f2;
call.uni (pr), call_returns_product_f, (pa, pb);
ld.param.f32 %f20, [pr];
}
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")



# --- what may stand between the mul and the add: one case per instruction --------------------
# (a mul, the instruction, then an add of the product: fused unless the instruction
# splits a region)
BETWEEN = {
    'div.u32': 'div.u32 %r30, %r1, %r2; st.global.u32 [%rd2+8], %r30;',
    'rem.s32': 'rem.s32 %r30, %r1, %r2; st.global.u32 [%rd2+8], %r30;',
    'div.s32 by 7': 'div.s32 %r30, %r1, 7; st.global.u32 [%rd2+8], %r30;',
    'div.u64': 'cvt.u64.u32 %rd20, %r1; cvt.u64.u32 %rd21, %r2; div.u64 %rd22, %rd20, %rd21; st.global.u64 [%rd2+8], %rd22;',
    'rem.u64': 'cvt.u64.u32 %rd20, %r1; cvt.u64.u32 %rd21, %r2; rem.u64 %rd22, %rd20, %rd21; st.global.u64 [%rd2+8], %rd22;',
    'rcp.rn.ftz.f32': 'rcp.rn.ftz.f32 %f30, %f4; st.global.f32 [%rd2+8], %f30;',
    'sqrt.rn.ftz.f32': 'sqrt.rn.ftz.f32 %f30, %f4; st.global.f32 [%rd2+8], %f30;',
    'div.rz.f32': 'div.rz.f32 %f30, %f4, %f5; st.global.f32 [%rd2+8], %f30;',
    'div.full.ftz.f32': 'div.full.ftz.f32 %f30, %f4, %f5; st.global.f32 [%rd2+8], %f30;',
    'rcp.approx.ftz.f64': 'rcp.approx.ftz.f64 %fd30, %fd1; st.global.f64 [%rd2+8], %fd30;',
    'cvt.rn.f32.f64': 'cvt.rn.f32.f64 %f30, %fd1; st.global.f32 [%rd2+8], %f30;',
    'cvt.rzi.s64.f64': 'cvt.rzi.s64.f64 %rd20, %fd1; st.global.u64 [%rd2+8], %rd20;',
    'cvt.rn.f32.s64': 'cvt.s64.s32 %rd20, %r1; cvt.rn.f32.s64 %f30, %rd20; st.global.f32 [%rd2+8], %f30;',
    'popc/clz/brev': 'popc.b32 %r30, %r1; clz.b32 %r31, %r30; brev.b32 %r32, %r31; st.global.u32 [%rd2+8], %r32;',
    'mul.hi.s64': 'cvt.s64.s32 %rd20, %r1; mul.hi.s64 %rd21, %rd20, %rd20; st.global.u64 [%rd2+8], %rd21;',
    'min/max f32': 'min.f32 %f30, %f4, %f5; max.f32 %f31, %f30, %f6; st.global.f32 [%rd2+8], %f31;',
    'f16 mul.rn': 'mul.rn.f16 %h30, %h1, %h2; st.global.b16 [%rd2+8], %h30;',
    'ld.param (kernel)': 'ld.param.u64 %rd20, [between_ld_param_kernel_out]; st.global.u64 [%rd2+8], %rd20;',
    'bra.uni to next': 'bra.uni NXT;\nNXT:',
    'mov %tid.x': 'mov.u32 %r30, %tid.x; st.global.u32 [%rd2+8], %r30;',
    'st.local+ld.local': '.local .align 4 .b8 lb[8];\nst.local.u32 [lb], %r1; ld.local.u32 %r30, [lb]; st.global.u32 [%rd2+8], %r30;',
    'fma.rn.f32': 'fma.rn.f32 %f30, %f4, %f5, %f6; st.global.f32 [%rd2+8], %f30;',
    'mul.f64+add.f64 (contractable)': 'mul.f64 %fd30, %fd1, %fd2; add.f64 %fd31, %fd30, %fd3; st.global.f64 [%rd2+8], %fd31;',
    'div.rn.f32': 'div.rn.f32 %f30, %f4, %f5; st.global.f32 [%rd2+8], %f30;',
    'div.full.f32': 'div.full.f32 %f30, %f4, %f5; st.global.f32 [%rd2+8], %f30;',
    'div.approx.f32': 'div.approx.f32 %f30, %f4, %f5; st.global.f32 [%rd2+8], %f30;',
    'div.rn.ftz.f32': 'div.rn.ftz.f32 %f30, %f4, %f5; st.global.f32 [%rd2+8], %f30;',
    'div.rn.f64': 'div.rn.f64 %fd30, %fd1, %fd2; st.global.f64 [%rd2+8], %fd30;',
    'rcp.rn.f32': 'rcp.rn.f32 %f30, %f4; st.global.f32 [%rd2+8], %f30;',
    'rcp.approx.f32': 'rcp.approx.f32 %f30, %f4; st.global.f32 [%rd2+8], %f30;',
    'rcp.rn.f64': 'rcp.rn.f64 %fd30, %fd1; st.global.f64 [%rd2+8], %fd30;',
    'sqrt.rn.f32': 'sqrt.rn.f32 %f30, %f4; st.global.f32 [%rd2+8], %f30;',
    'sqrt.approx.f32': 'sqrt.approx.f32 %f30, %f4; st.global.f32 [%rd2+8], %f30;',
    'sqrt.rn.f64': 'sqrt.rn.f64 %fd30, %fd1; st.global.f64 [%rd2+8], %fd30;',
    'rsqrt.approx.f32': 'rsqrt.approx.f32 %f30, %f4; st.global.f32 [%rd2+8], %f30;',
    'ex2.approx.f32': 'ex2.approx.f32 %f30, %f4; st.global.f32 [%rd2+8], %f30;',
    'div.s32': 'div.s32 %r30, %r1, %r2; st.global.u32 [%rd2+8], %r30;',
    'rem.u32': 'rem.u32 %r30, %r1, %r2; st.global.u32 [%rd2+8], %r30;',
    'div.s64': 'cvt.s64.s32 %rd20, %r1; cvt.s64.s32 %rd21, %r2; div.s64 %rd22, %rd20, %rd21; st.global.u64 [%rd2+8], %rd22;',
    'cvt.rni.s32.f32': 'cvt.rni.s32.f32 %r30, %f4; st.global.u32 [%rd2+8], %r30;',
    'cvt.f64.f32': 'cvt.f64.f32 %fd30, %f4; st.global.f64 [%rd2+8], %fd30;',
    'membar.cta': 'membar.cta;',
    'membar.gl': 'membar.gl;',
    'membar.sys': 'membar.sys;',
    'fence.acq_rel.gpu': 'fence.acq_rel.gpu;',
    'bar.sync': 'bar.sync 0;',
    'barrier.sync.aligned': 'barrier.sync.aligned 0;',
    'bar.arrive': 'bar.arrive 1, 64;',
    'bar.red.popc': 'setp.ne.s32 %p2, %r1, 0; bar.red.popc.u32 %r30, 0, %p2; st.global.u32 [%rd2+8], %r30;',
    'vote.sync.ballot': 'setp.ne.s32 %p2, %r1, 0; vote.sync.ballot.b32 %r30, %p2, -1; st.global.u32 [%rd2+8], %r30;',
    'activemask': 'activemask.b32 %r30; st.global.u32 [%rd2+8], %r30;',
    'match.any': 'match.any.sync.b32 %r30, %r1, -1; st.global.u32 [%rd2+8], %r30;',
    'redux.sync.add': 'redux.sync.add.u32 %r30, %r1, -1; st.global.u32 [%rd2+8], %r30;',
    'red.global.add.f32': 'red.global.add.f32 [%rd2+8], %f4;',
    'atom.global.cas': 'atom.global.cas.b32 %r30, [%rd2+8], %r1, %r2; st.global.u32 [%rd2+12], %r30;',
    'atom.shared.add': '.shared .align 4 .b8 sh[16];\natom.shared.add.u32 %r30, [sh], %r1; st.global.u32 [%rd2+8], %r30;',
    'nanosleep': 'nanosleep.u32 100;',
    'ld.volatile.global': 'ld.volatile.global.f32 %f30, [%rd1+60]; st.global.f32 [%rd2+8], %f30;',
    'st.volatile.global': 'st.volatile.global.f32 [%rd2+8], %f4;',
    'ld.acquire.gpu': 'ld.acquire.gpu.global.u32 %r30, [%rd1+160]; st.global.u32 [%rd2+8], %r30;',
    'st.release.gpu': 'st.release.gpu.global.u32 [%rd2+8], %r1;',
    'clock64': 'mov.u64 %rd20, %clock64; st.global.u64 [%rd2+8], %rd20;',
    'globaltimer': 'mov.u64 %rd20, %globaltimer; st.global.u64 [%rd2+8], %rd20;',
    'trap-guarded': 'setp.eq.s32 %p2, %r1, 12345; @%p2 trap;',
    'exit-guarded': 'setp.eq.s32 %p2, %r1, 12345; @%p2 exit;',
    'ret-guarded': 'setp.eq.s32 %p2, %r1, 12345; @%p2 ret;',
    'prefetch': 'prefetch.global.L2 [%rd1];',
    'cp.async+wait': '.shared .align 16 .b8 sh[16];\ncp.async.ca.shared.global [sh], [%rd1], 4; cp.async.wait_all;',
    'tanh.approx': 'tanh.approx.f32 %f30, %f4; st.global.f32 [%rd2+8], %f30;',
    'mul.wide': 'mul.wide.s32 %rd20, %r1, %r2; st.global.u64 [%rd2+8], %rd20;',
    'brkpt-guarded': 'setp.eq.s32 %p2, %r1, 12345; @%p2 brkpt;',
    'setp+selp': 'setp.gt.f32 %p2, %f4, %f5; selp.f32 %f30, %f4, %f5, %p2; st.global.f32 [%rd2+8], %f30;',
    'testp': 'testp.finite.f32 %p2, %f4; selp.u32 %r30, 1, 0, %p2; st.global.u32 [%rd2+8], %r30;',
    'f64 mul.rn+add.rn': 'mul.rn.f64 %fd30, %fd1, %fd2; add.rn.f64 %fd31, %fd30, %fd3; st.global.f64 [%rd2+8], %fd31;',
    'sin.approx': 'sin.approx.f32 %f30, %f4; st.global.f32 [%rd2+8], %f30;',
    'lg2.approx': 'lg2.approx.f32 %f30, %f4; st.global.f32 [%rd2+8], %f30;',
    'cvt.rn.f16.f32': 'cvt.rn.f16.f32 %h30, %f4; st.global.b16 [%rd2+8], %h30;',
    'div.s16': 'cvt.u16.u32 %rs20, %r1; cvt.u16.u32 %rs21, %r2; div.s16 %rs22, %rs20, %rs21; st.global.u16 [%rd2+8], %rs22;',
    'div.u16': 'cvt.u16.u32 %rs20, %r1; cvt.u16.u32 %rs21, %r2; div.u16 %rs22, %rs20, %rs21; st.global.u16 [%rd2+8], %rs22;',
    'rem.s16': 'cvt.u16.u32 %rs20, %r1; cvt.u16.u32 %rs21, %r2; rem.s16 %rs22, %rs20, %rs21; st.global.u16 [%rd2+8], %rs22;',
    'div.s32 by 8': 'div.s32 %r30, %r1, 8; st.global.u32 [%rd2+8], %r30;',
    'rem.s32 by 7': 'rem.s32 %r30, %r1, 7; st.global.u32 [%rd2+8], %r30;',
    'div.u32 by 7': 'div.u32 %r30, %r1, 7; st.global.u32 [%rd2+8], %r30;',
    'div.u64 by 7': 'cvt.u64.u32 %rd20, %r1; div.u64 %rd22, %rd20, 7; st.global.u64 [%rd2+8], %rd22;',
    'div.s64 by 8': 'cvt.s64.s32 %rd20, %r1; div.s64 %rd22, %rd20, 8; st.global.u64 [%rd2+8], %rd22;',
    'sqrt.approx.ftz.f32': 'sqrt.approx.ftz.f32 %f30, %f4; st.global.f32 [%rd2+8], %f30;',
    'sin.approx.ftz': 'sin.approx.ftz.f32 %f30, %f4; st.global.f32 [%rd2+8], %f30;',
    'div.rn.f32 by const 2': 'div.rn.f32 %f30, %f4, 0f40000000; st.global.f32 [%rd2+8], %f30;',
    'rcp.rn.f32 of const': 'mov.f32 %f31, 0f40400000; rcp.rn.f32 %f30, %f31; st.global.f32 [%rd2+8], %f30;',
}
for _k, _v in BETWEEN.items():
    _n = 'between_' + re.sub(r'[^a-z0-9]+', '_', _k.lower()).strip('_')
    case(_n, f'mul, then {_k}, then the add', '.reg .b16 %rs<40>;\nmul.f32 %f20, %f1, %f2;\n' + _v.replace('; ', ';\n').replace('\\n', '\n') + '\nadd.f32 %f21, %f20, %f3;\nst.global.f32 [%rd2], %f21;\n')

# --- findings from random programs ---------------------------------------------------------
case("imm_mul_across_membar", "x*3.0 (one register, one immediate) before membar, add after: fused (x*imm ignores regions)", """
mul.f32 %f20, %f1, 0f40400000;
membar.cta;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("imm_mul_into_loop", "loop-invariant x*0.5 before a loop, added in the loop: fused inside the loop", """
mul.f32 %f20, %f1, 0f3F000000;
mov.f32 %f21, %f3;
mov.u32 %r20, 0;
LOOP:
add.f32 %f21, %f21, %f20;
add.s32 %r20, %r20, 1;
setp.lt.s32 %p1, %r20, %r1;
@%p1 bra LOOP;
st.global.f32 [%rd2], %f21;
""")
case("imm_mul_two_blocks", "x*3.0 added in both arms of a branch: fused in both", """
mul.f32 %f20, %f1, 0f40400000;
setp.gt.s32 %p1, %r1, 0;
@%p1 bra THEN;
add.f32 %f22, %f20, %f4;
st.global.f32 [%rd2+4], %f22;
bra.uni DONE;
THEN:
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
DONE:
""")
case("imm_mul_other_block_and_store", "x*3.0 stored and added after a membar: not fused (a non-add use)", """
mul.f32 %f20, %f1, 0f40400000;
st.global.f32 [%rd2+8], %f20;
membar.cta;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("imm_from_ld_const", "x*c where c is loaded from .const: not an immediate, stays in its region", """
.const .align 4 .f32 imm_from_ld_const_c = 0f40400000;
ld.const.f32 %f22, [imm_from_ld_const_c];
mul.f32 %f20, %f1, %f22;
membar.cta;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("xx_across_membar", "x*x (one register twice) across membar: not fused", """
mul.f32 %f20, %f1, %f1;
membar.cta;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("early_cse_add_other_region", "the same add in a later region is merged into the first before contracting, so p has one use", """
mul.f32 %f20, %f1, %f2;
add.f32 %f23, %f20, %f4;
st.global.f32 [%rd2+4], %f23;
setp.gt.s32 %p1, %r1, 0;
@%p1 bra SKIP;
st.global.f32 [%rd2+12], %f6;
SKIP:
add.f32 %f22, %f20, %f4;
st.global.f32 [%rd2], %f22;
""")
case("late_cse_add_same_region", "add(p,q) and add(q,p) in one region are merged after contracting: q's use counts stay 3", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f3, %f4;
sub.f32 %f22, %f21, %f5;
add.f32 %f23, %f20, %f21;
add.f32 %f24, %f21, %f20;
st.global.f32 [%rd2], %f22;
st.global.f32 [%rd2+4], %f23;
st.global.f32 [%rd2+8], %f24;
""")
case("early_cse_mul_not_merged", "identical muls in two regions are not merged: the second is fused in its own region", """
mul.f32 %f20, %f1, %f2;
st.global.f32 [%rd2+4], %f20;
membar.cta;
mul.f32 %f21, %f1, %f2;
add.f32 %f22, %f21, %f3;
st.global.f32 [%rd2], %f22;
""")
case("early_cse_neg_not_seen", "sub(q, r) and add(neg r, q) in two regions: not merged early (neg is still an instruction)", """
mul.f32 %f23, %f4, %f7;
mul.f32 %f24, %f3, %f6;
sub.f32 %f25, %f23, %f24;
membar.cta;
neg.f32 %f27, %f24;
add.f32 %f28, %f27, %f23;
st.global.f32 [%rd2], %f25;
st.global.f32 [%rd2+4], %f28;
""")
case("dead_mul_use", "a use of the product by dead code does not count", """
mul.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
mul.f32 %f22, %f20, %f4;
st.global.f32 [%rd2], %f21;
""")
case("m2_fold", "(a*b)*2.0, the product used only there: one FMUL.M2 (one rounding?)", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f20, 0f40000000;
st.global.f32 [%rd2], %f21;
""")
case("m2_fold_rn_outer", "(a*b) *rn 0.25: FMUL.D4", """
mul.f32 %f20, %f1, %f2;
mul.rn.f32 %f21, %f20, 0f3E800000;
st.global.f32 [%rd2], %f21;
""")
case("m2_fold_ftz_inner_dropped", "(a *ftz b) * 2.0: FMUL.M2 without .FTZ (the inner .ftz is lost)", """
mul.ftz.f32 %f20, %f1, %f2;
mul.f32 %f21, %f20, 0f40000000;
st.global.f32 [%rd2], %f21;
""")
case("m2_fold_sat_outer", "(a*b) *sat 2.0: FMUL.M2.SAT", """
mul.f32 %f20, %f1, %f2;
mul.sat.f32 %f21, %f20, 0f40000000;
st.global.f32 [%rd2], %f21;
""")
case("m2_no_fold_16", "(a*b) * 16.0: no scale modifier that large, two FMULs", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f20, 0f41800000;
st.global.f32 [%rd2], %f21;
""")
case("m2_no_fold_neg2", "(a*b) * -2.0: two FMULs", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f21, %f20, 0fC0000000;
st.global.f32 [%rd2], %f21;
""")
case("m2_no_fold_rn_inner", "(a *rn b) * 2.0: two FMULs", """
mul.rn.f32 %f20, %f1, %f2;
mul.f32 %f21, %f20, 0f40000000;
st.global.f32 [%rd2], %f21;
""")
case("m2_contraction_first", "(a*b)*2.0 + c: the *2 product is fused (FFMA p, 2, c), no FMUL.M2", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f22, %f20, 0f40000000;
add.f32 %f21, %f22, %f3;
st.global.f32 [%rd2], %f21;
""")
case("m2_fold_div_approx", "div.approx(a, b) * 2.0: FMUL.M2 of rcp and a", """
div.approx.f32 %f20, %f1, %f2;
mul.f32 %f21, %f20, 0f40000000;
st.global.f32 [%rd2], %f21;
""")
case("div_approx_used_twice", "div.approx used by add and stored: its multiply stays (FMUL), the add is FADD", """
div.approx.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f20;
""")
case("div_approx_two_adds", "div.approx used by two adds: fused into both", """
div.approx.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
add.f32 %f22, %f20, %f4;
st.global.f32 [%rd2], %f21;
st.global.f32 [%rd2+4], %f22;
""")
case("div_approx_ftz_mismatch", "div.approx.ftz then add.f32: not fused", """
div.approx.ftz.f32 %f20, %f1, %f2;
add.f32 %f21, %f20, %f3;
st.global.f32 [%rd2], %f21;
""")
case("div_approx_vs_mul", "add(div.approx, mul), both single use: the first operand (the division) is fused", """
div.approx.f32 %f20, %f1, %f2;
mul.f32 %f22, %f4, %f5;
add.f32 %f21, %f20, %f22;
st.global.f32 [%rd2], %f21;
""")
case("same_product_neg_add", "add(-(a*b), b*a) written as two multiplies: fused like a - a", """
mul.f32 %f20, %f1, %f2;
mul.f32 %f22, %f2, %f1;
neg.f32 %f23, %f20;
add.f32 %f21, %f23, %f22;
st.global.f32 [%rd2], %f21;
""")
case("mul_one_ftz_in_add", "mul.ftz x, 1.0 is x for the contraction: add.ftz(x*1, c*d) fuses c*d", """
mul.ftz.f32 %f20, %f1, 0f3F800000;
mul.ftz.f32 %f22, %f4, %f5;
add.ftz.f32 %f21, %f20, %f22;
st.global.f32 [%rd2], %f21;
""")
case("f16_packing", "two independent f16 multiplies packed into one HMUL2 by ptxas (line info names one of them)", """
mul.f16 %h20, %h1, %h2;
mul.f16 %h21, %h3, %h4;
st.global.b16 [%rd2], %h20;
st.global.b16 [%rd2+2], %h21;
""")
case("f16x2_add_on_fma_pipe", "f16x2 add written by ptxas as HFMA2.MMA a, 1, 1, b (an add)", """
add.f16x2 %r20, %r1, %r2;
add.f16x2 %r21, %r2, %r1;
st.global.b32 [%rd2], %r20;
st.global.b32 [%rd2+4], %r21;
""")

# --- cases the rule does not explain (kept so that a better rule can be checked) ---------------
case("unexplained_membar_partial", "UNEXPLAINED: g; membar; p; A=add(e,p); C=add(p,g); membar; B=add(e2,p); membar: ptxas fuses p into A (rule: not)", """
mul.f32 %f22, %f5, %f6;
membar.cta;
mul.f32 %f20, %f1, %f2;
add.f32 %f23, %f3, %f20;
add.f32 %f24, %f20, %f22;
membar.cta;
add.f32 %f25, %f7, %f20;
membar.cta;
st.global.f32 [%rd2], %f23;
st.global.f32 [%rd2+4], %f24;
st.global.f32 [%rd2+8], %f25;
""", unexplained=True)
import fuzz as _fuzz  # noqa: E402  (the random program this case comes from)

case("unexplained_ftz_partial", "UNEXPLAINED (fuzz.py seed 272, f32, no membar): %f23 is used by add.f32 (line 43) and add.ftz.f32 (line 47); ptxas fuses it into the add.f32 and keeps the FMUL for the other (rule: no fusion; compare use_two_adds_ftz_mismatch)",
     _fuzz.gen(272, "f32", False), unexplained=True)
case("unexplained_membar_cse", "UNEXPLAINED (fuzz.py seed 1050, f64): products used on both sides of membar.cta; ptxas fuses the sub on line 39 and does not merge the equal add on line 43 into it",
     _fuzz.gen(1050, "f64"), unexplained=True)
